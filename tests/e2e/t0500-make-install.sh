#!/bin/sh
# make install into a DESTDIR puts the tools, libmemscope.so, memscope.h
# with its pkg-config file and the man pages where PREFIX says; a program
# built with 'pkg-config --cflags memscope' against the installed header,
# and recorded by the installed ms-record with the installed
# libmemscope.so, gives examples/pool's known answer; make uninstall takes
# every file away again.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

if ! command -v pkg-config >/dev/null 2>&1; then
	not_ok "pkg-config is not installed (make deps installs it)"
	finish
fi
D="$OUT/destdir"
P=/usr/local
VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")

# What install must put there, and nothing else.
{
	for t in "$TOP"/tools/ms-*.c; do t=${t##*/}; echo "$P/bin/${t%.c}"; done
	echo "$P/bin/ms-top"	# the tool with a screen has a folder: tools/ms-top/
	echo "$P/include/memscope.h"
	echo "$P/lib/memscope/libmemscope.so"
	for m in "$TOP"/man/*.[1-9]; do m=${m##*/}; echo "$P/share/man/man${m##*.}/$m"; done
	echo "$P/share/pkgconfig/memscope.pc"
} | sort >expected.files

check_status "make install DESTDIR=... PREFIX=$P" 0 make -C "$TOP" --no-print-directory install DESTDIR="$D" PREFIX=$P
(cd "$D" && find . ! -type d | sed 's/^\.//' | sort) >installed.files
check_eq "the files installed" "$(cat expected.files)" "$(cat installed.files)"
check_eq "tools and libmemscope.so are executable" "" \
	"$(cd "$D" && find .$P/bin .$P/lib -type f ! -perm -0755)"
check_eq "the rest is rw-r--r--" "" \
	"$(cd "$D" && find .$P/include .$P/share -type f ! -perm 0644)"
check_eq "the header is shim/memscope.h" "" "$(cmp "$TOP/shim/memscope.h" "$D$P/include/memscope.h" 2>&1)"

# --- pkg-config ---------------------------------------------------------------
export PKG_CONFIG_PATH="$D$P/share/pkgconfig"
check_status "pkg-config finds memscope" 0 pkg-config --exists memscope
check_eq "pkg-config --modversion" "$VERSION" "$(pkg-config --modversion memscope)"
check_eq "pkg-config --cflags (PREFIX, as installed for good)" "-I$P/include" \
	"$(pkg-config --cflags memscope | sed 's/ *$//')"
check_eq "pkg-config --libs: nothing to link" "" "$(pkg-config --libs memscope | sed 's/ *$//')"
check_eq "pkg-config --variable=libdir: where libmemscope.so is" "$P/lib/memscope" \
	"$(pkg-config --variable=libdir memscope)"
CFLAGS_MS=$(PKG_CONFIG_SYSROOT_DIR="$D" pkg-config --cflags memscope)
check_eq "pkg-config --cflags under the DESTDIR as sysroot" "-I$D$P/include" "$(echo $CFLAGS_MS)"

# examples/pool, built against the installed header only.
sed 's|#include "../shim/memscope.h"|#include <memscope.h>|' "$TOP/examples/pool.c" >pool.c
check_eq "pool.c includes <memscope.h>" 1 "$(grep -c '^#include <memscope.h>$' pool.c)"
check_status "cc \$(pkg-config --cflags memscope) pool.c" 0 cc -O1 -g $CFLAGS_MS -o pool pool.c
cc -M $CFLAGS_MS pool.c >pool.deps 2>&1
check_fgrep "the header compiled is the installed one" "$D$P/include/memscope.h" pool.deps

# The installed ms-record finds the installed libmemscope.so (../lib/memscope).
unset MEMSCOPE_SHIM
check_status "the installed ms-record records it" 0 "$D$P/bin/ms-record" -q -o pool.ndjson ./pool
check_eq "pool: 5 custom blocks of 48 B leak from leak_some, nothing else" \
	"custom 48 5 240 definitely pool_get<leak_some" \
	"$(v1 pool.ndjson | jq -s -r '(map(select(.type == "stack")) | map({key: (.id | tostring), value: (.frames | map(.fn))}) | from_entries) as $s
		| .[] | select(.type == "leak" and .kind != "reachable")
		| "\(.fn) \(.size) \(.count) \(.bytes) \(.kind) \($s[.stack | tostring][0:2] | join("<"))"')"
check_eq "the installed ms-report reports it" 240 \
	"$("$D$P/bin/ms-report" --json pool.ndjson | jq .summary.leaked_bytes)"
if command -v man >/dev/null 2>&1; then
	check_eq "man finds the installed pages" "$D$P/share/man/man3/memscope.h.3" \
		"$(MANPATH="$D$P/share/man" man -w 3 memscope.h 2>&1)"
fi

# --- uninstall ---------------------------------------------------------------
check_status "make uninstall DESTDIR=... PREFIX=$P" 0 make -C "$TOP" --no-print-directory uninstall DESTDIR="$D" PREFIX=$P
check_eq "no file left" "" "$(cd "$D" && find . ! -type d)"
check_eq "memscope's own directory gone" "" "$(cd "$D" && find . -name memscope)"
check_status "pkg-config no longer finds memscope" 1 pkg-config --exists memscope
check_status "make uninstall again: nothing to do, no error" 0 \
	make -C "$TOP" --no-print-directory uninstall DESTDIR="$D" PREFIX=$P

# --- another PREFIX -------------------------------------------------------------
check_status "make install PREFIX=/opt/memscope" 0 make -C "$TOP" --no-print-directory install DESTDIR="$D" PREFIX=/opt/memscope
check_eq "its pkg-config file" "-I/opt/memscope/include" \
	"$(PKG_CONFIG_PATH="$D/opt/memscope/share/pkgconfig" pkg-config --cflags memscope | sed 's/ *$//')"
check_status "make uninstall PREFIX=/opt/memscope" 0 make -C "$TOP" --no-print-directory uninstall DESTDIR="$D" PREFIX=/opt/memscope
check_eq "no file left" "" "$(cd "$D" && find . ! -type d)"

finish
