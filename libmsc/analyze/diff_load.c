/* SPDX-License-Identifier: MIT */
/* A stream loaded as the entities ms-diff compares: see msc_diff.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
	struct msc_span span;		/* the range, as the stream says it */
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
		if ((s->since || s->until) && (ret = msc_span_leak_rec(&l->span, rec, -ESRCH, err)) <= 0)
			return ret;
		return site_entity(s, l, rec, MSC_ENT_LEAK, err);
	case MSC_R_MARK:
		msc_span_mark(&l->span, rec);
		return 0;
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
	return msc_snapshot_load_range(s, path, NULL, NULL, err);
}

int msc_snapshot_load_range(struct msc_snapshot *s, const char *path, const char *since, const char *until,
			    struct msc_err *err)
{
	struct msc_reader r;
	struct msc_rec rec;
	struct loader l = { 0 };
	bool first = true;
	int ret;

	memset(s, 0, sizeof(*s));
	s->since = since;
	s->until = until;
	msc_span_init(&l.span, since, until);
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
