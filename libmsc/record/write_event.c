/* SPDX-License-Identifier: MIT */
/* The --events record of a collector's event.  See msc_collect.h. */
#include <string.h>

#include "msc_collect.h"
#include "msc_format.h"
#include "msc_util.h"

void msc_write_event(struct msc_writer *w, const struct msc_cevent *ev, int pid,
		     const struct msc_freed *fr)
{
	static const enum msc_rtype types[] = {
		[MSC_CEV_ALLOC] = MSC_R_ALLOC,	 [MSC_CEV_FREE] = MSC_R_FREE,
		[MSC_CEV_UNFREE] = MSC_R_UNFREE, [MSC_CEV_MMAP] = MSC_R_MMAP,
		[MSC_CEV_MUNMAP] = MSC_R_MUNMAP, [MSC_CEV_MREMAP] = MSC_R_MREMAP,
		[MSC_CEV_BRK] = MSC_R_BRK,	 [MSC_CEV_THREAD] = MSC_R_THREAD,
		[MSC_CEV_POOL_CREATE] = MSC_R_POOL, [MSC_CEV_POOL_DESTROY] = MSC_R_POOL,
		[MSC_CEV_HIDDEN] = MSC_R_HIDDEN,
	};

	if (ev->type >= ARRAY_SIZE(types) || types[ev->type] == MSC_R_OTHER)
		return;
	msc_w_record(w, types[ev->type]);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "ts", ev->ts);
	msc_w_u64(w, "tid", ev->tid);
	switch (ev->type) {
	case MSC_CEV_ALLOC:
		msc_w_hex(w, "ptr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		msc_w_str(w, "fn", msc_fn_name(ev->fn));
		if (ev->fn == MSC_FN_CUSTOM && ev->v[2])
			msc_w_hex(w, "pool", ev->v[2]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_FREE:
		msc_w_hex(w, "ptr", ev->v[0]);
		msc_w_str(w, "fn", msc_fn_name(ev->fn));
		if (ev->fn == MSC_FN_CUSTOM && ev->v[1])
			msc_w_hex(w, "pool", ev->v[1]);
		if (fr) {
			msc_w_u64(w, "size", fr->size);
			msc_w_u64(w, "stack", fr->stack);
			msc_w_u64(w, "alloc_ts", fr->alloc_ts);
		}
		if (ev->v[2])
			msc_w_bool(w, "temporary", true);
		break;
	case MSC_CEV_UNFREE:
	case MSC_CEV_HIDDEN:
		msc_w_hex(w, "ptr", ev->v[0]);
		break;
	case MSC_CEV_MMAP:
		msc_w_hex(w, "addr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_MUNMAP:
		msc_w_hex(w, "addr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		break;
	case MSC_CEV_MREMAP:
		msc_w_hex(w, "old", ev->v[0]);
		msc_w_u64(w, "old_size", ev->v[1]);
		msc_w_hex(w, "addr", ev->v[2]);
		msc_w_u64(w, "size", ev->v[3]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_BRK:
		msc_w_hex(w, "old", ev->v[0]);
		msc_w_hex(w, "new", ev->v[1]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_POOL_CREATE:
	case MSC_CEV_POOL_DESTROY: {
		char name[MSC_POOL_NAME];

		msc_w_str(w, "op", ev->type == MSC_CEV_POOL_CREATE ? "create" : "destroy");
		msc_w_hex(w, "pool", ev->v[0]);
		if (ev->type == MSC_CEV_POOL_CREATE) {
			memcpy(name, &ev->v[1], sizeof(name));
			name[sizeof(name) - 1] = '\0';
			msc_w_str(w, "name", name);
		}
		msc_w_u64(w, "stack", ev->stack);
		break;
	}
	default:
		break;
	}
	msc_w_end(w);
}
