/* SPDX-License-Identifier: MIT */
/* Reports: the dispatch to the renderers, one per output.  See
 * msc_render.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "msc_render.h"
#include "msc_util.h"

/* ---------------------------------------------------------------- entry */

int msc_report_sections(const char *list, unsigned *out)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "summary", MSC_SECTION_SUMMARY }, { "leaks", MSC_SECTION_LEAKS },
		{ "top", MSC_SECTION_TOP }, { "temporary", MSC_SECTION_TEMPORARY },
		{ "sizes", MSC_SECTION_SIZES }, { "timeline", MSC_SECTION_TIMELINE },
		{ "errors", MSC_SECTION_ERRORS },
		{ "all", MSC_SECTION_ALL },
	};
	const char *p = list;

	*out = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;
		bool found = false;

		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == len && !strncmp(names[i].name, p, len)) {
				*out |= names[i].bit;
				found = true;
			}
		if (!found || !len)
			return -EINVAL;
		p += len + (p[len] == ',');
	}
	return *out ? 0 : -EINVAL;
}

int msc_report_cost_parse(const char *name, enum msc_report_cost *out)
{
	static const struct { const char *name; enum msc_report_cost cost; } names[] = {
		{ "leaked", MSC_COST_LEAKED }, { "allocs", MSC_COST_ALLOCS },
		{ "bytes", MSC_COST_BYTES }, { "peak", MSC_COST_PEAK },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i].name)) {
			*out = names[i].cost;
			return 0;
		}
	return -EINVAL;
}

/*
 * Text for a terminal: what the recording names (functions, files, other
 * users' process names and command lines) may hold control characters
 * that a terminal would obey.  Every byte of a text or Markdown report
 * passes through here: C0 controls but newline and tab, DEL, and C1
 * controls (UTF-8's U+0080..U+009F) come out as \xHH or \u00HH.
 */
struct term_safe {
	FILE *out;
	bool lead;			/* the last byte written was 0xc2 */
};

static ssize_t term_safe_write(void *cookie, const char *buf, size_t n)
{
	struct term_safe *t = cookie;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (t->lead) {
			t->lead = false;
			if (c >= 0x80 && c <= 0x9f) {
				fprintf(t->out, "\\u%04x", c);
				continue;
			}
			putc(0xc2, t->out);
		}
		if (c == 0xc2)
			t->lead = true;
		else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			fprintf(t->out, "\\x%02x", c);
		else
			putc(c, t->out);
	}
	return ferror(t->out) ? -1 : (ssize_t)n;
}

static int term_safe_close(void *cookie)
{
	struct term_safe *t = cookie;

	if (t->lead)
		putc(0xc2, t->out);
	return ferror(t->out) ? -1 : 0;
}

static int render_text_safe(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct term_safe t = { out, false };
	cookie_io_functions_t io = { .write = term_safe_write, .close = term_safe_close };
	FILE *f = fopencookie(&t, "w", io);
	int ret;

	if (!f)
		return -errno;
	ret = render_text(r, o, f);
	if (fclose(f) && !ret)
		ret = -(errno ? errno : EIO);
	return ret;
}

int msc_report_render(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	int ret = 0;

	switch (o->format) {
	case MSC_REPORT_TEXT:
	case MSC_REPORT_MD:
		ret = render_text_safe(r, o, out);
		break;
	case MSC_REPORT_JSON:
		ret = render_json(r, o, out);
		break;
	case MSC_REPORT_COLLAPSED:
		ret = render_collapsed(r, o, out);
		break;
	case MSC_REPORT_SVG:
		ret = render_svg(r, o, out);
		break;
	case MSC_REPORT_HTML:
		ret = render_html(r, o, out);
		break;
	case MSC_REPORT_PPROF:
		ret = render_pprof(r, o, out);
		break;
	}
	if (!ret && (fflush(out) || ferror(out)))
		ret = -(errno ? errno : EIO);
	return ret;
}

int msc_report_print_records(void (*write)(void *ctx, struct msc_writer *w), void *ctx,
			     const char *name, const struct msc_report_opts *o, FILE *out)
{
	struct msc_report r = { 0 };	/* no --alloc-fn: load keeps none */
	struct msc_reader rd;
	struct msc_writer w;
	struct msc_err err;
	int fd = memfd_create(name, MFD_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	if (msc_writer_init(&w, fd, 0)) {
		close(fd);
		return -ENOMEM;
	}
	write(ctx, &w);
	ret = msc_writer_release(&w);
	if (!ret && lseek(fd, 0, SEEK_SET) < 0)
		ret = -errno;
	if (ret) {
		close(fd);
		return ret;
	}
	msc_reader_init_fd(&rd, fd, name);
	ret = msc_report_load(&r, &rd, &err);
	if (!ret)
		ret = msc_report_render(&r, o, out);
	msc_report_release(&r);
	msc_reader_release(&rd);
	close(fd);
	return ret;
}
