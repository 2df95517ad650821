/* SPDX-License-Identifier: MIT */
/*
 * What a ring says of stacks, besides its events: each thread's view of the
 * modules (MODULES, MODULE, MODULES_END records), the frames of a STACK
 * record placed in their modules (by /proc/PID/maps for an address no map
 * covers) and interned, and the shim's stack ids mapped to the canonical
 * ones.  Called once per such record, never per allocation or free.
 */
#include <stdlib.h>
#include <string.h>

#include "collect_internal.h"
#include "msc_hash.h"
#include "msc_proc.h"
#include "msc_stacks.h"
#include "msc_util.h"

/* The table indexed by stack id grows to ids below twice the stacks seen
 * plus this (collect_handle_stack). */
#define STACK_MAP_SLACK 65536u

static const struct modseg *find_seg(const struct modmap *m, uint64_t ip)
{
	size_t lo = 0, hi;

	if (!m || !m->n)
		return NULL;
	hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->segs[mid].end <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n && m->segs[lo].start <= ip && ip < m->segs[lo].end)
		return &m->segs[lo];
	return NULL;
}

static int cmp_seg(const void *x, const void *y)
{
	const struct modseg *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

struct procmaps_walk {
	struct msc_collector *c;
	struct modmap *m;
	size_t cap;
};

/* A file mapping becomes a segment of its module (by path: no build-id). */
static int procmaps_seg(const struct msc_mapping *mp, void *arg)
{
	struct procmaps_walk *pw = arg;
	struct modmap *m = pw->m;
	long mod;

	if (mp->path[0] != '/')
		return 0;
	mod = msc_stacks_module(pw->c->stacks, mp->path, NULL, 0);
	if (mod < 0)
		return 0;
	if (MSC_GROW(m->segs, m->n + 1, pw->cap, 64))
		return 1;
	m->segs[m->n++] = (struct modseg){ mp->start, mp->end, mp->start - mp->offset, (uint32_t)mod };
	return 0;
}

/* Reads /proc/PID/maps for an address no module map knows (a race with
 * dlopen, or code the loader does not know). */
static const struct modseg *procmaps_lookup(struct msc_collector *c,
					    struct msc_collector_private *p, uint64_t ip)
{
	const struct modseg *s = find_seg(p->procmaps, ip);
	uint64_t now = msc_now_monotonic();
	struct procmaps_walk pw = { c, NULL, 0 };
	struct msc_procfs fs;

	if (s || now - p->procmaps_at < 100000000ull)	/* at most 10 reads a second */
		return s;
	p->procmaps_at = now;
	pw.m = calloc(1, sizeof(*pw.m));
	if (!pw.m || msc_procfs_init(&fs, NULL)) {
		free(pw.m);
		return NULL;
	}
	if (msc_proc_maps(&fs, p->pub.pid, procmaps_seg, &pw, NULL) < 0) {
		msc_procfs_release(&fs);
		free(pw.m->segs);
		free(pw.m);
		return NULL;
	}
	msc_procfs_release(&fs);
	if (p->procmaps) {
		free(p->procmaps->segs);
		free(p->procmaps);
	}
	p->procmaps = pw.m;
	if (pw.m->n)
		qsort(pw.m->segs, pw.m->n, sizeof(*pw.m->segs), cmp_seg);
	return find_seg(pw.m, ip);
}

void collect_handle_stack(struct msc_collector *c, struct msc_collector_private *p,
			  struct ring_cur *cur, uint32_t shim_id, const uint64_t *ips, unsigned n)
{
	struct msc_frame_ref f[MSC_PROTO_MAX_DEPTH];
	uint32_t id;
	unsigned i;

	if (n > MSC_PROTO_MAX_DEPTH)
		n = MSC_PROTO_MAX_DEPTH;
	for (i = 0; i < n; i++) {
		const struct modseg *s = find_seg(cur->mods, ips[i]);

		if (!s)
			s = procmaps_lookup(c, p, ips[i]);
		f[i].ip = ips[i];
		if (s) {
			f[i].module = s->module;
			f[i].addr = ips[i] - s->base;
		} else {
			f[i].module = MSC_NO_MODULE;
			f[i].addr = ips[i];
		}
	}
	id = msc_stacks_intern(c->stacks, f, n);
	/*
	 * The shim hands ids out in sequence (ctl->next_stack), so a table
	 * indexed by id is the map, and grows as the ids do.  But the id is
	 * a word the target wrote: the table grows only as far as the stacks
	 * received justify, and an id beyond goes to a hash table (so do ids
	 * run ahead by the STACK records lossy mode dropped).  One record must
	 * not make the collector allocate gigabytes, nor double a capacity
	 * past 2^31 to 0, forever.
	 */
	p->stacks_seen++;
	if (shim_id >= p->stack_map_cap && shim_id < 0x80000000u &&
	    shim_id < 2 * ((uint64_t)p->stacks_seen + STACK_MAP_SLACK)) {
		uint64_t ncap = p->stack_map_cap;
		uint32_t *nm;

		while (ncap <= shim_id)
			ncap *= 2;
		nm = realloc(p->stack_map, ncap * sizeof(*nm));
		if (!nm)
			return;
		memset(nm + p->stack_map_cap, 0, (ncap - p->stack_map_cap) * sizeof(*nm));
		p->stack_map = nm;
		p->stack_map_cap = (uint32_t)ncap;
	}
	if (shim_id < p->stack_map_cap) {
		p->stack_map[shim_id] = id;
		return;
	}
	if (!p->stack_far.slots && msc_u64map_init(&p->stack_far, 64))
		return;
	msc_u64map_put(&p->stack_far, (uint64_t)shim_id + 1, id);
}

void collect_handle_module(struct msc_collector *c, struct ring_cur *cur, const uint64_t *rec,
			   unsigned words)
{
	uint64_t base = rec[1], nseg = rec[3];
	unsigned id_len = (unsigned)(rec[2] >> 32), path_len = (unsigned)(rec[2] & 0xffffffff);
	const uint8_t *bytes;
	char path[4096];
	long mod;
	uint64_t i;

	if (nseg > 64 || 4 + 2 * nseg + (id_len + 7) / 8 + (path_len + 8) / 8 > words ||
	    path_len >= sizeof(path) || id_len > 64)
		return;
	bytes = (const uint8_t *)(rec + 4 + 2 * nseg);
	memcpy(path, bytes + ((id_len + 7) & ~7u), path_len);
	path[path_len] = '\0';
	mod = msc_stacks_module(c->stacks, path, bytes, id_len);
	if (mod < 0)
		return;
	for (i = 0; i < nseg; i++) {
		if (MSC_GROW(cur->build, cur->nbuild + 1, cur->capbuild, 64))
			return;
		cur->build[cur->nbuild++] = (struct modseg){ rec[4 + 2 * i], rec[5 + 2 * i], base,
							     (uint32_t)mod };
	}
}

/* Field by field: memcmp would read the structs' padding, never set. */
static bool same_segs(const struct modseg *a, const struct modseg *b, size_t na, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].base != b[i].base ||
		    a[i].module != b[i].module)
			return false;
	return true;
}

void collect_finish_modmap(struct msc_collector_private *p, struct ring_cur *cur)
{
	struct modmap *m = calloc(1, sizeof(*m));

	cur->building = false;
	if (!m)
		return;
	m->segs = malloc((cur->nbuild ? cur->nbuild : 1) * sizeof(*m->segs));
	if (!m->segs) {
		free(m);
		return;
	}
	memcpy(m->segs, cur->build, cur->nbuild * sizeof(*m->segs));
	m->n = cur->nbuild;
	qsort(m->segs, m->n, sizeof(*m->segs), cmp_seg);
	/* Share the previous map when nothing changed (most threads). */
	if (p->maps && same_segs(p->maps->segs, m->segs, p->maps->n, m->n)) {
		free(m->segs);
		free(m);
		cur->mods = p->maps;
		return;
	}
	m->next = p->maps;
	p->maps = m;
	cur->mods = m;
}
