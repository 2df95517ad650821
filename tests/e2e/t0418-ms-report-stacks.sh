#!/bin/sh
# What a person reads in ms-report's text and Markdown: every site shown is
# numbered once and named the same in each table, its whole stack follows
# the tables (a recursion folded, the frames that only pass the allocation
# on marked), a program's own allocation wrapper is found and its callers
# are the sites (unless --no-auto-wrappers), and the text is as wide as
# --width, --wide or $COLUMNS say.  tests/e2e/wrappers.c is the program: a
# wrapper with three callers, a function that allocates and calls it, a
# 40-deep recursion.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

W="$TOP/tests/e2e/wrappers.c"
check_status "build wrappers.c" 0 cc -O1 -g -fno-omit-frame-pointer -o "$OUT/wrappers" "$W"
check_status "record it" 0 ms-record -q -o w.ndjson "$OUT/wrappers"
ms-report w.ndjson >w.txt
ms-report --md w.ndjson >w.md
ms-report --no-auto-wrappers w.ndjson >w-kept.txt
L_ALLOC=$(line_of "$W" "void *p = malloc(n);")
L_USER=$(line_of "$W" "make_user(void) {")
L_ROLE=$(line_of "$W" "make_role(void) {")
L_TABLE=$(line_of "$W" "keep[nkeep++] = malloc(400);")
L_TABLE_USER=$((L_TABLE + 1))
L_LEAF=$(line_of "$W" "keep[nkeep++] = malloc(500);")

# The wrapper, found and said.
check_grep "the wrapper found" "^    my_alloc (wrappers)\$" w.txt
check_eq "json: the wrappers found" '["my_alloc (wrappers)"]' "$(ms-report --json w.ndjson | jq -c .wrappers)"
check_fgrep "md: the wrappers found" '**Allocation wrappers found**' w.md
# Its callers are the sites; a function that allocates itself is not one.
check_egrep "make_role is a site" "  300 B +1 +300  #[0-9]+ make_role wrappers.c:$L_ROLE\$" w.txt
check_egrep "build_table is a site" "  400 B +1 +400  #[0-9]+ build_table wrappers.c:$L_TABLE\$" w.txt
check_eq "make_user's two paths, told apart by the caller where they part" \
	"from main wrappers.c:$(($(line_of "$W" "int main(") + 2))
from build_table wrappers.c:$L_TABLE_USER" \
	"$(sed -n '/^TOP SITES BY BYTES/,/^$/p' w.txt | grep -A1 "make_user wrappers.c:$L_USER\$" | grep -o 'from .*')"
check_nogrep "no site is the wrapper" "#[0-9]+ my_alloc" w.txt
# --no-auto-wrappers: the wrapper is the site again, and nothing is said.
check_eq "--no-auto-wrappers: four sites in my_alloc" 4 \
	"$(sed -n '/^TOP SITES BY BYTES/,/^$/p' w-kept.txt | grep -c "#[0-9]* my_alloc wrappers.c:$L_ALLOC\$")"
check_nogrep "--no-auto-wrappers: none found" "wrappers found" w-kept.txt

# Whole stacks after the tables: the wrapper marked, the recursion folded
# (40 calls of descend: the leaf, one more frame and 38 more times).
sed -n '/^STACKS OF THE SITES ABOVE/,/^ALLOCATION SIZES/p' w.txt >stacks.txt
check_eq "the stack of make_user from build_table, whole" \
	"      my_alloc wrappers.c:$L_ALLOC (wrapper)
      make_user wrappers.c:$L_USER
      build_table wrappers.c:$L_TABLE_USER
      main wrappers.c:$(line_of "$W" "	build_table();")" \
	"$(awk 'BEGIN { RS = "" } /make_user/ && /build_table/' stacks.txt | grep '^      [a-z]')"
check_eq "the recursion, folded" \
	"      descend wrappers.c:$L_LEAF
      descend wrappers.c:$(line_of "$W" "descend(n - 1);")
        ... the frame above 38 more times
      main wrappers.c:$(line_of "$W" "descend(DEPTH);")" \
	"$(awk 'BEGIN { RS = "" } /descend/' stacks.txt | grep '^      [a-z. ]')"
check_fgrep "md: the recursion folded too" "  ... the frame above 38 more times" w.md
# The page lists the same stacks the same way, and the wrappers found.
ms-report --html w.ndjson >w.html
check_fgrep "html: the recursion folded" '<li class="rep">... the frame above 38 more times</li>' w.html
check_fgrep "html: the wrapper marked" \
	"<li>my_alloc wrappers.c:$L_ALLOC <span class=\"mod\">wrappers</span> <span class=\"mod\">(wrapper)</span></li>" w.html
check_fgrep "html: the wrappers found" "keeps them): <code>my_alloc (wrappers)</code>.</p>" w.html

# One number and one name per site in every table, in every recording here
# and in the handmade fixture (twins included).
one_name() {
	awk '
	/^[A-Z]/ { stacks = ($0 ~ /^STACKS/) }
	!stacks && match($0, / #[0-9]+ /) && RSTART > 30 {
		if (row != "") print row
		row = substr($0, RSTART + 1); next
	}
	!stacks && row != "" && /^ {30,}(from|via) / { sub(/^ +/, ""); row = row " " $0; next }
	{ if (row != "") print row; row = "" }
	END { if (row != "") print row }' "$1" | sort -u | awk '{ print $1 }' | uniq -d
}
ms-report "$TOP/tests/fixtures/report/handmade.ndjson" >handmade.txt 2>/dev/null
for f in w.txt handmade.txt; do
	check_eq "$f: each site one name in every table" "" "$(one_name "$f")"
	check_egrep "$f: sites are numbered" " #1 " "$f"
done
check_eq "handmade: cache_put's twins numbered apart" "#2 #3" \
	"$(grep -o '#[0-9]* cache_put' handmade.txt | sort -u | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')"

# The HTML page names sites as the text does: the legend of the heap chart
# (an --events recording: by site) tells my_alloc's four sites apart, and
# every row of its table of sites opens onto its stack.
check_status "record it with --events" 0 ms-record -q --events -o wev.ndjson "$OUT/wrappers"
ms-report --html --no-auto-wrappers wev.ndjson >w.html
grep -o '<span class="mono">[^<]*</span>' w.html | sed 's/<[^>]*>//g' >legend.txt
check_eq "html: my_alloc's four sites in the legend, each its own" 4 \
	"$(grep -c "^my_alloc wrappers.c:$L_ALLOC from " legend.txt)"
check_eq "html: no two legend entries alike" "" "$(sort legend.txt | uniq -d)"
check_eq "html: every site of the table with its stack" \
	"$(sed -n '/<section id="sites">/,/<\/section>/p' w.html | grep -c '^<tr><td')" \
	"$(sed -n '/<section id="sites">/,/<\/section>/p' w.html | grep -c '<details><summary>')"
check_fgrep "html: a site's stack, whole" "<li>build_table wrappers.c:$L_TABLE_USER <span class=\"mod\">wrappers</span></li>" w.html

# The flame graph folds a run of frames, each the only caller of the next:
# descend's 40 frames are descend, a box of 38, descend.
ms-report --svg --cost bytes w.ndjson >w.svg
check_eq "svg: the recursion's middle 38 frames, one box" 1 \
	"$(grep -c '<title>\[38 frames\]$' w.svg)"
check_fgrep "svg: the box says what it holds" \
	"each the only caller of the next: descend &lt; descend &lt; descend" w.svg
check_eq "svg: the box is searched by the frames it holds" 1 \
	"$(grep -c '<g data-c="[0-9]*" data-run="1"><title>\[38 frames\]$' w.svg)"
check_range "svg: as tall as what it draws" 100 600 \
	"$(sed -n 's/.*<svg class="msflame"[^>]* height="\([0-9]*\)".*/\1/p' w.svg | head -1)"

# A site in an unnamed function (a stripped binary's static leak_anon, its
# static caller run) says the first named function above it.
check_status "record twosites-stripped" 0 ms-record -q -o ts.ndjson "$EX/twosites-stripped"
ms-report ts.ndjson >ts.txt
check_eq "stripped: the unnamed site, under main" "256 B 4 twosites-stripped+0x under main" \
	"$(sed -n '/^TOP SITES BY BYTES/,/^$/p' ts.txt | grep -A1 ' #[0-9]* twosites-stripped+0x' |
		sed 's/ #[0-9]* / /; s/+0x[0-9a-f]*$/+0x/' | tr -s ' \n' '  ' | awk '{ print $1, $2, $3, $5, $6, $7 }')"
check_egrep "stripped: md names it inline" "#[0-9]+ \`twosites-stripped\+0x[0-9a-f]+ under main\`" \
	"$(ms-report --md ts.ndjson >ts.md; echo ts.md)"

# Widths.  cxx's C++ names are long: 80 columns by default, as asked
# otherwise, nothing cut with --wide.
check_status "record cxx" 0 ms-record -q -o cxx.ndjson "$EX/cxx"
ms-report cxx.ndjson | sed 1d >cxx80.txt
ms-report --width 120 cxx.ndjson | sed 1d >cxx120.txt
COLUMNS=120 ms-report cxx.ndjson | sed 1d >cxx-columns.txt
ms-report --wide cxx.ndjson | sed 1d >cxx-wide.txt
check_range "80 columns" 60 80 "$(LC_ALL=C.UTF-8 wc -L <cxx80.txt)"
check_range "--width 120" 100 120 "$(LC_ALL=C.UTF-8 wc -L <cxx120.txt)"
check_eq "COLUMNS=120 is --width 120" "" "$(cmp cxx120.txt cxx-columns.txt)"
check_range "--wide: wider than 120" 121 100000 "$(LC_ALL=C.UTF-8 wc -L <cxx-wide.txt)"
check_nogrep "--wide: no name cut" "[A-Za-z_)]\.\.( |\+|$)" cxx-wide.txt
check_egrep "80 columns: names cut to fit" "[A-Za-z_)]\.\.( |\+|$)" cxx80.txt
check_status "--width 10: refused" 2 ms-report --width 10 cxx.ndjson
# The standard library's frames pass allocations on: the sites are cxx.cpp's.
check_nogrep "no site inside std::" "#[0-9]+ (void )?std::" cxx80.txt
check_egrep "a site in cxx.cpp" "#[0-9]+ churn\(\) cxx.cpp:[0-9]+\$" cxx80.txt
finish
