# memscope: a memory profiler for Linux C and C++ programs.
#
#   make            build libmsc.a, the tools, libmemscope.so, the examples and
#                   the other programs the tests run
#   make check      install missing packages, build, run every test
#   make check-sanitize  the same tests, the tools built with ASan and UBSan
#   make fuzz       each fuzz target FUZZ_TIME seconds (default 60) under libFuzzer
#   make stress     the long stress run (30 s of threads, 1 GiB of records)
#   make demo       install missing packages, build, run the main pipeline
#   make bench      compare with heaptrack and valgrind (installs them)
#   make install    PREFIX=/usr/local DESTDIR=  (tools, libmemscope.so, memscope.h
#                   with its pkg-config file memscope.pc, man pages)
#   make uninstall  the same PREFIX and DESTDIR: removes what install put there
#   make screenshot ms-report --html and --svg drawn by headless Chromium
#                   (installs it): PNGs in tests/bench/out/pictures, and
#                   their scripts checked in the browser
#   make pictures   the same, and the README's examples/pictures/*.png
#
# Options: V=1 shows commands, DEVELOPER=1 turns warnings into errors,
# SANITIZE=address,undefined builds everything with sanitizers but the shim:
# it runs inside the profiled program, where a sanitizer runtime would
# replace malloc itself and load libstdc++ into C programs.
#
# Adding a tool: tools/ms-NAME.c, add NAME to TOOLS below, man/ms-NAME.1,
# and an end-to-end test tests/e2e/tNNNN-ms-NAME-*.sh; the help/man test
# (t0000) then checks that --help and the man page list the same options.
# A tool with a UI has a folder, tools/ms-NAME/, built into
# tools/ms-NAME/ms-NAME by a rule of its own (see ms-top below); the tests
# find it on their PATH (tests/e2e/lib.sh).

VERSION = 0.1.0
PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib/memscope
INCDIR = $(PREFIX)/include
MANDIR = $(PREFIX)/share/man
# memscope.pc describes a header only (no library to link): arch-independent.
PKGCONFIGDIR = $(PREFIX)/share/pkgconfig

CC ?= cc
CFLAGS ?= -O2 -g
WARN = -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wpointer-arith -Wno-missing-field-initializers
ifeq ($(DEVELOPER),1)
WARN += -Werror
endif
BASE_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) -MMD -MP $(LIBMSC_INC)
SAN_CFLAGS =
ifneq ($(SANITIZE),)
SAN_CFLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(SAN_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SAN_CFLAGS) $(LDFLAGS)

ifneq ($(V),1)
Q = @
QUIET_CC = @echo "  CC      $@";
QUIET_AR = @echo "  AR      $@";
QUIET_LINK = @echo "  LINK    $@";
endif

TOOLS = ms-snap ms-diff ms-record ms-filter ms-report
# libmsc's stages, bottom first: a stage's files use only the stages below
# it (and proto/, the wire protocol the shim shares); make check-layers
# checks the includes and the symbols.
LIBMSC_STAGES = base io format procfs agg record analyze render cli
LIBMSC_base = arena err util fsafe hash
LIBMSC_io = ndjson ndjson_read ndjson_jval zst
LIBMSC_agg = agg agg_pools agg_regions agg_leaks agg_hold agg_errors agg_top scan scan_index scan_read
LIBMSC_format = format stream wrappers
LIBMSC_procfs = proc snap poll
LIBMSC_record = sym sym_dwarf sym_debuginfo stacks collect collect_clock collect_maps collect_poll \
		collect_setup collect_session records freeze live inject inject_stop inject_elf recorder \
		recorder_attach recorder_live timeline run
LIBMSC_analyze = filter filter_hold filter_match report report_stacks report_records diff_load \
		diff
LIBMSC_render = pprof render_model render_text render_text_sections render_text_sites render_text_diff render_json \
		render_flame render_html render_html_chart render_html_time render_pprof render
LIBMSC_cli = cli recfile record
LIBMSC_MODS = $(foreach s,$(LIBMSC_STAGES),$(addprefix $(s)/,$(LIBMSC_$(s))))
LIBMSC_INC = -Ilibmsc/proto $(addprefix -Ilibmsc/,$(LIBMSC_STAGES))
LIBMSC_OBJS = $(addprefix libmsc/,$(addsuffix .o,$(LIBMSC_MODS)))
LIBMSC = libmsc/libmsc.a
TOOL_BINS = $(addprefix tools/,$(TOOLS))
# libunwind-ptrace: attach unwinds the stopped thread to find a safe point.
MSC_LIBS = -ljansson -ldw -lelf -lunwind-ptrace -lunwind-generic -lzstd -lz -lm
TOOL_LIBS = $(LIBMSC) $(MSC_LIBS)
# ms-top, the tool with a screen: ncurses with wide characters.
TOP_OBJS = $(addprefix tools/ms-top/,$(addsuffix .o,main sample heap inspect batch ui draw view util))
TOP_BIN = tools/ms-top/ms-top
CURSES_LIBS = $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo)

EXAMPLES = memhog leaky threads forkexec crash cxx memerr churn pool pools wordfreq handoff twosites closeall ticker waiters dtv pages samplemix jitframes stale
# Distribution binaries come without line information, often stripped.
EXAMPLE_BINS = $(addprefix examples/bin/,$(EXAMPLES)) examples/bin/twosites-nodebug \
	       examples/bin/twosites-stripped examples/bin/libpools.so examples/bin/pools-hook \
	       $(addprefix examples/bin/thirdparty-,$(THIRDPARTY))
# examples/thirdparty.c, once per allocator, linked with its Debian package's
# library (by file name: the runtime packages have no -dev symlink).
THIRDPARTY = jemalloc mimalloc tcmalloc
THIRDPARTY_LIB_jemalloc = libjemalloc.so.2
THIRDPARTY_LIB_mimalloc = libmimalloc.so.2
THIRDPARTY_LIB_tcmalloc = libtcmalloc_minimal.so.4

SHIM = shim/libmemscope.so
SHIM_OBJS = shim/entry.o shim/hooks.o shim/maps.o shim/custom.o shim/exits.o shim/session.o \
	    shim/rings.o shim/aslimit.o shim/threads.o shim/resolve.o shim/modules.o shim/unwind.o \
	    shim/dwarf.o shim/unwind_setup.o shim/dlclose.o shim/got.o shim/attach.o shim/sample.o
# Hooks pass their own frame address to the recorder: they need frame
# pointers and must not become sibling calls.  TLS stays initial-exec (no
# malloc on first access), symbols hidden unless exported on purpose.  Of
# libmsc the shim sees only the wire protocol (libmsc/proto/msc_proto.h):
# nothing that allocates can creep in through an include.
SHIM_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) -MMD -MP -Ilibmsc/proto -fPIC -fvisibility=hidden \
	      -ftls-model=initial-exec -fno-omit-frame-pointer -fno-optimize-sibling-calls \
	      -O2 -g
# Except entry.c's: they jump to the full hooks, with no frame of their own
# (shim/entry.c says why).
shim/entry.o: SHIM_CFLAGS += -foptimize-sibling-calls -fomit-frame-pointer

# Stress workloads (tests/stress/), plain -O2 -g like the examples.
STRESS_BINS = tests/stress/bin/stress tests/stress/bin/stress_cxx tests/stress/bin/genstream
# The bench's workloads an end-to-end test runs too (t0300: the leak scan
# of a large heap in several threads): made by make, so that a test run
# by hand after it finds them.
E2E_BENCH_BINS = tests/bench/bin/live_heap

UNIT_TESTS = $(patsubst tests/unit/%.c,tests/unit/bin/%,$(wildcard tests/unit/test_*.c))
BENCH_BINS = tests/bench/bin/rec_bench tests/bench/bin/sym_bench tests/bench/bin/alloc_storm \
             tests/bench/bin/cxx_storm tests/bench/bin/attach_target \
             tests/bench/bin/peakmem tests/bench/bin/live_heap tests/bench/bin/server_churn \
             tests/bench/bin/forward.so

# Debian packages that building and testing need (make deps installs them).
# libzstd-dev: -o FILE.zst and compressed input; zstd: the tests check that
# its files and ours are the same stream.  python3 and python3-dbg (its
# debug information): the size of a real program's stacks (t0435).
# libjemalloc2, libmimalloc2.0, libtcmalloc-minimal4: the allocators
# examples/thirdparty links with and t0390 preloads.  zlib1g-dev: the gzip
# of ms-report --pprof; golang-go: go tool pprof, the reader its profiles
# are checked with (t0450).  time: /usr/bin/time's peak rss (t0700).
# valgrind: every tool under memcheck (t0720); strace: no shell (t0710).
# libc6-dbg: a debug file with compressed sections, as users have (t0315).
# nodejs: runs the HTML page's own script on its data (its time view, t0425).
DEPS_PKGS = gcc g++ make libc6-dev pkg-config libunwind-dev libjansson-dev libcmocka-dev \
            libdw-dev libelf-dev libncurses-dev jq libxml2-utils libzstd-dev zstd \
            zlib1g-dev golang-go python3 python3-dbg tmux time libjemalloc2 libmimalloc2.0 \
            libtcmalloc-minimal4 valgrind strace libc6-dbg nodejs
BENCH_PKGS = heaptrack valgrind sqlite3 python3 htop procps redis-server redis-tools apache2-utils curl
SHOT_PKGS = chromium fonts-dejavu-core
# make fuzz: libFuzzer comes with clang.
FUZZ_PKGS = clang
# make soak-attach: the servers it attaches to, and what loads them
SOAK_PKGS = python3 sqlite3 curl jq redis-server redis-tools nginx-light memcached

# Fuzz targets (tests/fuzz/fuzz_NAME.c).  make check replays their corpus
# and the crashes found so far through libmsc built with ASan and UBSan
# (gcc's); make fuzz runs each under libFuzzer (clang's) for FUZZ_TIME
# seconds.
FUZZ_TARGETS = records proc supp hookspec diff
FUZZ_TIME ?= 60
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) $(LIBMSC_INC) -Itests/fuzz -O1 -g $(FUZZ_SAN)
FUZZ_SAN_OBJS = $(addprefix tests/fuzz/obj/,$(addsuffix .o,$(LIBMSC_MODS)))
FUZZ_REPLAY = $(addprefix tests/fuzz/bin/replay-,$(FUZZ_TARGETS))
FUZZ_CLANG_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(LIBMSC_INC) -Itests/fuzz -O1 -g \
		    -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CLANG_OBJS = $(addprefix tests/fuzz/cobj/,$(addsuffix .o,$(LIBMSC_MODS)))
FUZZ_BINS = $(addprefix tests/fuzz/bin/fuzz-,$(FUZZ_TARGETS))

.PHONY: all check check-layers print-stages demo deps bench-deps shot-deps fuzz-deps soak-attach install uninstall clean unit e2e bench \
	screenshot pictures fuzz fuzz-replay stress check-sanitize
.DEFAULT_GOAL := all

all: $(LIBMSC) $(TOOL_BINS) $(TOP_BIN) $(SHIM) $(EXAMPLE_BINS) $(STRESS_BINS) $(E2E_BENCH_BINS)

libmsc/%.o: libmsc/%.c
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIBMSC): $(LIBMSC_OBJS)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

shim/%.o: shim/%.c
	$(QUIET_CC)$(CC) $(SHIM_CFLAGS) -c -o $@ $<

shim/%.o: shim/%.S
	$(QUIET_CC)$(CC) -c -o $@ $<

$(SHIM): $(SHIM_OBJS)
	$(QUIET_LINK)$(CC) -shared -o $@ $^ -Wl,-z,now -Wl,-z,nodelete -ldl -lpthread

tools/%.o: tools/%.c
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -c -o $@ $<

tools/ms-%: tools/ms-%.o $(LIBMSC)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $< $(TOOL_LIBS)

tools/ms-top/%.o: tools/ms-top/%.c
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) -DNCURSES_WIDECHAR=1 -c -o $@ $<

$(TOP_BIN): $(TOP_OBJS) $(LIBMSC)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $(TOP_OBJS) $(TOOL_LIBS) $(CURSES_LIBS)

# Examples are the programs under test: plain -O2 -g, no sanitizers.
examples/bin/%: examples/%.c | examples/bin
	$(QUIET_CC)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN) -o $@ $< -lpthread

examples/bin/%-nodebug: examples/%.c | examples/bin
	$(QUIET_CC)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 $(WARN) -o $@ $< -lpthread

examples/bin/%-stripped: examples/%.c | examples/bin
	$(QUIET_CC)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -rdynamic $(WARN) -o $@ $< -lpthread && strip --strip-all $@

# pools without annotations, its pool in a library of its own: for --hook,
# which reaches calls through the GOT.
examples/bin/libpools.so: examples/pools.c | examples/bin
	$(QUIET_CC)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN) -fPIC -shared -DPOOLS_LIB \
		-DNO_ANNOTATE -o $@ $<

examples/bin/pools-hook: examples/pools.c examples/bin/libpools.so | examples/bin
	$(QUIET_CC)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN) -DPOOLS_USE_LIB -DNO_ANNOTATE \
		-o $@ $< -Lexamples/bin -lpools -Wl,-rpath,'$$ORIGIN'

examples/bin/thirdparty-%: examples/thirdparty.c | examples/bin
	$(QUIET_CC)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN) -DUSE_$(shell echo $* | tr a-z A-Z) \
		-o $@ $< -l:$(THIRDPARTY_LIB_$*)

examples/bin/%: examples/%.cpp | examples/bin
	$(QUIET_CC)$(CXX) -std=c++17 -O2 -g -Wall -Wextra -o $@ $<

tests/stress/bin/%: tests/stress/%.c | tests/stress/bin
	$(QUIET_CC)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN) -o $@ $< -lpthread

tests/stress/bin/%: tests/stress/%.cpp | tests/stress/bin
	$(QUIET_CC)$(CXX) -std=c++17 -O2 -g -Wall -Wextra -o $@ $<

examples/bin tests/unit/bin tests/bench/bin tests/stress/bin:
	$(Q)mkdir -p $@

tests/unit/bin/%: tests/unit/%.c $(LIBMSC) | tests/unit/bin
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBMSC) -lcmocka $(MSC_LIBS)

# test_sym dlopens a C++ library to check demangling and inlined templates.
tests/unit/bin/test_sym: tests/unit/bin/libsymcxx.so

tests/unit/bin/libsymcxx.so: tests/fixtures/sym/cxx_lib.cpp | tests/unit/bin
	$(QUIET_CC)$(CXX) -O2 -g -fPIC -shared $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(WARN)) -o $@ $<

# The workloads are not memscope programs: plain -O2 -g.
tests/bench/bin/alloc_storm tests/bench/bin/attach_target tests/bench/bin/live_heap \
		tests/bench/bin/server_churn: tests/bench/bin/%: tests/bench/%.c | tests/bench/bin
	$(QUIET_CC)$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $< -lpthread

tests/bench/bin/cxx_storm: tests/bench/cxx_storm.cpp | tests/bench/bin
	$(QUIET_CC)$(CXX) -std=c++17 -O2 -g $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(WARN)) -o $@ $<

tests/bench/bin/peakmem: tests/bench/peakmem.c | tests/bench/bin
	$(QUIET_CC)$(CC) -std=gnu11 -O2 -g $(WARN) -o $@ $<

# The forwarding-only preload (forward.c says why -fno-plt).
tests/bench/bin/forward.so: tests/bench/forward.c | tests/bench/bin
	$(QUIET_CC)$(CC) -std=gnu11 -O2 -g -fPIC -shared -fno-plt $(WARN) -o $@ $<

tests/bench/bin/%: tests/bench/%.c $(LIBMSC) | tests/bench/bin
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBMSC) $(MSC_LIBS)

deps:
	$(Q)PKGS="$(DEPS_PKGS)" sh tests/deps.sh

bench-deps:
	$(Q)PKGS="$(DEPS_PKGS) $(BENCH_PKGS)" sh tests/deps.sh

shot-deps:
	$(Q)PKGS="$(DEPS_PKGS) $(SHOT_PKGS)" sh tests/deps.sh

fuzz-deps:
	$(Q)PKGS="$(DEPS_PKGS) $(FUZZ_PKGS)" sh tests/deps.sh

tests/fuzz/obj tests/fuzz/bin:
	$(Q)mkdir -p $@

tests/fuzz/obj/%.o: libmsc/%.c | tests/fuzz/obj
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)$(CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

tests/fuzz/obj/libmsc-san.a: $(FUZZ_SAN_OBJS)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

tests/fuzz/bin/replay-%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz_util.c \
			 tests/fuzz/obj/libmsc-san.a | tests/fuzz/bin
	$(QUIET_LINK)$(CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) tests/fuzz/obj/libmsc-san.a $(MSC_LIBS)

fuzz-replay: $(FUZZ_REPLAY)
	$(Q)fail=0; for t in $(FUZZ_TARGETS); do \
		printf '  FUZZ    %-9s' "$$t"; \
		tests/fuzz/bin/replay-$$t tests/fuzz/corpus/$$t tests/fuzz/crashes/$$t || fail=1; \
	done; exit $$fail

tests/fuzz/cobj:
	$(Q)mkdir -p $@

tests/fuzz/cobj/%.o: libmsc/%.c | tests/fuzz/cobj
	$(Q)mkdir -p $(@D)
	$(QUIET_CC)clang $(FUZZ_CLANG_CFLAGS) -MMD -MP -fsanitize=fuzzer-no-link -c -o $@ $<

tests/fuzz/cobj/libmsc-fuzz.a: $(FUZZ_CLANG_OBJS)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

tests/fuzz/bin/fuzz-%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.c tests/fuzz/cobj/libmsc-fuzz.a \
		       | tests/fuzz/bin
	$(QUIET_LINK)clang $(FUZZ_CLANG_CFLAGS) -fsanitize=fuzzer -o $@ $(filter %.c,$^) \
		tests/fuzz/cobj/libmsc-fuzz.a $(MSC_LIBS)

# make check again with libmsc, the tools and the tests built with ASan and
# UBSan (the shim and the examples as always, see SANITIZE above), in a copy
# of the tree, .sanitize/, so that the build in place stays as it is.
# .ci/run runs it after make check.
SAN_TREE = .sanitize
check-sanitize: deps
	$(Q)rm -rf $(SAN_TREE) && mkdir $(SAN_TREE)
	$(Q)tar --exclude=./$(SAN_TREE) --exclude=./.git --exclude=./tests/e2e/out \
		--exclude=./tests/bench/out --exclude=./tests/fuzz/out -cf - . | tar -xf - -C $(SAN_TREE)
	$(Q)$(MAKE) --no-print-directory -C $(SAN_TREE) clean >/dev/null
	$(Q)$(MAKE) --no-print-directory -C $(SAN_TREE) SANITIZE=address,undefined all
	$(Q)$(MAKE) --no-print-directory -C $(SAN_TREE) SANITIZE=address,undefined unit
	$(Q)$(MAKE) --no-print-directory -C $(SAN_TREE) SANITIZE=address,undefined e2e

# Attach and detach, 50 cycles each, on real servers under load and on 200
# busy threads (tests/stress/attach_servers.sh; CYCLES=n for more or fewer).
soak-attach: all
	$(Q)PKGS="$(DEPS_PKGS) $(SOAK_PKGS)" sh tests/deps.sh
	$(Q)sh tests/stress/attach_servers.sh

# The long stress run: 30 s of threads, 1 GiB of records (tests/e2e/t0700).
stress: all
	$(Q)STRESS=long sh tests/e2e/t0700-stress.sh

fuzz: fuzz-deps
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(Q)sh tests/fuzz/run.sh $(FUZZ_TIME) $(FUZZ_TARGETS)

unit: $(UNIT_TESTS)
	$(Q)fail=0; for t in $(UNIT_TESTS); do \
		echo "  UNIT    $$t"; \
		MEMSCOPE_CACHE=$(CURDIR)/tests/unit/bin/cache \
			./$$t >tests/unit/bin/$$(basename $$t).log 2>&1 || { cat tests/unit/bin/$$(basename $$t).log; fail=1; }; \
	done; exit $$fail

# End-to-end scripts that measure no time run this many at a time (see
# tests/e2e/run.sh): the cores, at most 2.
E2E_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ "$$n" -gt 2 ] && n=2; echo $$n)
e2e: all
	$(Q)E2E_JOBS=$(E2E_JOBS) sh tests/e2e/run.sh

check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory check-layers
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory fuzz-replay
	$(Q)$(MAKE) --no-print-directory e2e

# libmsc's stages go one way down (DESIGN.md): no include and no symbol of a
# stage above, no cycle of modules (tests/check-layers.sh; t0005 shows that
# it fails on each).
check-layers: $(LIBMSC)
	$(Q)sh tests/check-layers.sh $(LIBMSC_STAGES)

print-stages:
	@echo $(LIBMSC_STAGES)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh tests/demo.sh

bench: bench-deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS)
	$(Q)sh tests/bench/run.sh

MAN_PAGES = $(wildcard man/*.[1-9])

# pkg-config --cflags memscope: where memscope.h is.  Paths under PREFIX are
# written from ${prefix}, so that pkg-config --define-prefix can move them.
define MEMSCOPE_PC
prefix=$(PREFIX)
includedir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCDIR))
libdir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))

Name: memscope
Description: memscope.h, the annotation API of custom allocators for the memscope memory profiler (a header: nothing to link)
Version: $(VERSION)
Cflags: -I$${includedir}
endef
export MEMSCOPE_PC

# Not part of check: a browser is a large dependency for a test suite.
screenshot: shot-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh tests/bench/pictures.sh

pictures: shot-deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh tests/bench/pictures.sh --examples

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(TOOL_BINS) $(TOP_BIN) $(DESTDIR)$(BINDIR)
	install -m 755 $(SHIM) $(DESTDIR)$(LIBDIR)
	install -m 644 shim/memscope.h $(DESTDIR)$(INCDIR)
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1
	install -m 644 man/*.3 $(DESTDIR)$(MANDIR)/man3
	install -m 644 man/*.5 $(DESTDIR)$(MANDIR)/man5
	install -m 644 man/*.7 $(DESTDIR)$(MANDIR)/man7
	printf '%s\n' "$$MEMSCOPE_PC" >$(DESTDIR)$(PKGCONFIGDIR)/memscope.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/memscope.pc

# Every file install put there, and LIBDIR, which is memscope's own; the
# directories it shares with other software stay.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOLS) $(notdir $(TOP_BIN)))
	rm -f $(DESTDIR)$(LIBDIR)/$(notdir $(SHIM))
	rm -f $(DESTDIR)$(INCDIR)/memscope.h
	rm -f $(foreach m,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/memscope.pc
	if [ -d $(DESTDIR)$(LIBDIR) ]; then rmdir $(DESTDIR)$(LIBDIR); fi

clean:
	rm -f libmsc/*/*.o libmsc/*/*.d $(LIBMSC) tools/*.o tools/*.d $(TOOL_BINS) shim/*.o shim/*.d $(SHIM)
	rm -f tools/ms-top/*.o tools/ms-top/*.d $(TOP_BIN)
	rm -rf examples/bin tests/unit/bin tests/bench/bin tests/e2e/out tests/bench/out
	rm -rf tests/fuzz/obj tests/fuzz/cobj tests/fuzz/bin tests/fuzz/out tests/stress/bin

-include $(wildcard libmsc/*/*.d tools/*.d tools/ms-top/*.d shim/*.d tests/fuzz/obj/*/*.d tests/fuzz/cobj/*/*.d)
