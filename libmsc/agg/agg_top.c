/* SPDX-License-Identifier: MIT */
/* The stacks that hold the most live bytes now: see msc_agg.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"

static bool mapped_fn(unsigned fn)
{
	return fn == MSC_FN_MMAP || fn == MSC_FN_MREMAP || fn == MSC_FN_BRK;
}

/* Before: more bytes, or as many and a lower stack id. */
static bool before(uint64_t bytes, uint32_t stack, const struct msc_stack_bytes *e)
{
	return bytes > e->bytes || (bytes == e->bytes && stack < e->stack);
}

long msc_agg_top_stacks(const struct msc_agg *a, struct msc_stack_bytes *out, unsigned k,
			uint64_t **sums, size_t *cap)
{
	uint32_t i, top = 0;
	uint64_t *sum;

	if (a->stack_sites_cap > *cap) {
		size_t n = a->stack_sites_cap;
		uint64_t *p = realloc(*sums, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		memset(p + *cap, 0, (n - *cap) * sizeof(*p));
		*sums = p;
		*cap = n;
	}
	sum = *sums;
	for (i = 0; i < a->nsites; i++) {
		const struct msc_site *s = &a->sites[i];

		if (!s->removed && s->live_bytes && s->stack < *cap && !mapped_fn(s->fn))
			sum[s->stack] += s->live_bytes;
	}
	/* A second walk takes each stack once (its first site), in a sorted
	 * array of k: most stacks fall below its last entry at once. */
	for (i = 0; i < a->nsites; i++) {
		const struct msc_site *s = &a->sites[i];
		uint64_t b;
		unsigned j;

		if (s->removed || s->stack >= *cap || !(b = sum[s->stack]))
			continue;
		sum[s->stack] = 0;
		if (!k || (top == k && !before(b, s->stack, &out[k - 1])))
			continue;
		j = top < k ? top++ : k - 1;
		for (; j > 0 && before(b, s->stack, &out[j - 1]); j--)
			out[j] = out[j - 1];
		out[j] = (struct msc_stack_bytes){ s->stack, b };
	}
	return top;
}
