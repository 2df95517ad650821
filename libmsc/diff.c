/* SPDX-License-Identifier: MIT */
/* Differences between two streams: see msc_diff.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_diff.h"
#include "msc_format.h"
#include "msc_hash.h"
#include "msc_util.h"

/* ----------------------------------------------------------------- load */

/* Members that say which entity a record is, not how big it is. */
static bool identity_member(enum msc_ent_kind kind, const char *k, size_t n)
{
	static const char *const common[] = { "pid", "ppid", "starttime", "uid", "inode",
					       "offset", "start", "end", "stack", "ts" };
	/* Sites, leaks and a recording's totals: when, and how it ended. */
	static const char *const recorded[] = { "size", "size_max", "first_ts", "last_ts",
						"peak_ts", "status", "signal" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(common); i++)
		if (strlen(common[i]) == n && memcmp(common[i], k, n) == 0)
			return true;
	if (kind != MSC_ENT_MAPPING)
		for (i = 0; i < ARRAY_SIZE(recorded); i++)
			if (strlen(recorded[i]) == n && memcmp(recorded[i], k, n) == 0)
				return true;
	return false;
}

static struct msc_entity *new_entity(struct msc_snapshot *s)
{
	if (MSC_GROW(s->ents, s->n + 1, s->cap, 256))
		return NULL;
	memset(&s->ents[s->n], 0, sizeof(s->ents[0]));
	return &s->ents[s->n++];
}

/* Collects every integer member that is not identity as a metric. */
static int collect_metrics(struct msc_snapshot *s, struct msc_entity *e, const struct msc_rec *rec)
{
	unsigned i, n = 0;
	int64_t pc = 0, pd = 0;
	bool has_pc = false, has_pd = false;

	e->metrics = msc_arena_alloc(&s->arena, (rec->nfields + 1) * sizeof(*e->metrics));
	if (!e->metrics)
		return -ENOMEM;
	for (i = 0; i < rec->nfields; i++) {
		const struct msc_field *f = &rec->fields[i];
		int64_t v;
		uint64_t u;

		if (f->val.kind != MSC_J_INT || f->key_escaped ||
		    identity_member(e->kind, f->key, f->key_len))
			continue;
		/* A count above 2^63 is held there, not left out. */
		if (msc_jval_i64(&f->val, &v)) {
			if (msc_jval_u64(&f->val, &u))
				continue;
			v = msc_clamp_i64(u);
		}
		e->metrics[n].name = msc_arena_strndup(&s->arena, f->key, f->key_len);
		if (!e->metrics[n].name)
			return -ENOMEM;
		e->metrics[n].value = v;
		if (strcmp(e->metrics[n].name, "private_clean") == 0)
			pc = v, has_pc = true;
		if (strcmp(e->metrics[n].name, "private_dirty") == 0)
			pd = v, has_pd = true;
		n++;
	}
	/* "private" (USS): what the process alone holds. */
	if (has_pc && has_pd) {
		e->metrics[n].name = "private";
		e->metrics[n].value = msc_sat_add_i64(pc, pd);
		n++;
	}
	e->nmetrics = n;
	return 0;
}

static const char *rec_strdup(struct msc_snapshot *s, const struct msc_rec *rec, const char *key)
{
	const char *v = msc_rec_str(rec, key, NULL);

	return msc_arena_strdup(&s->arena, v ? v : "");
}

/* ------------------------------------------------------- recordings */

/* What loading a stream needs besides the snapshot. */
struct loader {
	struct msc_u64map procs;	/* pid -> index + 1 of its process entity */
	struct msc_u64map stacks;	/* stack id -> struct rstack * */
	struct msc_strmap ids;		/* entity id -> index + 1 (recordings) */
	const char *prog;		/* the current stream's program */
	unsigned ends;			/* end records seen */
	struct msc_rframe *own;		/* scratch: one stack's own frames */
	unsigned own_cap;
};

/*
 * What a stack is matched and shown by, worked out from its own frames and
 * its parent's figures only (each stack's once, a chain in one pass): the
 * hash of its call path by function name, outermost first (the same
 * whatever the stream's split into own frames and parents), and the frame
 * an allocation is attributed to.
 */
struct rstack {
	struct msc_stackdef *def;	/* def->user is this */
	struct rstack *child;		/* stack_figures' chain */
	bool done;
	uint64_t hash;
	bool has_attr;			/* the stack has a frame */
	struct msc_rframe attr;
};

/* One frame's part of the call path: its function, or module+offset. */
static uint64_t hash_frame(uint64_t h, const struct msc_rframe *f)
{
	char part[600];
	int n;

	if (f->fn)
		n = snprintf(part, sizeof(part), "%s", f->fn);
	else
		n = snprintf(part, sizeof(part), "%s+%s", f->obj ? msc_base_name(f->obj) : "?",
			     f->offset ? f->offset : "?");
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(part))
		n = (int)strlen(part);
	/* The length too: "ab";"c" is not "a";"bc". */
	h = msc_hash_bytes(part, (size_t)n, h);
	return msc_hash_u64(h ^ (uint64_t)n);
}

/* Works out st and every parent of it not done yet, outermost first. */
static int stack_figures(struct msc_snapshot *s, struct loader *l, struct rstack *st)
{
	struct msc_stackdef *d;
	struct rstack *chain_top = st;
	size_t depth = 0;

	/* The parents not done, without recursion: a chain may be
	 * MSC_STACK_MAX_FRAMES long. */
	for (d = st->def; d && !((struct rstack *)d->user)->done; d = d->parent) {
		struct rstack *r = d->user;

		r->child = depth ? chain_top : NULL;
		chain_top = r;
		depth++;
	}
	while (depth--) {
		struct rstack *r = chain_top, *child = r->child;
		const struct rstack *p = r->def->parent ? r->def->parent->user : NULL;
		unsigned k, nown = r->def->nown;

		if (nown > l->own_cap) {
			struct msc_rframe *n = realloc(l->own, nown * sizeof(*n));

			if (!n)
				return -ENOMEM;
			l->own = n;
			l->own_cap = nown;
		}
		msc_stackdef_read_own(&s->defs, r->def, l->own);
		r->hash = p ? p->hash : 0x6d73632d73746b31ull;
		for (k = nown; k-- > 0;)
			r->hash = hash_frame(r->hash, &l->own[k]);
		/* As msc_stack_attr: past the allocator's frames, or the
		 * outermost frame. */
		for (k = 0; k < nown && msc_is_passthrough(l->own[k].fn, NULL, 0); k++)
			;
		if (k < nown) {
			r->attr = l->own[k];
			r->has_attr = true;
		} else if (p && p->has_attr) {
			r->attr = p->attr;
			r->has_attr = true;
		} else if (nown) {
			r->attr = l->own[nown - 1];
			r->has_attr = true;
		} else {
			r->has_attr = false;
		}
		r->done = true;
		chain_top = child;
	}
	return 0;
}

/* A stack record: read, its figures worked out when a record names it. */
static int load_stack(struct msc_snapshot *s, struct loader *l, const struct msc_rec *rec,
		      struct msc_err *err)
{
	struct msc_stackdef *def;
	struct rstack *st;
	uint64_t id;
	int ret;

	if (msc_rec_u64(rec, "id", &id) || !id || id > UINT32_MAX)
		return msc_rec_err(err, rec, -EINVAL, "stack record needs a positive integer \"id\"");
	ret = msc_stackdefs_stack(&s->defs, rec, &def, err);
	if (ret)
		return ret;
	st = msc_arena_zalloc(&s->arena, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->def = def;
	def->user = st;
	return msc_u64map_put(&l->stacks, id, (uint64_t)(uintptr_t)st);
}

/* Adds rec's figures to e's (the same call path seen twice). */
static void merge_metrics(struct msc_entity *e, const struct msc_entity *x)
{
	unsigned i, k;

	for (i = 0; i < x->nmetrics; i++)
		for (k = 0; k < e->nmetrics; k++)
			if (strcmp(e->metrics[k].name, x->metrics[i].name) == 0) {
				e->metrics[k].value = msc_sat_add_i64(e->metrics[k].value,
								      x->metrics[i].value);
				break;
			}
}

/* The entity of a recorded site, leak or end: one per identity, figures of
 * records with the same identity added. */
static int recorded_entity(struct msc_snapshot *s, struct loader *l, const struct msc_rec *rec,
			   enum msc_ent_kind kind, const char *prog, struct msc_err *err)
{
	struct rstack *st = NULL;
	struct msc_entity *e;
	char head[160], label[512] = "", tail[24] = "";
	char *id;
	void *seen;
	uint64_t stack = 0;
	int ret;

	if (kind != MSC_ENT_PROCESS) {
		uint64_t *v;

		ret = msc_rec_u64(rec, "stack", &stack);
		if (ret == -EINVAL || ret == -ERANGE)
			return msc_rec_err(err, rec, -EINVAL, "\"stack\" must be a stack id");
		v = stack ? msc_u64map_get(&l->stacks, stack) : NULL;
		if (stack && !v)
			return msc_rec_err(err, rec, -EINVAL, "%s record refers to stack %" PRIu64
					   ", never defined", rec->type, stack);
		st = v ? (struct rstack *)(uintptr_t)*v : NULL;
		if (st && !st->done && stack_figures(s, l, st))
			return -ENOMEM;
		if (st)
			snprintf(tail, sizeof(tail), "%016" PRIx64, st->hash);
		if (st && st->has_attr)
			msc_frame_label(label, sizeof(label), &st->attr);
		snprintf(head, sizeof(head), "%c/%s/", kind == MSC_ENT_SITE ? 's' : 'l', prog);
	} else {
		snprintf(head, sizeof(head), "r/%s/%u", prog, l->ends++);
	}
	id = msc_arena_alloc(&s->arena, strlen(head) + strlen(tail) + 1);
	if (!id)
		return -ENOMEM;
	strcpy(id, head);
	strcat(id, tail);
	e = new_entity(s);
	if (!e)
		return -ENOMEM;
	e->kind = kind;
	e->id = id;
	e->comm = prog;
	e->name = kind == MSC_ENT_PROCESS ? prog :
		  label[0] ? msc_arena_strdup(&s->arena, label) : "(no stack)";
	if (!e->name)
		return -ENOMEM;
	e->stack = st ? st->def : NULL;
	if (kind == MSC_ENT_LEAK) {
		const char *k = msc_rec_str(rec, "kind", NULL);
		uint64_t bytes = 0, count = 0;

		/* What is still reachable is not a leak. */
		if (k && (strcmp(k, "reachable") == 0 || strcmp(k, "possibly") == 0)) {
			s->n--;
			return 0;
		}
		msc_rec_u64(rec, "bytes", &bytes);
		msc_rec_u64(rec, "count", &count);
		e->metrics = msc_arena_alloc(&s->arena, 2 * sizeof(*e->metrics));
		if (!e->metrics)
			return -ENOMEM;
		e->metrics[0] = (struct msc_metric){ "leaked_bytes", msc_clamp_i64(bytes) };
		e->metrics[1] = (struct msc_metric){ "leaked_blocks", msc_clamp_i64(count) };
		e->nmetrics = 2;
	} else if ((ret = collect_metrics(s, e, rec))) {
		return ret;
	}
	seen = msc_strmap_get(&l->ids, id);
	if (seen) {
		merge_metrics(&s->ents[(uintptr_t)seen - 1], e);
		s->n--;
		return 0;
	}
	return msc_strmap_put(&l->ids, id, (void *)(uintptr_t)s->n);
}

/* A site or a leak: of a recording, or of a live snapshot (ms-snap of a
 * process ms-record records; --leaks for leaks), where it belongs to its
 * pid's process record. */
static int site_entity(struct msc_snapshot *s, struct loader *l, const struct msc_rec *rec,
		       enum msc_ent_kind kind, struct msc_err *err)
{
	const char *prog = l->prog;

	if (!s->recording) {
		int64_t pid = 0;
		uint64_t *pi;

		msc_rec_i64(rec, "pid", &pid);
		pi = pid > 0 ? msc_u64map_get(&l->procs, (uint64_t)pid) : NULL;
		prog = pi ? s->ents[*pi - 1].comm : "?";
		if (kind == MSC_ENT_LEAK)
			s->live_leaks = true;
		else
			s->live_sites = true;
	}
	return recorded_entity(s, l, rec, kind, prog, err);
}

static int load_record(struct msc_snapshot *s, const struct msc_rec *rec,
		       struct loader *l, struct msc_err *err)
{
	struct msc_u64map *procs = &l->procs;
	struct msc_entity *e;
	enum msc_ent_kind kind;
	int64_t pid = 0;
	char idbuf[128];
	int ret;

	switch (msc_rec_rtype(rec)) {
	case MSC_R_PROCESS:
		kind = MSC_ENT_PROCESS;
		break;
	case MSC_R_MAPPING:
		kind = MSC_ENT_MAPPING;
		break;
	case MSC_R_STACK:
		return load_stack(s, l, rec, err);
	case MSC_R_FRAME:
		return msc_stackdefs_frame(&s->defs, rec, NULL, err);
	case MSC_R_SITE:
		return site_entity(s, l, rec, MSC_ENT_SITE, err);
	case MSC_R_LEAK:
		return site_entity(s, l, rec, MSC_ENT_LEAK, err);
	/* Recordings only: a snapshot has none of these. */
	case MSC_R_END:
		return s->recording ? recorded_entity(s, l, rec, MSC_ENT_PROCESS, l->prog, err) : 0;
	default:
		return 0;	/* other records do not take part */
	}
	ret = msc_rec_i64(rec, "pid", &pid);
	if (ret || pid <= 0 || pid >= 0x40000000)
		return msc_rec_err(err, rec, -EINVAL, "%s record needs an integer \"pid\"", rec->type);
	e = new_entity(s);
	if (!e)
		return -ENOMEM;
	e->kind = kind;
	e->pid = (int)pid;
	if (kind == MSC_ENT_PROCESS) {
		ret = msc_rec_u64(rec, "starttime", &e->starttime);
		if (ret == -EINVAL || ret == -ERANGE)
			return msc_rec_err(err, rec, -EINVAL, "\"starttime\" must be an integer");
		e->comm = rec_strdup(s, rec, "comm");
		e->name = e->comm;
		if (!e->comm)
			return -ENOMEM;
		if (msc_u64map_put(procs, (uint64_t)pid, s->n))
			return -ENOMEM;
		snprintf(idbuf, sizeof(idbuf), "p/%d/%" PRIu64, e->pid, e->starttime);
	} else {
		uint64_t *pi = msc_u64map_get(procs, (uint64_t)pid);
		const struct msc_entity *info = pi ? &s->ents[*pi - 1] : NULL;

		e->starttime = info ? info->starttime : 0;
		e->comm = info ? info->comm : "";
		e->name = rec_strdup(s, rec, "name");
		e->group = rec_strdup(s, rec, "kind");
		if (!e->name || !e->group)
			return -ENOMEM;
		if (!msc_rec_field(rec, "name") || msc_rec_field(rec, "name")->val.kind != MSC_J_STR)
			return msc_rec_err(err, rec, -EINVAL, "mapping record needs a string \"name\"");
		ret = msc_rec_hex(rec, "start", &e->start);
		if (ret == -EINVAL || ret == -ERANGE)
			return msc_rec_err(err, rec, -EINVAL, "\"start\" must be an address");
		snprintf(idbuf, sizeof(idbuf), "m/%d/%" PRIu64 "/%" PRIx64 "/", e->pid,
			 e->starttime, e->start);
	}
	{
		size_t il = strlen(idbuf), nl = kind == MSC_ENT_MAPPING ? strlen(e->name) : 0;
		char *id = msc_arena_alloc(&s->arena, il + nl + 1);

		if (!id)
			return -ENOMEM;
		memcpy(id, idbuf, il);
		memcpy(id + il, e->name, nl);
		id[il + nl] = '\0';
		e->id = id;
	}
	return collect_metrics(s, e, rec);
}

/* The program a recording's header names, for matching across runs. */
static const char *header_prog(struct msc_snapshot *s, const struct msc_rec *rec)
{
	const char *exe = msc_rec_str(rec, "exe", NULL);
	const struct msc_field *argv = msc_rec_field(rec, "argv");

	if (!exe && argv && argv->val.kind == MSC_J_ARR) {
		struct msc_jiter it;
		struct msc_jval v;

		msc_jiter_init(&it, &argv->val);
		if (msc_jiter_next(&it, NULL, &v) > 0)
			exe = msc_jval_str(&v, &s->arena, NULL);
	}
	return msc_arena_strdup(&s->arena, exe ? msc_base_name(exe) : "?");
}

int msc_snapshot_load(struct msc_snapshot *s, const char *path, struct msc_err *err)
{
	struct msc_reader r;
	struct msc_rec rec;
	struct loader l = { 0 };
	bool first = true;
	int ret;

	memset(s, 0, sizeof(*s));
	msc_arena_init(&s->arena);
	if (msc_stackdefs_init(&s->defs))
		return -ENOMEM;
	s->source = strdup(path ? path : "-");
	if (!s->source)
		return -ENOMEM;
	ret = msc_reader_open(&r, path, err);
	if (ret)
		return ret;
	if (msc_u64map_init(&l.procs, 64) || msc_u64map_init(&l.stacks, 256) ||
	    msc_strmap_init(&l.ids, 256)) {
		msc_u64map_release(&l.procs);
		msc_u64map_release(&l.stacks);
		msc_strmap_release(&l.ids);
		msc_reader_release(&r);
		return msc_err_set(err, -ENOMEM, "out of memory");
	}
	s->defs.keep_json = true;
	while ((ret = msc_reader_next(&r, &rec, err)) > 0) {
		if (first) {
			ret = msc_stream_parse_header(&rec, &s->header, err);
			if (ret)
				break;
			s->recording = strcmp(s->header.tool, "ms-record") == 0;
			first = false;
		}
		if (msc_rec_rtype(&rec) == MSC_R_HEADER) {
			/* Each process of an ms-record --follow stream. */
			l.prog = header_prog(s, &rec);
			if (!l.prog) {
				ret = msc_err_set(err, -ENOMEM, "%s: out of memory", r.name);
				break;
			}
			continue;
		}
		if (msc_rec_rtype(&rec) == MSC_R_END)
			s->complete = true;
		ret = load_record(s, &rec, &l, err);
		if (ret == -ENOMEM)
			msc_err_set(err, ret, "%s: out of memory", r.name);
		if (ret)
			break;
	}
	if (ret == 0 && first)
		ret = msc_err_set(err, -EINVAL, "%s: empty input (no header record)", r.name);
	msc_u64map_release(&l.procs);
	msc_u64map_release(&l.stacks);
	msc_strmap_release(&l.ids);
	free(l.own);
	msc_reader_release(&r);
	return ret;
}

void msc_snapshot_release(struct msc_snapshot *s)
{
	msc_stackdefs_release(&s->defs);
	free(s->ents);
	free(s->source);
	msc_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}

bool msc_entity_metric(const struct msc_entity *e, const char *name, int64_t *value)
{
	unsigned i;

	for (i = 0; i < e->nmetrics; i++)
		if (strcmp(e->metrics[i].name, name) == 0) {
			*value = e->metrics[i].value;
			return true;
		}
	return false;
}

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
