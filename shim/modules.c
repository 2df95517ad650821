/* SPDX-License-Identifier: MIT */
/*
 * Module maps: what is loaded where, with build-ids, so that the collector
 * can symbolize module + offset after the program has gone.
 *
 * A thread sends the map (a MODULES record, one MODULE per object from
 * dl_iterate_phdr: base, PT_LOAD ranges, GNU build-id, path, then
 * MODULES_END) on its own ring before the first stack it interns after the
 * loaded set changed, as dl_iterate_phdr's adds/subs counters tell.  So a
 * stack never reaches the collector before the modules its addresses are
 * in, whatever was dlopen'ed meanwhile, and no hook on dlopen is needed
 * (dlclose.S says why there is none).
 *
 * Owns nothing but the per-thread counters in struct tstate (mod_adds,
 * mod_subs).
 */
#include <elf.h>
#include <link.h>
#include <string.h>

#include "shim.h"

struct mod_walk {
	struct tstate *t;
	unsigned long adds, subs;
	bool emit, ok;
};

static int mod_count_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod_walk *w = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		w->adds = info->dlpi_adds;
		w->subs = info->dlpi_subs;
	}
	return 1;
}

static int mod_emit_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod_walk *w = arg;
	const char *path = info->dlpi_name;
	const uint8_t *bid = NULL;
	size_t bid_len = 0, path_len;
	unsigned nseg = 0, words, i;
	uint64_t *rec;

	(void)size;
	if (!path || !path[0])
		path = g_conf.exe;
	path_len = strlen(path);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD)
			nseg++;
		if (ph->p_type == PT_NOTE && !bid) {
			const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
			const uint8_t *end = p + ph->p_memsz;

			while (p + sizeof(ElfW(Nhdr)) <= end) {
				const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
				const uint8_t *name = p + sizeof(*nh);
				const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);

				if (desc + nh->n_descsz > end)
					break;
				if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
				    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= 64) {
					bid = desc;
					bid_len = nh->n_descsz;
					break;
				}
				p = desc + ((nh->n_descsz + 3) & ~3u);
			}
		}
	}
	if (path_len > 4000)
		path_len = 4000;
	words = 4 + 2 * nseg + (unsigned)((bid_len + 7) / 8) + (unsigned)((path_len + 1 + 7) / 8);
	rec = ring_begin(w->t, words);
	if (!rec) {
		w->ok = false;
		return 1;
	}
	rec[0] = msc_ev_hdr(MSC_EV_MODULE, 0, words, 0);
	rec[1] = info->dlpi_addr;
	rec[2] = (uint64_t)bid_len << 32 | path_len;
	rec[3] = nseg;
	{
		uint64_t *seg = rec + 4;
		uint8_t *bytes;

		for (i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

			if (ph->p_type != PT_LOAD)
				continue;
			*seg++ = info->dlpi_addr + ph->p_vaddr;
			*seg++ = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
		bytes = (uint8_t *)seg;
		memset(bytes, 0, (words - 4 - 2 * nseg) * 8);
		if (bid_len)
			memcpy(bytes, bid, bid_len);
		memcpy(bytes + ((bid_len + 7) & ~(size_t)7), path, path_len);
	}
	ring_commit(w->t, words);
	return 0;
}

void modules_check(struct tstate *t)
{
	struct mod_walk w = { .t = t, .ok = true };
	uint64_t *rec;

	dl_iterate_phdr(mod_count_cb, &w);
	if (w.adds == t->mod_adds && w.subs == t->mod_subs && t->mod_adds)
		return;
	rec = ring_begin(t, 2);
	if (!rec)
		return;
	rec[0] = msc_ev_hdr(MSC_EV_MODULES, 0, 2, 0);
	rec[1] = now();
	ring_commit(t, 2);
	dl_iterate_phdr(mod_emit_cb, &w);
	rec = ring_begin(t, 1);
	if (!rec)
		return;
	rec[0] = msc_ev_hdr(MSC_EV_MODULES_END, 0, 1, 0);
	ring_commit(t, 1);
	if (w.ok) {
		t->mod_adds = w.adds ? w.adds : 1;
		t->mod_subs = w.subs;
	}
}
