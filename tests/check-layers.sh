#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-layers: libmsc's stages go one way down (DESIGN.md).
#
#   sh tests/check-layers.sh [-C DIR] STAGE...
#
# STAGE... are libmsc's folders, lowest first (the Makefile's
# LIBMSC_STAGES); libmsc/proto/ sits below them all.  Under DIR (default
# .), with libmsc built, it fails when
#   - a file includes a header of a stage above its own, or another
#     stage's private header (*_internal.h), or a header no stage has;
#   - an object uses a symbol defined in a stage above its own (nm);
#   - modules use each other in a cycle.  A module is a .c file, or the
#     files that share a private header X_internal.h (module X).
# Each problem is one line; the status is 1 when there is one, 2 when it
# cannot look.
set -u
dir=.
if [ "${1:-}" = -C ]; then
	dir=$2
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: check-layers.sh [-C DIR] STAGE..." >&2; exit 2; }
cd "$dir" || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# rank: a stage's place, proto 0.
: >"$tmp/rank"
echo "proto 0" >>"$tmp/rank"
n=1
for s in "$@"; do
	[ -d "libmsc/$s" ] || { echo "check-layers: no folder libmsc/$s" >&2; exit 2; }
	echo "$s $n" >>"$tmp/rank"
	n=$((n + 1))
done
for d in libmsc/*/; do
	d=${d%/}
	grep -q "^${d#libmsc/} " "$tmp/rank" ||
		{ echo "check-layers: libmsc/${d#libmsc/} is not a stage (the Makefile's LIBMSC_STAGES)"; echo x >"$tmp/bad"; }
done

# Every header: its name and its stage.
for f in libmsc/*/*.h; do
	s=${f#libmsc/}
	echo "${s#*/} ${s%%/*}"
done >"$tmp/headers"

# module: what module a .c file belongs to ("stage/name").
module_of() {
	m=$(sed -n 's/^#include "\([a-z_]*\)_internal\.h".*/\1/p' "$1" | head -n 1)
	f=${1#libmsc/}
	[ -n "$m" ] || { m=${f#*/}; m=${m%.c}; }
	echo "${f%%/*}/$m"
}

# --- includes ---------------------------------------------------------------
for f in libmsc/*/*.[ch]; do
	p=${f#libmsc/}
	st=${p%%/*}
	sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" | while read -r h; do
		hs=$(awk -v h="$h" '$1 == h { print $2; exit }' "$tmp/headers")
		if [ -z "$hs" ]; then
			echo "$f includes \"$h\", which no stage of libmsc has"
			echo x >"$tmp/bad"
			continue
		fi
		case $h in
		*_internal.h)
			if [ "$hs" != "$st" ]; then
				echo "$f includes $hs/$h, another stage's private header"
				echo x >"$tmp/bad"
			fi
			continue ;;
		esac
		up=$(awk -v a="$st" -v b="$hs" '$1 == a { ra = $2 } $1 == b { rb = $2 } END { print (rb > ra) }' "$tmp/rank")
		if [ "$up" = 1 ]; then
			echo "$f includes $hs/$h: up from $st to $hs"
			echo x >"$tmp/bad"
		fi
	done
done

# --- symbols ----------------------------------------------------------------
: >"$tmp/defs"
: >"$tmp/uses"
for c in libmsc/*/*.c; do
	o=${c%.c}.o
	[ -f "$o" ] || { echo "check-layers: $o is not built (make first)" >&2; exit 2; }
	m=$(module_of "$c")
	nm -g --defined-only "$o" | awk -v m="$m" -v o="$o" 'NF == 3 { print $3, m, o }' >>"$tmp/defs"
	nm -u "$o" | awk -v m="$m" -v o="$o" '{ print $NF, m, o }' >>"$tmp/uses"
done
awk 'FILENAME == ARGV[1] { rank[$1] = $2; next }
     FILENAME == ARGV[2] { mod[$1] = $2; obj[$1] = $3; next }
     ($1 in mod) && mod[$1] != $2 {
	split($2, u, "/"); split(mod[$1], d, "/")
	if (rank[d[1]] > rank[u[1]])
		printf "%s uses %s from %s: up from %s to %s\n", $3, $1, obj[$1], u[1], d[1] > "/dev/stderr"
	print $2, mod[$1]
     }' "$tmp/rank" "$tmp/defs" "$tmp/uses" 2>"$tmp/upsym" | sort -u >"$tmp/edges"
if [ -s "$tmp/upsym" ]; then
	cat "$tmp/upsym"
	echo x >"$tmp/bad"
fi

# --- cycles -------------------------------------------------------------------
# tsort names the modules of each cycle it finds, one per line.
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loops"; then
	awk '/input contains a loop/ { if (c) print c; c = ""; next }
	     { sub(/^tsort: /, ""); c = c ? c " " $0 : $0 }
	     END { if (c) print c }' "$tmp/loops" | while read -r loop; do
		echo "modules in a cycle: $loop"
	done
	echo x >"$tmp/bad"
fi

if [ -e "$tmp/bad" ]; then
	echo "check-layers: libmsc's stages ($*) do not go one way down"
	exit 1
fi
echo "check-layers: $(wc -l <"$tmp/edges") module uses, all down, no cycle ($*)"
exit 0
