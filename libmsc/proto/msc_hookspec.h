/* SPDX-License-Identifier: MIT */
/*
 * msc_hookspec: the grammar of `ms-record --hook SPEC`, shared by ms-record
 * (which checks what the user wrote) and the shim (which reads the specs
 * back from MEMSCOPE_HOOKS): one parser, so that both agree.  Header only,
 * no allocation, no libc: the shim runs it in its constructor.
 *
 *	NAME=alloc,size=argN		returns a block of argN bytes
 *	NAME=free,ptr=argN		argN's block ends
 *	NAME=realloc,ptr=argN,size=argM	argN's block ends, and the one it
 *					returns has argM bytes
 *
 * Arguments are numbered from 1 to MSC_HOOK_ARGS: the integer and pointer
 * arguments of the x86_64 SysV convention, which travel in registers.
 * MEMSCOPE_HOOKS holds the specs joined with ';'.
 */
#ifndef MSC_HOOKSPEC_H
#define MSC_HOOKSPEC_H

#include <stddef.h>

#define MSC_HOOK_MAX 16		/* hooks per run: the shim's trampolines */
#define MSC_HOOK_ARGS 6
#define MSC_HOOK_NAME 64	/* NUL included */

enum msc_hook_kind {
	MSC_HOOK_ALLOC = 1,
	MSC_HOOK_FREE,
	MSC_HOOK_REALLOC,
};

struct msc_hookspec {
	char name[MSC_HOOK_NAME];
	unsigned kind;			/* enum msc_hook_kind */
	unsigned ptr_arg, size_arg;	/* 1-based; 0 = not used */
};

/* Does s[0..n) equal the NUL-terminated word w? */
static inline int msc_hookspec_is(const char *s, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n && w[i]; i++)
		if (s[i] != w[i])
			return 0;
	return i == n && !w[i];
}

/* "key=argN" in s[0..n): N, or 0 when it is not that key or not 1..6. */
static inline unsigned msc_hookspec_arg(const char *s, size_t n, const char *key)
{
	size_t k = 0;

	while (key[k] && k < n && s[k] == key[k])
		k++;
	if (key[k] || n != k + 5 || s[k] != '=' || s[k + 1] != 'a' || s[k + 2] != 'r' ||
	    s[k + 3] != 'g' || s[k + 4] < '1' || s[k + 4] > '0' + MSC_HOOK_ARGS)
		return 0;
	return (unsigned)(s[k + 4] - '0');
}

/*
 * Parses one spec, s[0..len), into *h.  Returns 0, or -1 with *why saying
 * what is wrong (a constant string).
 */
static inline int msc_hookspec_parse(const char *s, size_t len, struct msc_hookspec *h,
				     const char **why)
{
	size_t i = 0, start, n;
	unsigned field = 0;

	*h = (struct msc_hookspec){ { 0 }, 0, 0, 0 };
	/* A C identifier, or a versioned one (name@VERSION) is not ours:
	 * the GOT names the symbol alone. */
	while (i < len && s[i] != '=') {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		      (i && c >= '0' && c <= '9'))) {
			*why = "NAME must be a C identifier";
			return -1;
		}
		if (i == MSC_HOOK_NAME - 1) {
			*why = "NAME is too long";
			return -1;
		}
		h->name[i] = c;
		i++;
	}
	if (!i || i == len) {
		*why = "expected NAME=alloc|free|realloc,...";
		return -1;
	}
	for (i++; i <= len; i++) {
		start = i;
		while (i < len && s[i] != ',')
			i++;
		n = i - start;
		if (field == 0) {
			if (msc_hookspec_is(s + start, n, "alloc"))
				h->kind = MSC_HOOK_ALLOC;
			else if (msc_hookspec_is(s + start, n, "free"))
				h->kind = MSC_HOOK_FREE;
			else if (msc_hookspec_is(s + start, n, "realloc"))
				h->kind = MSC_HOOK_REALLOC;
			else {
				*why = "the kind must be alloc, free or realloc";
				return -1;
			}
		} else if (msc_hookspec_arg(s + start, n, "size") && !h->size_arg &&
			   h->kind != MSC_HOOK_FREE) {
			h->size_arg = msc_hookspec_arg(s + start, n, "size");
		} else if (msc_hookspec_arg(s + start, n, "ptr") && !h->ptr_arg &&
			   h->kind != MSC_HOOK_ALLOC) {
			h->ptr_arg = msc_hookspec_arg(s + start, n, "ptr");
		} else {
			*why = h->kind == MSC_HOOK_ALLOC ? "alloc takes size=argN (N from 1 to 6)" :
			       h->kind == MSC_HOOK_FREE ? "free takes ptr=argN (N from 1 to 6)" :
			       "realloc takes ptr=argN,size=argM (from 1 to 6)";
			return -1;
		}
		field++;
	}
	if ((h->kind != MSC_HOOK_FREE && !h->size_arg) || (h->kind != MSC_HOOK_ALLOC && !h->ptr_arg)) {
		*why = h->kind == MSC_HOOK_ALLOC ? "alloc needs size=argN" :
		       h->kind == MSC_HOOK_FREE ? "free needs ptr=argN" :
		       "realloc needs ptr=argN and size=argM";
		return -1;
	}
	return 0;
}

#endif
