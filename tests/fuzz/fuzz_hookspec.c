/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: ms-record's --hook grammar (NAME=alloc|free|realloc,
 * size=argN, ptr=argN), as the shim parses MEMSCOPE_HOOKS: specs separated
 * by ';'.  A spec that parses must say what the grammar allows.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "msc_hookspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *why;
	size_t start = 0, i;

	for (i = 0; i <= size; i++) {
		struct msc_hookspec h;

		if (i < size && s[i] != ';')
			continue;
		memset(&h, 0xa5, sizeof(h));
		why = NULL;
		if (msc_hookspec_parse(s + start, i - start, &h, &why) == 0) {
			/* what a parsed spec promises the shim */
			if (!memchr(h.name, '\0', sizeof(h.name)) || !h.name[0])
				abort();
			if (h.ptr_arg > MSC_HOOK_ARGS || h.size_arg > MSC_HOOK_ARGS)
				abort();
			if (h.kind < MSC_HOOK_ALLOC || h.kind > MSC_HOOK_REALLOC)
				abort();
			if ((h.kind != MSC_HOOK_FREE) != (h.size_arg != 0) ||
			    (h.kind != MSC_HOOK_ALLOC) != (h.ptr_arg != 0))
				abort();
		} else if (!why) {
			abort();
		}
		start = i + 1;
	}
	return 0;
}
