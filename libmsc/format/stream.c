/* SPDX-License-Identifier: MIT */
/* The records that frame every stream: see msc_stream.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "msc_format.h"
#include "msc_stream.h"
#include "msc_util.h"

void msc_stream_header_begin(struct msc_writer *w, const char *tool, const char *mode)
{
	struct utsname u;
	uint64_t epoch = msc_now_epoch();
	time_t secs = (time_t)(epoch / 1000000000ull);
	struct tm tm;
	char iso[64];

	gmtime_r(&secs, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(iso + strlen(iso), sizeof(iso) - strlen(iso), ".%06uZ",
		 (unsigned)(epoch % 1000000000ull / 1000));
	msc_w_record(w, MSC_R_HEADER);
	msc_w_str(w, "format", MSC_FORMAT_NAME);
	msc_w_i64(w, "version", MSC_FORMAT_VERSION);
	msc_w_str(w, "tool", tool);
	msc_w_str(w, "tool_version", MSC_VERSION);
	msc_w_str(w, "mode", mode);
	if (uname(&u) == 0) {
		msc_w_str(w, "host", u.nodename);
		msc_w_str(w, "kernel", u.release);
		msc_w_str(w, "arch", u.machine);
	}
	msc_w_i64(w, "page_size", sysconf(_SC_PAGESIZE));
	msc_w_str(w, "start", iso);
	msc_w_u64(w, "start_epoch", epoch);
	msc_w_u64(w, "uptime", msc_now_boottime());
}

static void copy_str(const struct msc_rec *rec, const char *key, char *out, size_t n)
{
	size_t len;
	const char *s = msc_rec_str(rec, key, &len);

	out[0] = '\0';
	if (!s)
		return;
	if (len >= n)
		len = n - 1;
	memcpy(out, s, len);
	out[len] = '\0';
}

int msc_stream_parse_header(const struct msc_rec *rec, struct msc_header_info *hi,
			    struct msc_err *err)
{
	const char *fmt;
	int64_t v;

	memset(hi, 0, sizeof(*hi));
	if (msc_rec_rtype(rec) != MSC_R_HEADER)
		return msc_rec_err(err, rec, -EINVAL,
				   "not a memscope stream: first record is \"%s\", not \"header\"",
				   rec->type);
	fmt = msc_rec_str(rec, "format", NULL);
	if (!fmt || strcmp(fmt, MSC_FORMAT_NAME) != 0)
		return msc_rec_err(err, rec, -EINVAL, "not a memscope stream: format is not \"%s\"",
				   MSC_FORMAT_NAME);
	if (msc_rec_i64(rec, "version", &v) || v < 1 || v > 1000)
		return msc_rec_err(err, rec, -EINVAL, "header: bad \"version\"");
	/* A later version changed what records mean (as 2 did stacks):
	 * reading it as ours would be wrong, not merely incomplete. */
	if (v > MSC_FORMAT_VERSION)
		return msc_rec_err(err, rec, -EINVAL,
				   "format version %" PRId64 " is newer than this memscope reads "
				   "(1 to %d): read it with the memscope that wrote it",
				   v, MSC_FORMAT_VERSION);
	hi->version = (int)v;
	copy_str(rec, "tool", hi->tool, sizeof(hi->tool));
	copy_str(rec, "mode", hi->mode, sizeof(hi->mode));
	hi->pid = msc_rec_pid(rec, 0);
	msc_rec_u64(rec, "start_epoch", &hi->start_epoch);
	msc_rec_u64(rec, "uptime", &hi->uptime);
	return 0;
}
