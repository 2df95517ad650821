#!/bin/sh
# make screenshot: ms-report's pictures as a browser shows them.
#
# Records examples/leaky (with and without --events) and a program that
# leaks nothing, writes their --html pages and --svg flame graphs, and has
# headless Chromium draw each into a PNG in tests/bench/out/pictures/.  In
# the same browser it checks that the scripts work: searching adds up the
# bytes of the matching frames (a match inside another once), clicking a
# frame zooms into it, pointing at the heap chart gives the figures at the
# end of the run, dragging across it picks the whole run in the time view.
# With --examples it also writes the two small PNGs the
# README can show, examples/pictures/leaky-flame.png and leaky-html.png.
#
# Exit status: 0 when every check passed, 1 when one failed, 2 without
# Chromium.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$TOP/tools:$PATH"
OUT="$TOP/tests/bench/out/pictures"
CHROMIUM=${CHROMIUM:-chromium}
fails=0

command -v "$CHROMIUM" >/dev/null 2>&1 || {
	echo "pictures: $CHROMIUM not found (make screenshot installs it)" >&2
	exit 2
}
rm -rf "$OUT"
mkdir -p "$OUT"
cd "$OUT" || exit 2

# Root has no sandbox to drop into; the pages are our own files.
chrome() {
	"$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
		--user-data-dir="$OUT/.chromium" "$@" 2>>"$OUT/chromium.log"
}
# shot FILE PNG WIDTH HEIGHT
shot() {
	chrome --screenshot="$2" --window-size="$3,$4" "file://$OUT/$1" >/dev/null
	if [ -s "$2" ]; then echo "  PNG     $2 ($(wc -c <"$2") bytes)"; else
		echo "  not ok: no screenshot of $1" >&2
		fails=$((fails + 1))
	fi
}
# inject PAGE SCRIPT OUT: PAGE with SCRIPT run once it has loaded, as OUT;
# what SCRIPT pushes to out goes to the page's data-probe attribute.
inject() {
	{
		echo "<script>//<![CDATA["
		echo "(function () { var out = [];"
		printf "%s\n" "$2"
		echo "document.body.setAttribute('data-probe', out.join(' | ')); })();"
		echo "//]]></script>"
	} >probe.js
	awk '/<\/body>/ { while ((getline l < "probe.js") > 0) print l } { print }' "$1" >"$3"
	rm -f probe.js
}
# probe PAGE SCRIPT: runs SCRIPT in PAGE once it has loaded and prints
# what it leaves in the page's data-probe attribute.
probe() {
	inject "$1" "$2" "probe-$1"
	chrome --window-size=1280,900 --dump-dom "file://$OUT/probe-$1" | grep -o 'data-probe="[^"]*"' |
		sed 's/^data-probe="//; s/"$//; s/&quot;/"/g; s/&amp;/\&/g'
	rm -f "probe-$1"
}
# A drag across the whole heap chart: the time view of the whole run.
DRAG="var hc = document.getElementById('heapchart'), b = hc.getBoundingClientRect();
function at(f) { return { clientX: b.left + b.width * f, clientY: b.top + 40, bubbles: true }; }
hc.dispatchEvent(new MouseEvent('mousedown', at(0.07)));
hc.dispatchEvent(new MouseEvent('mousemove', at(0.99)));
window.dispatchEvent(new MouseEvent('mouseup', at(0.99)));"
# check WHAT EXPECTED ACTUAL
check() {
	if [ "$2" = "$3" ]; then echo "  ok      $1"; else
		echo "  not ok: $1: expected '$2', got '$3'" >&2
		fails=$((fails + 1))
	fi
}

# Recorded as examples/bin/NAME, the command line the pictures show.
(cd "$TOP" &&
	ms-record -q -o "$OUT/leaky.ndjson" examples/bin/leaky &&
	ms-record -q --events -o "$OUT/leaky-events.ndjson" examples/bin/leaky &&
	ms-record -q -o "$OUT/churn.ndjson" examples/bin/churn 0.3) >/dev/null 2>&1
ms-report --html -o leaky.html leaky.ndjson
ms-report --html -o leaky-events.html leaky-events.ndjson
ms-report --svg -o leaky.svg leaky.ndjson
ms-report --svg --icicle --cost bytes -o leaky-icicle.svg leaky.ndjson
ms-report --svg -o churn.svg churn.ndjson
ms-report --html -o churn.html churn.ndjson
rm -f leaky-events.ndjson

# --- the scripts, in the browser --------------------------------------------
page_height() { probe "$1" "out.push(document.documentElement.scrollHeight);"; }
r=$(probe leaky.html "
var svg = document.querySelector('svg.msflame');
svg.msSearch('leak_small');
out.push(svg.querySelector('.matched').textContent);
svg.msSearch('');
out.push(svg.querySelector('.matched').textContent === '' ? 'cleared' : 'not cleared');
var fr = Array.prototype.slice.call(svg.querySelectorAll('.frames > g'));
function named(n) { return fr.filter(function (g) { return g.querySelector('title').textContent.split('\n')[0] === n; })[0]; }
named('leak_page_outer').dispatchEvent(new MouseEvent('click'));
out.push(named('leak_page_outer').querySelector('rect').getAttribute('width'));
out.push(named('leak_small_outer').style.display);
named('leak_page_inner').dispatchEvent(new MouseEvent('mouseover'));
out.push(svg.querySelector('.details').textContent);
document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
out.push(named('leak_small_outer').style.display === '' ? 'unzoomed' : 'still zoomed');
var hc = document.getElementById('heapchart'), b = hc.getBoundingClientRect();
hc.dispatchEvent(new MouseEvent('mousemove', { clientX: b.right - 17, clientY: b.top + 40 }));
out.push(hc.querySelector('.lines').textContent.replace(/ in all.*/, ''));
$DRAG
out.push(document.querySelector('#timeview h2').textContent);
out.push(document.querySelector('#timeview td.mono').textContent);
out.push(document.querySelectorAll('#timeview .ic').length);")
echo "  probe   $r"
L_page=$(grep -n -F 'char *p = calloc(1, 4096);' "$TOP/examples/leaky.c" | cut -d: -f1)
end=$(jq -r 'select(.type=="end") | "\(.ts) \(.live_bytes)"' leaky.ndjson)
end_ms=$(echo "$end" | awk '{ printf "%.1f ms", $1 / 1e6 }')
check "search: the bytes of the matches, nested ones once" \
	'Matched "leak_small": 46.9 KiB (53.57%) in 3 frames' "$(echo "$r" | awk -F' [|] ' '{ print $1 }')"
check "search: cleared" cleared "$(echo "$r" | awk -F' [|] ' '{ print $2 }')"
check "zoom: the frame clicked is as wide as the graph" 1180.0 "$(echo "$r" | awk -F' [|] ' '{ print $3 }')"
check "zoom: a frame beside it is hidden" none "$(echo "$r" | awk -F' [|] ' '{ print $4 }')"
check "pointing at a frame: file:line, module, cost" \
	"leak_page_inner · leaky.c:$L_page in leaky · 40.0 KiB (45.71%)" "$(echo "$r" | awk -F' [|] ' '{ print $5 }')"
check "Escape zooms out" unzoomed "$(echo "$r" | awk -F' [|] ' '{ print $6 }')"
check "the heap chart at the end of the run: the heap left" "$end_ms: 87.5 KiB" \
	"$(echo "$r" | awk -F' [|] ' '{ print $7 }')"
peak_ms=$(jq -r 'select(.type=="end") | .peak_ts / 1e6 * 10 | round / 10' leaky.ndjson)
check "the time view of the whole run: its highest point is the peak" "at $peak_ms ms" \
	"$(echo "$r" | awk -F' [|] ' '{ print $8 }' | grep -o '(the peak) at [0-9.]* ms' | sed 's/(the peak) //')"
check "  its largest site" "leak_small_inner leaky.c:$(grep -n -F 'char *p = malloc(48);' "$TOP/examples/leaky.c" | cut -d: -f1)" \
	"$(echo "$r" | awk -F' [|] ' '{ print $9 }')"
check "  and its flame graph" true "$([ "$(echo "$r" | awk -F' [|] ' '{ print $10 }')" -gt 3 ] && echo true)"

# --- the pictures ------------------------------------------------------------
for p in leaky leaky-events churn; do
	shot $p.html $p-html.png 1280 "$(page_height $p.html)"
done
for s in leaky leaky-icicle churn; do
	shot $s.svg $s-svg.png 1200 "$(grep -o '<svg [^>]*height="[0-9]*"' $s.svg | head -1 | sed 's/.*height="//; s/"//')"
done

if [ "${1:-}" = --examples ]; then
	# Small enough for a README: the page's top (summary, heap by site,
	# the first leaks) and the flame graph.
	mkdir -p "$TOP/examples/pictures"
	# A plain recording's page, with the whole run picked in its time view.
	inject leaky.html "$DRAG" leaky-range.html
	shot leaky-range.html "$TOP/examples/pictures/leaky-html.png" 1100 1500
	rm -f leaky-range.html
	shot leaky.svg "$TOP/examples/pictures/leaky-flame.png" 1200 \
		"$(grep -o '<svg [^>]*height="[0-9]*"' leaky.svg | head -1 | sed 's/.*height="//; s/"//')"
fi
rm -rf "$OUT/.chromium"
[ $fails = 0 ] && echo "pictures: all checks passed; PNGs in $OUT" && exit 0
echo "pictures: $fails checks failed" >&2
exit 1
