// SPDX-License-Identifier: MIT
// Runs an ms-report --html page's own script under node, with a document
// that has nothing in it, and prints as JSON what its time view picks for
// the range FROM..TO (ns): node timeview.js PAGE FROM TO
'use strict';
const fs = require('fs');
const [page, from, to] = process.argv.slice(2);
const html = fs.readFileSync(page, 'utf8');
const m = html.match(/<script>\/\/<!\[CDATA\[\n([\s\S]*?)\/\/\]\]><\/script>/);
if (!m) {
	console.error('timeview.js: ' + page + ': no script');
	process.exit(2);
}
// Whatever the page asks of the document: something that takes anything.
function anything() {
	const f = function () { return anything(); };
	return new Proxy(f, {
		get: (t, k) => (k === Symbol.toPrimitive ? () => 0 : anything()),
		set: () => true,
	});
}
let data = null;
const fn = new Function('document', 'window', 'msTimelineHook',
	m[1].replace(/^msTimeline\(/m, 'msTimelineHook(') +
	'\nreturn {pick: msPick, range: msRange};');
const api = fn(anything(), anything(), (d) => { data = d; });
if (!data) {
	console.error('timeview.js: ' + page + ': no timeline');
	process.exit(1);
}
const x = api.pick(data, +from, +to);
const view = {};
api.range(data, view, +from, +to);
console.log(JSON.stringify({
	first: data.ts[x.p0], last: data.ts[x.p1], at: data.ts[x.best], peak: x.best === data.peak,
	heap: data.heap[x.best], other: x.other,
	rows: x.rows.map((r) => ({ site: r.s.n, bytes: r.v, change: r.g })),
	html: typeof view.innerHTML === 'string' ? view.innerHTML.length : -1,
	icicle: (view.innerHTML || '').includes('class="icicle"'),
}));
