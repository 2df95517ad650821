#!/bin/sh
# Every tool's --help, its option table and its man page agree (like git's
# t0450): each option line of --help is an option tag in the man page's
# OPTIONS section, written the same way, and every option the OPTIONS
# section mentions is in --help; -h/--help/-V/--version behave as in every
# tool; the man page has the sections of STYLE.md and formats cleanly.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2
: >all.pairs

VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")

# help_syntax TOOL: the option part of --help's option lines, one a line:
# "-p, --pid PID", "--groups", "--fail-on-growth SIZE|PCT".
help_syntax() {
	"$1" --help | sed -n 's/^ \{1,\}\(-[^ ].*\)$/\1/p' | sed 's/  .*//'
}

# man_options_section FILE: the lines of the OPTIONS section.
man_options_section() {
	awk '/^\.SH/ { in_opts = ($0 ~ /^\.SH +"?OPTIONS"?$/); next } in_opts' "$1"
}

# unescape: troff text to plain text (fonts dropped, \- to -, ...).
unescape() {
	sed -e 's/\\f\[[^]]*\]//g; s/\\f(..//g; s/\\f.//g' \
	    -e 's/\\-/-/g; s/\\(bv/|/g; s/\\(en/-/g; s/\\ / /g; s/\\&//g; s/\\e/\\/g'
}

# man_tags FILE: the tag line of every .TP in OPTIONS, as plain text.  Tags
# written with font macros (.B, .BR, .BI, ...) are joined as troff would.
man_tags() {
	man_options_section "$1" | awk '
	/^\.TP/ { tag = 1; next }
	!tag { next }
	{ tag = 0 }
	!/^\./ { print; next }
	{
		m = $0; sub(/[ \t].*/, "", m); rest = substr($0, length(m) + 1)
		alt = m ~ /^\.(BR|RB|BI|IB|IR|RI)$/
		out = ""; n = 0
		for (;;) {
			sub(/^[ \t]+/, "", rest)
			if (rest == "") break
			if (substr(rest, 1, 1) == "\"") {
				rest = substr(rest, 2); i = index(rest, "\"")
				if (!i) i = length(rest) + 1
				arg = substr(rest, 1, i - 1); rest = substr(rest, i + 1)
			} else {
				i = match(rest, /[ \t]/)
				if (!i) i = length(rest) + 1
				arg = substr(rest, 1, i - 1); rest = substr(rest, i)
			}
			out = out ((alt || n == 0) ? "" : " ") arg; n++
		}
		print out
	}' | unescape
}

# options_in TEXT_FILE: every -x and --long-option mentioned, one a line.
options_in() {
	grep -oE -- '(^|[^-A-Za-z0-9])--?[A-Za-z][A-Za-z0-9-]*' "$1" |
		sed 's/^[^-]*//' | grep -E -- '^(-[A-Za-z]|--[A-Za-z][A-Za-z0-9-]+)$' | sort -u
}

tools=
for bin in "$TOP"/tools/ms-*; do
	case $bin in *.c|*.o|*.d) continue ;; esac
	[ -x "$bin" ] && tools="$tools $(basename "$bin")"
done
check_eq "some tools are built" true "$([ -n "$tools" ] && echo true)"

for t in $tools; do
	page="$TOP/man/$t.1"

	# ---------------------------------------------------- -h, -V
	check_status "$t --help: exit status" 0 "$t" --help
	cp "$OUT/last.out" $t.help
	check_empty "$t --help: nothing on stderr" "$OUT/last.err"
	check_egrep "$t --help: starts with Usage: $t" "^Usage: $t " $t.help
	check_status "$t -h: exit status" 0 "$t" -h
	check_eq "$t -h: same as --help" "$(cat $t.help)" "$(cat "$OUT/last.out")"
	check_status "$t --version: exit status" 0 "$t" --version
	check_eq "$t --version" "$t (memscope) $VERSION" "$(cat "$OUT/last.out")"
	check_status "$t -V: exit status" 0 "$t" -V
	check_eq "$t -V" "$t (memscope) $VERSION" "$(cat "$OUT/last.out")"
	check_status "$t --no-such-option: usage error" 2 "$t" --no-such-option
	check_eq "$t --no-such-option: how to get help" "Try '$t --help' for more information." \
		"$(tail -n 1 "$OUT/last.err")"

	# Usage errors name the option as it was written: a long option's
	# value is no letter (it printed "option '-\0'" for --metric).
	help_syntax "$t" | sed -n 's/.*\(--[a-z][a-z0-9-]*\) [A-Z].*/\1/p' >$t.argopts
	for o in $(cat $t.argopts); do
		check_status "$t $o without its argument: usage error" 2 "$t" "$o"
		check_eq "$t $o without its argument: message" \
			"$t: option '$o' requires an argument" "$(head -n 1 "$OUT/last.err")"
	done
	check_status "$t -o without its argument: usage error" 2 "$t" -o
	check_eq "$t -o without its argument: message" "$t: option '-o' requires an argument" \
		"$(head -n 1 "$OUT/last.err")"
	check_status "$t --version=1: usage error" 2 "$t" --version=1
	check_eq "$t --version=1: message" "$t: option '--version' doesn't allow an argument" \
		"$(head -n 1 "$OUT/last.err")"
	check_status "$t -%: usage error" 2 "$t" -%
	check_eq "$t -%: message" "$t: invalid option -- '%'" "$(head -n 1 "$OUT/last.err")"

	# ---------------------------------------------- the man page
	if [ ! -f "$page" ]; then
		not_ok "$t: no man page man/$t.1"
		continue
	fi
	for sec in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT EXAMPLES "SEE ALSO"; do
		check_egrep "man/$t.1: section $sec" "^\\.SH +\"?$sec\"?\$" "$page"
	done
	troff_name=$(printf '%s\n' "$t" | sed 's/-/\\-/g')
	check_fgrep "man/$t.1: .TH names the tool, section 1" \
		".TH $(printf '%s\n' "$troff_name" | tr a-z A-Z) 1 " "$page"
	check_fgrep "man/$t.1: NAME line" "$troff_name \\- " "$page"
	check_grep "man/$t.1: SEE ALSO memscope-format(5)" '^\.BR memscope\\-format (5)' "$page"
	if command -v groff >/dev/null 2>&1; then
		groff -man -Tutf8 -ww -z "$page" >groff.out 2>groff.err
		check_eq "man/$t.1: groff -ww: exit status" 0 $?
		check_empty "man/$t.1: groff -ww: no warnings" groff.err
	fi
	if command -v man >/dev/null 2>&1; then
		MANWIDTH=80 man -l "$page" >man.txt 2>man.err
		check_eq "man -l man/$t.1: exit status" 0 $?
		check_grep "man -l man/$t.1: renders its NAME" "$t - " man.txt
	fi

	# ------------------------------- --help and man page agree
	help_syntax "$t" | sort >help.syntax
	man_tags "$page" | sort >man.tags
	check_eq "$t: --help lists options" true "$([ -s help.syntax ] && echo true)"
	check_eq "$t: option tags of man/$t.1 = option lines of --help (< man only, > help only)" "" \
		"$(diff man.tags help.syntax | grep '^[<>]')"
	options_in help.syntax >help.opts
	man_options_section "$page" | unescape >man.options.txt
	options_in man.options.txt >man.opts
	for o in $(cat help.opts); do
		check_grep "$t: $o of --help is in man/$t.1" "^$o\$" man.opts
	done
	for o in $(cat man.opts); do
		check_grep "$t: $o of man/$t.1 OPTIONS is in --help" "^$o\$" help.opts
	done
	# The option table of the source (struct msc_cli_opt: { VAL, "name",
	# ...), which --help is made from, with the rows msc_cli.h's
	# MSC_CLI_OPT_* macros give: every long option it accepts is in
	# --help, and --help has no other.
	src="$TOP/tools/$t.c"
	[ -f "$src" ] || src="$TOP/tools/$t/main.c"
	if [ -f "$src" ]; then
		row='s/^[[:space:]]*{ *[A-Z_0-9'"'"'a-z]*, *"\([a-z][a-z0-9-]*\)",.*/--\1/p'
		sed -n "$row" "$src" >src.opts
		for m in $(sed -n 's/^[[:space:]]*\(MSC_CLI_OPT_[A-Z_]*\).*/\1/p' "$src"); do
			sed -n "/^#define $m\\b/,/[^\\\\]\$/p" "$TOP/libmsc/cli/msc_cli.h" | sed -n "$row"
		done >>src.opts
		echo --help >>src.opts
		echo --version >>src.opts
		check_eq "$t: long options accepted = long options in --help" \
			"$(grep -- '^--' help.opts | sort)" "$(sort -u src.opts)"
		# ... but for the old spellings of renamed options (struct
		# msc_cli_alias), which the man page lists, with when they go.
		awk '/^\.SH/ { in_sec = ($0 ~ /^\.SH +"?DEPRECATED OPTIONS"?$/); next } in_sec' "$page" |
			unescape >man.deprecated.txt
		for old in $(sed -n 's/^[[:space:]]*{ *"\(--*[A-Za-z][a-z0-9-]*\)", *"[^"]*",.*/\1/p' "$src"); do
			check_egrep "man/$t.1: DEPRECATED OPTIONS says what $old was" "(^|[ (])$old([ ,.)]|\$)" \
				man.deprecated.txt
			check_grep "man/$t.1: DEPRECATED OPTIONS says when $old goes" "memscope 0\.2" man.deprecated.txt
		done
	fi
	# "tool letter long" for the cross-tool checks below ("-": no letter).
	help_syntax "$t" | sed -n -e 's/^-\([A-Za-z]\), --\([a-z][a-z0-9-]*\).*/\1 \2/p' \
		-e 's/^--\([a-z][a-z0-9-]*\).*/- \1/p' | sed "s/^/$t /" >>all.pairs
done

# ------------------------------------------------ one meaning per option
# A letter means the same long option in every tool, and a long option has
# the same letter (or none) in every tool that has it (STYLE.md).
# One exception, said in memscope(7) and ms-top(1): ms-top's -n is top(1)'s
# number of refreshes (-n, --count), where -n is --top elsewhere.
grep -vx 'ms-top n count' all.pairs >letters.pairs
for l in $(awk '$2 != "-" { print $2 }' letters.pairs | sort -u); do
	check_eq "-$l means one long option in every tool ($(awk -v l="$l" '$2 == l { printf "%s --%s; ", $1, $3 }' letters.pairs))" \
		1 "$(awk -v l="$l" '$2 == l { print $3 }' letters.pairs | sort -u | wc -l)"
done
for o in $(awk '{ print $3 }' all.pairs | sort -u); do
	check_eq "--$o has one letter (or none) in every tool ($(awk -v o="$o" '$3 == o { printf "%s -%s; ", $1, $2 }' all.pairs))" \
		1 "$(awk -v o="$o" '$3 == o { print $2 }' all.pairs | sort -u | wc -l)"
done

# memscope(7)'s table of options says the same: a row for every letter
# and for every long option that more than one tool has, naming the tools.
# (Its tbl rows, OPTION@MEANS@TOOLS, their T{ T} cells joined.)
awk '/^\.SH OPTIONS: ONE LETTER/ { f = 1 } f && /^\.TS/ { t = 1; next } f && /^\.TE/ { exit } t' \
	"$TOP/man/memscope.7" | sed -z 's/T{\n//g; s/\nT}//g' | sed -e 's/\\-/-/g' -e 's/\\f[BIR]//g' |
	sed -n 's/^\(-[^@]*\)@.*@\([^@]*[^ @]\) *$/\1|\2/p' |
	sed -e 's/^-\([A-Za-z]\), --\([a-z0-9-]*\)[^|]*/\1 \2/' \
	    -e 's/^--\([a-z0-9-]*\)[^|]*/- \1/' >readme.rows
check_eq "memscope(7) has a table of options" true "$([ -s readme.rows ] && echo true)"
all_tools=$(printf '%s\n' $tools | sort | tr '\n' ' ')
awk '{ print $2, $3 }' all.pairs | sort -u >all.options
while read -r l o; do
	in=$(awk -v l="$l" -v o="$o" '$2 == l && $3 == o { print $1 }' all.pairs | sort | tr '\n' ' ')
	[ "$l" = - ] && [ "$(echo $in | wc -w)" -lt 2 ] && continue
	name="$([ "$l" = - ] || echo "-$l, ")--$o"
	row=$(awk -v l="$l" -v o="$o" -F'|' '{ split($1, k, " ") } k[1] == l && k[2] == o { print $2 }' readme.rows)
	[ "$row" = "every tool" ] && row=$all_tools
	check_eq "memscope(7): the row of $name lists the tools that have it" \
		"$in" "$(printf '%s\n' $(echo "$row" | tr ',' ' ') | sort | tr '\n' ' ')"
done <all.options
while IFS='|' read -r key row; do
	set -- $key
	check_eq "memscope(7): $([ "$1" = - ] || echo "-$1, ")--$2 is an option of some tool's --help" \
		true "$(grep -qx -- "$1 $2" all.options && echo true || echo false)"
done <readme.rows

finish
