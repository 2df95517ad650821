/* SPDX-License-Identifier: MIT */
/* Differences between two loaded streams (diff_load.c): see msc_diff.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_diff.h"
#include "msc_format.h"
#include "msc_hash.h"
#include "msc_util.h"

/* ----------------------------------------------------------------- diff */

static const char *const default_metrics[] = { "rss", "pss", "swap" };
/* Snapshots of processes ms-record records: their sites' live heap first,
 * so that the totals and the gate are the heap's. */
static const char *const live_metrics[] = { "live_bytes", "rss", "pss", "swap" };
/* Snapshots with leaks (ms-snap --leaks): what was lost, first. */
static const char *const leak_metrics[] = { "leaked_bytes", "leaked_blocks", "rss", "pss", "swap" };
/* Recordings: what the heap holds at the end, leaks, the peak and what it
 * is made of, and how often the program allocates. */
static const char *const recording_metrics[] = { "live_bytes", "leaked_bytes", "peak", "at_peak",
						 "allocs" };

bool msc_metric_is_count(const char *name)
{
	static const char *const counts[] = { "allocs", "frees", "live", "leaked_blocks", "count",
					      "temporary", "threads", "lost", "mmaps", "unknown_frees",
					      "minflt", "majflt", "deltas" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counts); i++)
		if (strcmp(counts[i], name) == 0)
			return true;
	return false;
}

const char *const *msc_diff_default_metrics(const struct msc_snapshot *a, const struct msc_snapshot *b,
					    unsigned *n)
{
	if (a->recording || b->recording) {
		*n = ARRAY_SIZE(recording_metrics);
		return recording_metrics;
	}
	if (a->live_leaks || b->live_leaks) {
		*n = ARRAY_SIZE(leak_metrics);
		return leak_metrics;
	}
	if (a->live_sites || b->live_sites) {
		*n = ARRAY_SIZE(live_metrics);
		return live_metrics;
	}
	*n = ARRAY_SIZE(default_metrics);
	return default_metrics;
}

const char **msc_diff_all_metrics(const struct msc_snapshot *a, const struct msc_snapshot *b,
				  unsigned *n)
{
	const struct msc_snapshot *s[2] = { a, b };
	unsigned ndef, count = 0, cap = 16, m;
	const char **names = malloc(cap * sizeof(*names));
	struct msc_strmap seen;
	size_t i, k;

	if (!names || msc_strmap_init(&seen, 64)) {
		free(names);
		return NULL;
	}
	names[count++] = msc_diff_default_metrics(a, b, &ndef)[0];
	if (msc_strmap_put(&seen, names[0], (void *)1))
		goto oom;
	for (k = 0; k < 2; k++)
		for (i = 0; i < s[k]->n; i++)
			for (m = 0; m < s[k]->ents[i].nmetrics; m++) {
				const char *name = s[k]->ents[i].metrics[m].name;

				if (msc_strmap_get(&seen, name))
					continue;
				if (count == cap) {
					const char **nn = realloc(names, 2 * cap * sizeof(*names));

					if (!nn)
						goto oom;
					names = nn;
					cap *= 2;
				}
				names[count++] = name;
				if (msc_strmap_put(&seen, name, (void *)1))
					goto oom;
			}
	msc_strmap_release(&seen);
	*n = count;
	return names;
oom:
	msc_strmap_release(&seen);
	free(names);
	return NULL;
}

bool msc_diff_grew_past(const struct msc_diff *d, uint64_t limit, bool pct)
{
	int64_t growth = msc_sat_sub_i64(d->total_after, d->total_before);

	if (growth <= 0)
		return false;
	if (pct)
		return d->total_before <= 0 ||
		       (double)growth * 100000.0 / (double)d->total_before > (double)limit;
	return (uint64_t)growth > limit;
}

static int add_delta(struct msc_diff *d, size_t *cap, const struct msc_entity *before,
		     const struct msc_entity *after, const char *metric, int64_t vb, int64_t va)
{
	if (MSC_GROW(d->deltas, d->n + 1, *cap, 256))
		return -ENOMEM;
	d->deltas[d->n++] = (struct msc_delta){ before, after, metric, vb, va, msc_sat_sub_i64(va, vb) };
	return 0;
}

static int cmp_delta(const void *x, const void *y)
{
	const struct msc_delta *a = x, *b = y;
	const struct msc_entity *ea = a->after ? a->after : a->before;
	const struct msc_entity *eb = b->after ? b->after : b->before;
	int c;

	/* Processes, mappings, leaks, sites. */
	static const int rank[] = { [MSC_ENT_PROCESS] = 0, [MSC_ENT_MAPPING] = 1, [MSC_ENT_LEAK] = 2,
				    [MSC_ENT_SITE] = 3 };

	if (ea->kind != eb->kind)
		return rank[ea->kind] < rank[eb->kind] ? -1 : 1;
	if (a->change != b->change)
		return a->change > b->change ? -1 : 1;
	if (ea->pid != eb->pid)
		return ea->pid < eb->pid ? -1 : 1;
	c = strcmp(ea->name ? ea->name : "", eb->name ? eb->name : "");
	if (c)
		return c;
	return strcmp(a->metric, b->metric);
}

static bool keep(const struct msc_diff_opts *o, int64_t change)
{
	uint64_t mag = change < 0 ? (uint64_t)0 - (uint64_t)change : (uint64_t)change;

	if (o->all)
		return true;
	if (mag == 0)
		return false;
	return mag >= o->min_change;
}

/* The kind of entity whose figures of metric make the totals: processes
 * when they have it, else the first of mappings, leaks and sites that does
 * (a live snapshot's heap is in its sites only).  Sums over one kind never
 * count a figure twice. */
static enum msc_ent_kind total_kind(const struct msc_snapshot *a, const struct msc_snapshot *b,
				    const char *metric)
{
	static const enum msc_ent_kind order[] = { MSC_ENT_PROCESS, MSC_ENT_MAPPING, MSC_ENT_LEAK,
						   MSC_ENT_SITE };
	const struct msc_snapshot *s[2] = { a, b };
	bool has[MSC_ENT_LEAK + 1] = { false };
	int64_t v;
	size_t i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < s[k]->n; i++)
			if (msc_entity_metric(&s[k]->ents[i], metric, &v))
				has[s[k]->ents[i].kind] = true;
	for (k = 0; k < ARRAY_SIZE(order); k++)
		if (has[order[k]])
			return order[k];
	return MSC_ENT_PROCESS;
}

/* ---------------------------------------------------------------- pairs */

/* The one process of s that `name` names: a pid or a comm (snapshots), a
 * program's name (recordings).  NULL with err set when none or several. */
static const struct msc_entity *named_process(const struct msc_snapshot *s, const char *name,
					      struct msc_err *err)
{
	const struct msc_entity *found = NULL;
	char *end;
	long pid;
	size_t i;
	bool by_pid;

	errno = 0;
	pid = strtol(name, &end, 10);
	by_pid = !s->recording && *name && !*end && !errno && pid > 0 && pid < 0x40000000;
	for (i = 0; i < s->n; i++) {
		const struct msc_entity *e = &s->ents[i];

		if (e->kind != MSC_ENT_PROCESS)
			continue;
		if (by_pid ? e->pid != (int)pid : strcmp(e->comm, name) != 0)
			continue;
		/* A recording's program may have ended several times (--follow):
		 * its name is one program still. */
		if (found && (!s->recording || strcmp(found->comm, e->comm) != 0)) {
			msc_err_set(err, -EINVAL, "%s: several processes named '%s': give a pid",
				    s->source, name);
			return NULL;
		}
		found = found ? found : e;
	}
	if (!found)
		msc_err_set(err, -EINVAL, "%s: no %s '%s' in it", s->source,
			    s->recording ? "program" : by_pid ? "process of pid" : "process named",
			    name);
	return found;
}

static void set_pair(struct msc_diff_pair *p, const struct msc_entity *ea,
		     const struct msc_entity *eb, bool recording)
{
	*p = (struct msc_diff_pair){ ea->comm, eb->comm, 0, 0, 0, 0 };
	if (!recording) {
		p->pid_before = ea->pid;
		p->pid_after = eb->pid;
		p->st_before = ea->starttime;
		p->st_after = eb->starttime;
	}
}

int msc_diff_pair_parse(struct msc_diff_opts *o, const struct msc_snapshot *a,
			const struct msc_snapshot *b, const char *spec, struct msc_err *err)
{
	const char *eq = strchr(spec, '=');
	const struct msc_entity *ea, *eb;
	char before[256];
	unsigned k;

	if (!eq || eq == spec || !eq[1] || (size_t)(eq - spec) >= sizeof(before))
		return msc_err_set(err, -EINVAL, "--pair '%s': give BEFORE=AFTER", spec);
	if (o->npairs == MSC_DIFF_MAX_PAIRS)
		return msc_err_set(err, -EINVAL, "--pair: at most %d pairs", MSC_DIFF_MAX_PAIRS);
	memcpy(before, spec, (size_t)(eq - spec));
	before[eq - spec] = '\0';
	ea = named_process(a, before, err);
	eb = ea ? named_process(b, eq + 1, err) : NULL;
	if (!eb)
		return -EINVAL;
	for (k = 0; k < o->npairs; k++)
		if (o->pairs[k].before == ea->comm || o->pairs[k].after == eb->comm)
			return msc_err_set(err, -EINVAL, "--pair '%s': a process paired twice", spec);
	set_pair(&o->pairs[o->npairs++], ea, eb, a->recording);
	return 0;
}

/* The single program of a recording, or NULL when it holds none or
 * several. */
static const char *single_program(const struct msc_snapshot *s)
{
	const char *prog = NULL;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->ents[i].kind == MSC_ENT_PROCESS) {
			if (prog && strcmp(prog, s->ents[i].comm) != 0)
				return NULL;
			prog = s->ents[i].comm;
		}
	return prog;
}

/* The identity b's entity e is matched by: its own, or, when it belongs to
 * a paired process, the one it would have as the process it is paired
 * with.  Rewritten ids are made in scratch; NULL when out of memory. */
static const char *match_id(const struct msc_diff *d, const struct msc_entity *e,
			    struct msc_arena *scratch)
{
	const struct msc_diff_pair *p = NULL;
	unsigned k;
	char head[96];
	const char *tail;
	char *id;

	for (k = 0; k < d->npairs && !p; k++) {
		const struct msc_diff_pair *q = &d->pairs[k];

		/* A snapshot's process and mappings are its pid's; sites and
		 * leaks, and all of a recording, go by the program's name. */
		if (q->pid_after && (e->kind == MSC_ENT_PROCESS || e->kind == MSC_ENT_MAPPING) ?
			    e->pid == q->pid_after && e->starttime == q->st_after :
			    strcmp(e->comm, q->after) == 0)
			p = q;
	}
	if (!p)
		return e->id;
	if (e->kind == MSC_ENT_PROCESS && !d->a->recording) {
		snprintf(head, sizeof(head), "p/%d/%" PRIu64, p->pid_before, p->st_before);
		tail = "";
	} else if (e->kind == MSC_ENT_MAPPING) {
		snprintf(head, sizeof(head), "m/%d/%" PRIu64 "/%" PRIx64 "/", p->pid_before,
			 p->st_before, e->start);
		tail = e->name;
	} else {
		/* "r/PROG/N", "s/PROG/SIG", "l/PROG/SIG": the program's part. */
		size_t cl = strlen(e->comm);

		if (strlen(e->id) < 2 + cl || strncmp(e->id + 2, e->comm, cl) != 0)
			return e->id;
		snprintf(head, sizeof(head), "%c/", e->id[0]);
		tail = e->id + 2 + cl;
		id = msc_arena_alloc(scratch, strlen(head) + strlen(p->before) + strlen(tail) + 1);
		if (id)
			sprintf(id, "%s%s%s", head, p->before, tail);
		return id;
	}
	id = msc_arena_alloc(scratch, strlen(head) + strlen(tail) + 1);
	if (id)
		sprintf(id, "%s%s", head, tail);
	return id;
}

/* The pairs compute() uses: the user's, else two single programs. */
static void choose_pairs(struct msc_diff *d, const struct msc_diff_opts *o)
{
	const char *pa, *pb;

	memcpy(d->pairs, o->pairs, o->npairs * sizeof(*o->pairs));
	d->npairs = o->npairs;
	if (d->npairs || o->no_auto_pair || !d->a->recording || !d->b->recording)
		return;
	pa = single_program(d->a);
	pb = single_program(d->b);
	if (pa && pb && strcmp(pa, pb) != 0) {
		d->pairs[0] = (struct msc_diff_pair){ pa, pb, 0, 0, 0, 0 };
		d->npairs = 1;
	}
}

int msc_diff_compute(struct msc_diff *d, const struct msc_snapshot *a,
		     const struct msc_snapshot *b, const struct msc_diff_opts *o)
{
	unsigned nmetrics = o->nmetrics;
	const char *const *metrics = o->metrics ? o->metrics : msc_diff_default_metrics(a, b, &nmetrics);
	struct msc_strmap in_b;
	struct msc_arena scratch;
	bool *matched_b = NULL;
	size_t cap = 0, i;
	unsigned m;
	int ret = -ENOMEM;

	memset(d, 0, sizeof(*d));
	d->min_change = o->min_change;
	d->a = a;
	d->b = b;
	d->metrics = metrics;
	d->nmetrics = nmetrics;
	d->primary = metrics[0];
	d->total_kind = total_kind(a, b, d->primary);
	choose_pairs(d, o);
	msc_arena_init(&scratch);
	if (msc_strmap_init(&in_b, b->n)) {
		msc_arena_release(&scratch);
		return -ENOMEM;
	}
	matched_b = calloc(b->n + 1, sizeof(*matched_b));
	if (!matched_b)
		goto out;
	for (i = 0; i < b->n; i++) {
		const char *id = match_id(d, &b->ents[i], &scratch);

		if (!id || msc_strmap_put(&in_b, id, &b->ents[i]))
			goto out;
	}
	for (i = 0; i < a->n; i++) {
		const struct msc_entity *ea = &a->ents[i];
		const struct msc_entity *eb = msc_strmap_get(&in_b, ea->id);

		if (eb)
			matched_b[eb - b->ents] = true;
		if (ea->kind == MSC_ENT_PROCESS) {
			if (eb)
				d->processes_matched++;
			else
				d->processes_gone++;
		}
		for (m = 0; m < nmetrics; m++) {
			int64_t vb = 0, va = 0;

			/* A figure missing on one side is not compared; one
			 * whose entity is gone went to 0. */
			if (!msc_entity_metric(ea, metrics[m], &vb) ||
			    (eb && !msc_entity_metric(eb, metrics[m], &va)))
				continue;
			if (ea->kind == d->total_kind && m == 0) {
				d->total_before = msc_sat_add_i64(d->total_before, vb);
				d->total_after = msc_sat_add_i64(d->total_after, va);
			}
			if (keep(o, msc_sat_sub_i64(va, vb)) && add_delta(d, &cap, ea, eb, metrics[m], vb, va))
				goto out;
		}
	}
	for (i = 0; i < b->n; i++) {
		const struct msc_entity *eb = &b->ents[i];

		if (matched_b[i])
			continue;
		if (eb->kind == MSC_ENT_PROCESS)
			d->processes_new++;
		for (m = 0; m < nmetrics; m++) {
			int64_t va;

			if (!msc_entity_metric(eb, metrics[m], &va))
				continue;
			if (eb->kind == d->total_kind && m == 0)
				d->total_after = msc_sat_add_i64(d->total_after, va);
			if (keep(o, va) && add_delta(d, &cap, NULL, eb, metrics[m], 0, va))
				goto out;
		}
	}
	if (d->n)
		qsort(d->deltas, d->n, sizeof(*d->deltas), cmp_delta);
	ret = 0;
out:
	free(matched_b);
	msc_strmap_release(&in_b);
	msc_arena_release(&scratch);
	return ret;
}

void msc_diff_release(struct msc_diff *d)
{
	free(d->deltas);
	d->deltas = NULL;
	d->n = 0;
}

static const char *status_of(const struct msc_delta *dl)
{
	return !dl->before ? "new" : !dl->after ? "gone" : "changed";
}

/*
 * Writes def's stack record (and its parents' first) unless written: its
 * own frames in place and its parent by id, as the input had them, so that
 * the output is as long as the input's stacks, not as their depths added.
 * Stack ids differ between the two inputs: the output has its own.
 * Returns the output id, 0 when out of memory.
 */
/* The output id of a frame record of the input, writing it first. */
static uint64_t write_frame(struct msc_writer *w, struct msc_u64map *written, uint64_t *next_id,
			    const struct msc_framedef *f)
{
	uint64_t *v = msc_u64map_get(written, (uintptr_t)f), id;
	char head[48];
	int n;

	if (v)
		return *v;
	id = (*next_id)++;
	if (msc_u64map_put(written, (uintptr_t)f, id))
		return 0;
	/* {"type":"frame","id":N, then the frame's members as they were. */
	n = snprintf(head, sizeof(head), "{\"type\":\"frame\",\"id\":%" PRIu64 "%s", id,
		     f->f.json_len > 2 ? "," : "}");
	msc_w_bytes(w, head, (size_t)n);
	if (f->f.json_len > 2)
		msc_w_bytes(w, f->f.json + 1, f->f.json_len - 1);
	msc_w_line(w, "", 0);
	return id;
}

static uint64_t write_stack(struct msc_writer *w, struct msc_u64map *written, uint64_t *next_id,
			    uint64_t *next_frame, const struct msc_stackdef *def)
{
	const struct msc_stackdef *p, **chain;
	uint64_t *v, parent = 0, id = 0;
	size_t n = 0, i;

	for (p = def; p && !msc_u64map_get(written, (uintptr_t)p); p = p->parent)
		n++;
	if (!n)
		return *msc_u64map_get(written, (uintptr_t)def);
	v = p ? msc_u64map_get(written, (uintptr_t)p) : NULL;
	parent = v ? *v : 0;
	chain = malloc(n * sizeof(*chain));
	if (!chain)
		return 0;
	for (i = 0, p = def; i < n; i++, p = p->parent)
		chain[i] = p;
	/* Outermost first: a parent is written before the stacks naming it. */
	for (i = n; i-- > 0;) {
		const struct msc_stackdef *top = chain[i];
		unsigned k;

		/* The frame records it names, before it. */
		for (k = 0; k < top->nown; k++)
			if (top->own[k].def &&
			    !write_frame(w, written, next_frame, top->own[k].def))
				break;
		id = k < top->nown ? 0 : (*next_id)++;
		if (!id || msc_u64map_put(written, (uintptr_t)top, id)) {
			id = 0;
			break;
		}
		msc_w_record(w, MSC_R_STACK);
		msc_w_u64(w, "id", id);
		if (parent)
			msc_w_u64(w, "parent", parent);
		msc_w_arr(w, "frames");
		for (k = 0; k < top->nown; k++) {
			const struct msc_frameref *r = &top->own[k];

			if (r->def)
				msc_w_u64(w, NULL, *msc_u64map_get(written, (uintptr_t)r->def));
			else
				msc_w_raw(w, NULL, r->json, r->len);
		}
		msc_w_arr_end(w);
		msc_w_end(w);
		parent = id;
	}
	free(chain);
	return id;
}

static void write_deltas(const struct msc_diff *d, struct msc_writer *w)
{
	/* A delta's key is the type of the records it compares. */
	static const enum msc_rtype kinds[] = {
		[MSC_ENT_PROCESS] = MSC_R_PROCESS, [MSC_ENT_MAPPING] = MSC_R_MAPPING,
		[MSC_ENT_SITE] = MSC_R_SITE,	   [MSC_ENT_LEAK] = MSC_R_LEAK,
	};
	struct msc_u64map written;	/* stack or frame definition -> output id */
	uint64_t next_id = 1, next_frame = 1;
	bool have_map = msc_u64map_init(&written, 64) == 0;
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct msc_delta *dl = &d->deltas[i];
		const struct msc_entity *e = dl->after ? dl->after : dl->before;
		uint64_t stack = 0;

		if (e->stack && have_map)
			stack = write_stack(w, &written, &next_id, &next_frame, e->stack);
		msc_w_record(w, MSC_R_DELTA);
		msc_w_str(w, "key", msc_rtype_name(kinds[e->kind]));
		if (e->pid)
			msc_w_i64(w, "pid", e->pid);
		if (e->starttime)
			msc_w_u64(w, "starttime", e->starttime);
		msc_w_str(w, "comm", e->comm);
		if (e->kind == MSC_ENT_MAPPING) {
			msc_w_str(w, "name", e->name);
			msc_w_str(w, "kind", e->group);
			if (e->start)
				msc_w_hex(w, "start", e->start);
		} else if (e->kind != MSC_ENT_PROCESS) {
			msc_w_str(w, "name", e->name);
			if (stack)
				msc_w_u64(w, "stack", stack);
		}
		msc_w_str(w, "metric", dl->metric);
		msc_w_i64(w, "before", dl->vbefore);
		msc_w_i64(w, "after", dl->vafter);
		msc_w_i64(w, "change", dl->change);
		msc_w_str(w, "status", status_of(dl));
		msc_w_end(w);
	}
	if (have_map)
		msc_u64map_release(&written);
}

/* --------------------------------------------------------------- output */

void msc_diff_write_stream(const struct msc_diff *d, struct msc_writer *w)
{
	unsigned m;

	msc_stream_header_begin(w, "ms-diff", "diff");
	msc_w_str(w, "before", d->a->source);
	msc_w_str(w, "after", d->b->source);
	msc_w_obj(w, "options");
	msc_w_arr(w, "metrics");
	for (m = 0; m < d->nmetrics; m++)
		msc_w_str(w, NULL, d->metrics[m]);
	msc_w_arr_end(w);
	msc_w_u64(w, "min_change", d->min_change);
	msc_w_obj_end(w);
	msc_w_end(w);
	write_deltas(d, w);
	msc_w_record(w, MSC_R_END);
	msc_w_str(w, "reason", "complete");
	msc_w_u64(w, "deltas", d->n);
	msc_w_str(w, "metric", d->primary);
	msc_w_i64(w, "before", d->total_before);
	msc_w_i64(w, "after", d->total_after);
	msc_w_i64(w, "growth", msc_sat_sub_i64(d->total_after, d->total_before));
	if (d->a->header.start_epoch && d->b->header.start_epoch)
		msc_w_i64(w, "elapsed",
			  (int64_t)(d->b->header.start_epoch - d->a->header.start_epoch));
	msc_w_u64(w, "processes_matched", d->processes_matched);
	msc_w_u64(w, "processes_new", d->processes_new);
	msc_w_u64(w, "processes_gone", d->processes_gone);
	if (d->npairs) {
		unsigned k;

		msc_w_arr(w, "paired");
		for (k = 0; k < d->npairs; k++) {
			const struct msc_diff_pair *p = &d->pairs[k];

			msc_w_obj(w, NULL);
			msc_w_str(w, "before", p->before);
			msc_w_str(w, "after", p->after);
			if (p->pid_before) {
				msc_w_i64(w, "pid_before", p->pid_before);
				msc_w_i64(w, "pid_after", p->pid_after);
			}
			msc_w_obj_end(w);
		}
		msc_w_arr_end(w);
	}
	msc_w_end(w);
}
