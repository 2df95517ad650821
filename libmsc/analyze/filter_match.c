/* SPDX-License-Identifier: MIT */
/*
 * The rules of ms-filter that name frames: patterns (--ignore, --only and
 * the like) and LeakSanitizer suppression files; and those that name marks
 * (--since, --until).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_filter.h"
#include "msc_util.h"
#include "filter_internal.h"

/* ------------------------------------------------------------ matching */

bool msc_frame_matches(const char *pattern, const char *fn, const char *file, const char *obj)
{
	char buf[512];
	const char *base;

	if (fn) {
		const char *paren = strchr(fn, '(');

		if (glob_or_equal(pattern, fn))
			return true;
		/* "ns::Widget::grow(unsigned long)" also as "ns::Widget::grow" */
		if (paren && (size_t)(paren - fn) < sizeof(buf)) {
			memcpy(buf, fn, (size_t)(paren - fn));
			buf[paren - fn] = '\0';
			if (glob_or_equal(pattern, buf))
				return true;
		}
	}
	if (file) {
		base = strrchr(file, '/');
		if (glob_or_equal(pattern, file) || (base && glob_or_equal(pattern, base + 1)))
			return true;
	}
	if (obj) {
		const char *so;

		base = strrchr(obj, '/');
		base = base ? base + 1 : obj;
		if (glob_or_equal(pattern, obj) || glob_or_equal(pattern, base))
			return true;
		/* "libc" for libc.so.6 */
		so = strstr(base, ".so");
		if (so && (size_t)(so - base) < sizeof(buf)) {
			memcpy(buf, base, (size_t)(so - base));
			buf[so - base] = '\0';
			if (glob_or_equal(pattern, buf))
				return true;
		}
	}
	return false;
}

/* -------------------------------------------------------- suppressions */

int msc_supp_load(struct msc_supp *s, const char *path, struct msc_err *err)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	if (!f)
		return msc_err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *end;
		struct msc_supp_rule *r, *nr;
		size_t plen;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!*p || *p == '#')
			continue;
		if (strncmp(p, "leak:", 5) != 0) {
			ret = msc_err_set(err, -EINVAL, "%s:%u: not a suppression: '%.60s' "
					  "(expected leak:PATTERN)", path, lineno, p);
			break;
		}
		p += 5;
		if (!*p) {
			ret = msc_err_set(err, -EINVAL, "%s:%u: empty pattern after 'leak:'", path, lineno);
			break;
		}
		nr = realloc(s->rules, (s->n + 1) * sizeof(*nr));
		if (!nr) {
			ret = msc_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		s->rules = nr;
		r = &s->rules[s->n];
		memset(r, 0, sizeof(*r));
		r->line = lineno;
		r->pattern = strdup(p);
		/* LSan: a substring unless anchored by ^ or $. */
		plen = strlen(p);
		r->glob = malloc(2 * plen + 3);
		if (!r->pattern || !r->glob) {
			free(r->pattern);
			free(r->glob);
			ret = msc_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		{
			char *g = r->glob;
			const char *q = p;
			size_t qlen = plen;

			if (*q == '^') {
				q++;
				qlen--;
			} else {
				*g++ = '*';
			}
			bool anchored = qlen && q[qlen - 1] == '$';

			if (anchored)
				qlen--;
			/* LeakSanitizer knows only '*': '?', '[' and '\\' are
			 * themselves (operator[], templates). */
			for (size_t k = 0; k < qlen; k++) {
				if (q[k] == '?' || q[k] == '[' || q[k] == ']' || q[k] == '\\')
					*g++ = '\\';
				*g++ = q[k];
			}
			if (!anchored)
				*g++ = '*';
			*g = '\0';
		}
		s->n++;
	}
	if (!ret && ferror(f))
		ret = msc_err_set(err, -EIO, "%s: read error", path);
	free(line);
	fclose(f);
	if (ret)
		msc_supp_release(s);
	return ret;
}

void msc_supp_release(struct msc_supp *s)
{
	unsigned i;

	for (i = 0; i < s->n; i++) {
		free(s->rules[i].pattern);
		free(s->rules[i].glob);
	}
	free(s->rules);
	memset(s, 0, sizeof(*s));
}

void msc_supp_print_used(const struct msc_supp *s, FILE *out)
{
	unsigned i;
	bool any = false;

	for (i = 0; i < s->n; i++)
		any |= s->rules[i].hits > 0;
	if (!any)
		return;
	fprintf(out, "-----------------------------------------------------\n");
	fprintf(out, "Suppressions used:\n");
	fprintf(out, "  count      bytes template\n");
	for (i = 0; i < s->n; i++)
		if (s->rules[i].hits)
			fprintf(out, "%7llu %10llu %s\n", (unsigned long long)s->rules[i].hits,
				(unsigned long long)s->rules[i].bytes, s->rules[i].pattern);
	fprintf(out, "-----------------------------------------------------\n");
}

void filter_range_start(const struct msc_filter_opts *o, struct stream *s)
{
	msc_span_init(&s->span, o->since, o->until);
}

void filter_range_mark(struct stream *s, const struct msc_rec *rec)
{
	msc_span_mark(&s->span, rec);
}

int filter_in_range(const struct stream *s, const struct msc_rec *rec, int kind, struct msc_err *err)
{
	const struct msc_span *sp = &s->span;
	uint64_t at = 0;

	if (kind == C_LEAK)
		return msc_span_leak_rec(sp, rec, -EINVAL, err);
	/* Events come in time order with the marks: one before the since
	 * mark is before the range, one before the until mark in it. */
	if (sp->since && !sp->since_known)
		return 0;
	if (kind == C_ALLOC)
		msc_rec_u64(rec, "ts", &at);
	else if (msc_rec_u64(rec, "alloc_ts", &at))
		return 1;	/* a free of a block not known: as it was */
	return (!sp->since || at >= sp->since_ts) && (!sp->until || !sp->until_known || at < sp->until_ts);
}
