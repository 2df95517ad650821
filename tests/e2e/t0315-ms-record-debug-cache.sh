#!/bin/sh
# Debug files with compressed sections (Debian's -dbg packages) are
# decompressed once: ms-record keeps a copy in its cache directory, named
# by build-id, and opens that from then on.  The frames are the same with
# the copy, without it, and after a torn copy is replaced.
. "$(dirname "$0")/lib.sh"

LIBC=$(ldd "$EX/leaky" | awk '$1 ~ /^libc\.so/ { print $3 }')
ID=$(readelf -n "$LIBC" 2>/dev/null | awk '/Build ID/ { print $3 }')
DBG=/usr/lib/debug/.build-id/$(echo "$ID" | cut -c1-2)/$(echo "$ID" | cut -c3-).debug
# compressed: readelf -S -W shows a C among a section's flags
compressed() { readelf -S -W "$1" 2>/dev/null | awk '$2 ~ /^\.debug/ && $0 ~ / [A-Z]*C[A-Z]* / { n++ } END { print n + 0 }'; }
if [ ! -f "$DBG" ] || [ "$(compressed "$DBG")" = 0 ]; then
	echo "  (no compressed debug file for $LIBC: libc6-dbg is not installed)" >&2
	finish
fi
# frames REC: every frame but for its id and address (ASLR), sorted.
frames() { jq -c 'select(.type=="frame") | del(.id, .ip)' "$1" | sort; }

C=$OUT/cache
MEMSCOPE_CACHE=off check_status "without the cache" 0 ms-record -q -o "$OUT/off.ndjson" "$EX/leaky"
check_eq "off: libc's frames have lines" 1 \
	"$(jq -r 'select(.type=="frame" and .fn=="__strdup" and .line > 0) | .fn' "$OUT/off.ndjson" | sort -u | wc -l)"
MEMSCOPE_CACHE=$C check_status "first run: the copy is made" 0 ms-record -q -o "$OUT/first.ndjson" "$EX/leaky"
COPY=$C/debug/$ID.debug
check_eq "the copy is named by libc's build-id" "$COPY" "$(ls "$C"/debug/"$ID".debug)"
check_eq "the copy has the build-id" "$ID" "$(readelf -n "$COPY" 2>/dev/null | awk '/Build ID/ { print $3 }')"
check_eq "the copy has no compressed section" 0 "$(compressed "$COPY")"
check_eq "its sections are libc's debug sections" \
	"$(readelf -S -W "$DBG" 2>/dev/null | awk '$2 ~ /^\./ { print $2 }')" \
	"$(readelf -S -W "$COPY" 2>/dev/null | awk '$2 ~ /^\./ { print $2 }')"
check_eq "the copy is private" 600 "$(stat -c %a "$COPY")"
check_eq "first run: the same frames" "$(frames "$OUT/off.ndjson")" "$(frames "$OUT/first.ndjson")"

if command -v strace >/dev/null; then
	# (LeakSanitizer cannot stop the world under strace: make check-sanitize.)
	MEMSCOPE_CACHE=$C ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		check_status "second run" 0 strace -f -e trace=openat -o "$OUT/strace" \
		ms-record -q -o "$OUT/second.ndjson" "$EX/leaky"
	check_eq "second run: the copy is opened" 1 "$(grep -c "\"$COPY\"" "$OUT/strace")"
	check_eq "second run: libc's debug file is not" 0 "$(grep -c "$DBG" "$OUT/strace")"
	check_eq "second run: the same frames" "$(frames "$OUT/off.ndjson")" "$(frames "$OUT/second.ndjson")"
fi

# A torn copy (a crash while writing is renamed into place only when
# complete, but disks fill and people edit): not used, and made again.
SIZE=$(stat -c %s "$COPY")
head -c 4096 "$COPY" >"$OUT/torn" && cat "$OUT/torn" >"$COPY"
MEMSCOPE_CACHE=$C check_status "a torn copy" 0 ms-record -q -o "$OUT/torn.ndjson" "$EX/leaky"
check_eq "a torn copy: the same frames" "$(frames "$OUT/off.ndjson")" "$(frames "$OUT/torn.ndjson")"
check_eq "a torn copy: made again" "$SIZE 0" "$(stat -c %s "$COPY") $(compressed "$COPY")"
# Another file's copy under libc's name: not used.
cp "$EX/leaky" "$COPY"
MEMSCOPE_CACHE=$C check_status "a foreign copy" 0 ms-record -q -o "$OUT/foreign.ndjson" "$EX/leaky"
check_eq "a foreign copy: the same frames" "$(frames "$OUT/off.ndjson")" "$(frames "$OUT/foreign.ndjson")"
check_eq "a foreign copy: replaced" "$ID" "$(readelf -n "$COPY" 2>/dev/null | awk '/Build ID/ { print $3 }')"

# A debug file found by its .gnu_debuglink next to the program (not by
# build-id): the copy is made from it too, and the program's own frames
# keep their lines.
objcopy --only-keep-debug --compress-debug-sections=zlib "$EX/leaky" "$OUT/leaky.debug"
objcopy --strip-debug --add-gnu-debuglink="$OUT/leaky.debug" "$EX/leaky" "$OUT/leaky"
PID=$(readelf -n "$EX/leaky" 2>/dev/null | awk '/Build ID/ { print $3 }')
check_eq "leaky.debug has compressed sections" yes "$([ "$(compressed "$OUT/leaky.debug")" -gt 0 ] && echo yes)"
MEMSCOPE_CACHE=$OUT/cache2 check_status "debuglink, first run" 0 ms-record -q -o "$OUT/link1.ndjson" "$OUT/leaky"
check_eq "debuglink: the copy is made" "$PID.debug" "$(ls "$OUT/cache2/debug" | grep "^$PID")"
MEMSCOPE_CACHE=$OUT/cache2 check_status "debuglink, second run" 0 ms-record -q -o "$OUT/link2.ndjson" "$OUT/leaky"
MEMSCOPE_CACHE=off check_status "debuglink, no cache" 0 ms-record -q -o "$OUT/link0.ndjson" "$OUT/leaky"
check_eq "debuglink: leak_small_inner has its line" 1 \
	"$(jq -r 'select(.type=="frame" and .fn=="leak_small_inner" and .line > 0) | .fn' "$OUT/link2.ndjson" | sort -u | wc -l)"
check_eq "debuglink: the same frames, first run" "$(frames "$OUT/link0.ndjson")" "$(frames "$OUT/link1.ndjson")"
check_eq "debuglink: the same frames, from the copy" "$(frames "$OUT/link0.ndjson")" "$(frames "$OUT/link2.ndjson")"

# The same debug file in the program's .debug/ directory (libdw's default
# path looks there too): found without the cache.  And a program with no
# debug file anywhere: its frames are named from its symbol table, and
# libdw's search does not reach debuginfod, which has no server to ask
# (DEBUGINFOD_URLS is unset) but loaded libdebuginfod and libcurl's chain
# for it (27 libraries, 5-10 ms a recording).
mkdir -p "$OUT/sub/.debug" "$OUT/bare"
cp "$OUT/leaky" "$OUT/sub/leaky"
cp "$OUT/leaky.debug" "$OUT/sub/.debug/leaky.debug"
MEMSCOPE_CACHE=off check_status "debuglink in .debug/" 0 ms-record -q -o "$OUT/dotdebug.ndjson" "$OUT/sub/leaky"
lines() { jq -c 'select(.type=="frame") | [.fn, .file, .line]' "$1" | sort; }
check_eq "debuglink in .debug/: the same functions and lines" "$(lines "$OUT/link0.ndjson")" "$(lines "$OUT/dotdebug.ndjson")"
objcopy --strip-debug "$EX/leaky" "$OUT/bare/leaky"
MEMSCOPE_CACHE=off LD_DEBUG=files check_status "no debug file" 0 ms-record -q -o "$OUT/bare.ndjson" "$OUT/bare/leaky"
check_eq "no debug file: leak_small_inner named, without a line" "leak_small_inner 0" \
	"$(jq -r 'select(.type=="frame" and .fn=="leak_small_inner") | "\(.fn) \(.line // 0)"' "$OUT/bare.ndjson" | sort -u | xargs)"
check_eq "no debug file: libdebuginfod not loaded" 0 "$(grep -c 'file=libdebuginfod' "$OUT/last.err")"

# A copy others may write (or another user's) is not looked into: libdw
# parses what it is given.  A marker in it shows whether it was used.
if command -v strace >/dev/null; then
	MEMSCOPE_CACHE=$OUT/cache3 check_status "cache3, first run" 0 ms-record -q -o /dev/null "$EX/leaky"
	chmod 666 "$OUT/cache3/debug/$ID.debug"
	MEMSCOPE_CACHE=$OUT/cache3 check_status "a copy others may write" 0 strace -f -e trace=openat \
		-o "$OUT/strace3" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		ms-record -q -o "$OUT/w.ndjson" "$EX/leaky"
	check_eq "a copy others may write: libc's own debug file instead" 1 \
		"$(grep -c "\"$DBG\"" "$OUT/strace3")"
	check_eq "a copy others may write: the same frames" \
		"$(frames "$OUT/off.ndjson")" "$(frames "$OUT/w.ndjson")"
	check_eq "a copy others may write: made again, private" 600 \
		"$(stat -c %a "$OUT/cache3/debug/$ID.debug")"
fi

# The default place: $XDG_CACHE_HOME/memscope, else ~/.cache/memscope.
env -u MEMSCOPE_CACHE -u XDG_CACHE_HOME HOME="$OUT/home" ms-record -q -o "$OUT/home.ndjson" "$EX/leaky" >/dev/null
check_eq "default: ~/.cache/memscope/debug" "$ID.debug" "$(ls "$OUT/home/.cache/memscope/debug")"
env -u MEMSCOPE_CACHE XDG_CACHE_HOME="$OUT/xdg" HOME="$OUT/home2" ms-record -q -o "$OUT/xdg.ndjson" "$EX/leaky" >/dev/null
check_eq "default: \$XDG_CACHE_HOME/memscope/debug" "$ID.debug" "$(ls "$OUT/xdg/memscope/debug")"
check_eq "XDG_CACHE_HOME set: not ~/.cache" "no" "$([ -e "$OUT/home2/.cache" ] && echo yes || echo no)"
# A cache that cannot be written: the frames all the same.
: >"$OUT/file"
MEMSCOPE_CACHE=$OUT/file/cache check_status "an unwritable cache" 0 ms-record -q -o "$OUT/nocache.ndjson" "$EX/leaky"
check_eq "an unwritable cache: the same frames" "$(frames "$OUT/off.ndjson")" "$(frames "$OUT/nocache.ndjson")"
check_eq "an unwritable cache: no temporary file left" "file" "$(ls "$OUT" | grep -e '^file' | xargs)"
finish
