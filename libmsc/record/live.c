/* SPDX-License-Identifier: MIT */
/* The live heap's socket: see msc_live.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "msc_format.h"
#include "msc_fsafe.h"
#include "msc_live.h"
#include "msc_util.h"

int msc_live_dir(char *buf, size_t n, int mk, struct msc_err *err)
{
	char base[PATH_MAX];
	int rc = msc_fsafe_base(base, sizeof(base), err);

	if (rc)
		return rc;
	if (strcmp(base, "/tmp") != 0)
		snprintf(buf, n, "%s/memscope", base);
	else
		snprintf(buf, n, "/tmp/memscope-%u", (unsigned)geteuid());
	if (mk && mkdir(buf, 0700) < 0 && errno != EEXIST)
		return msc_err_set(err, -errno, "cannot create '%s': %s", buf, strerror(errno));
	/* Someone else's, a link, or open to others: not a place for our
	 * socket.  Its base is safe (msc_fsafe_base), so the name keeps
	 * naming what was checked. */
	return msc_fsafe_private_dir(buf, err);
}

int msc_live_path(int pid, char *buf, size_t n, int mk, struct msc_err *err)
{
	char dir[200];
	int rc = msc_live_dir(dir, sizeof(dir), mk, err);

	if (rc)
		return rc;
	if ((size_t)snprintf(buf, n, "%s/%d.sock", dir, pid) >= n)
		return msc_err_set(err, -ENAMETOOLONG, "socket path too long");
	return 0;
}

int msc_live_listen(int pid, struct msc_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, rc;

	rc = msc_live_path(pid, sa.sun_path, sizeof(sa.sun_path), 1, err);
	if (rc)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return msc_err_set(err, -errno, "socket: %s", strerror(errno));
	unlink(sa.sun_path);	/* a stale one, from a recorder that died */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 8) < 0) {
		rc = msc_err_set(err, -errno, "cannot listen on '%s': %s", sa.sun_path, strerror(errno));
		close(fd);
		return rc;
	}
	return fd;
}

void msc_live_unlink(int pid)
{
	char path[256];

	if (msc_live_path(pid, path, sizeof(path), 0, NULL) == 0)
		unlink(path);
}

/* The request line a client sends first ("sites\n", "leaks\n"). */
static int send_request(int fd, const char *request)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "%s\n", request);

	return write(fd, line, (size_t)n) == n ? 0 : -errno;
}

static long live_request(int pid, const char *request, char **buf, size_t *cap, int timeout_ms,
			 struct msc_err *err);

long msc_live_fetch(int pid, const char *request, struct msc_writer *w, struct msc_err *err)
{
	/* The recorder answers at its next round: milliseconds; a leak scan
	 * reads the whole heap: seconds for gigabytes. */
	int timeout_ms = strcmp(request, "sites") ? 120000 : 5000;
	struct msc_reader r;
	struct msc_rec rec;
	char *buf = NULL;
	size_t cap = 0;
	long len, records = 0;
	int rc;

	len = live_request(pid, request, &buf, &cap, timeout_ms, err);
	if (len < 0) {
		free(buf);
		return len;
	}
	msc_reader_init_mem(&r, buf, (size_t)len, "live");
	/* Records as they are, but only whole, valid ones. */
	while ((rc = msc_reader_next(&r, &rec, err)) > 0) {
		size_t n;
		const char *why = msc_rec_rtype(&rec) == MSC_R_LIVE ? msc_rec_str(&rec, "error", &n) : NULL;

		if (why) {
			/* the recorder could not do what was asked */
			rc = msc_err_set(err, -EINVAL, "pid %d: %.*s", pid, (int)n, why);
			break;
		}
		msc_w_line(w, rec.line, rec.len);
		records++;
	}
	msc_reader_release(&r);
	free(buf);
	return rc < 0 ? rc : records;
}

int msc_live_foreach(DIR **dir, int (*cb)(int pid, void *arg), void *arg)
{
	struct dirent *de;
	int ret = 0;

	if (*dir) {
		rewinddir(*dir);
	} else {
		char path[200];
		int rc = msc_live_dir(path, sizeof(path), 0, NULL);

		if (rc)
			return rc;
		*dir = opendir(path);
		if (!*dir)
			return -errno;
	}
	while ((de = readdir(*dir))) {
		const char *p;
		int pid = msc_name_pid(de->d_name, &p);

		if (!pid || strcmp(p, ".sock") != 0)
			continue;
		/* The socket of a recorder that was killed, for a process that
		 * is gone too: nothing will ever answer there. */
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			unlinkat(dirfd(*dir), de->d_name, 0);
			continue;
		}
		ret = cb(pid, arg);
		if (ret)
			break;
	}
	return ret;
}

long msc_live_read(int pid, char **buf, size_t *cap, int timeout_ms, struct msc_err *err)
{
	return live_request(pid, "sites", buf, cap, timeout_ms, err);
}

/*
 * Sends request and reads the whole answer into *buf, waiting at most
 * timeout_ms in all (a read timeout on the socket would not do: the
 * reader waits out an EAGAIN).
 */
static long live_request(int pid, const char *request, char **buf, size_t *cap, int timeout_ms,
			 struct msc_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint64_t deadline = msc_now_monotonic() + (uint64_t)timeout_ms * 1000000ull;
	size_t len = 0;
	long ret;
	int fd, rc;

	rc = msc_live_path(pid, sa.sun_path, sizeof(sa.sun_path), 0, err);
	if (rc)
		return rc == -ENOENT ? msc_err_set(err, -ENOENT, "pid %d is not being recorded", pid) : rc;
	/* Non-blocking: a recorder whose backlog is full is busy, not waited for. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return msc_err_set(err, -errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = errno == ENOENT || errno == ECONNREFUSED ?
			msc_err_set(err, -ENOENT, "pid %d is not being recorded", pid) :
			msc_err_set(err, -errno, "'%s': %s", sa.sun_path, strerror(errno));
		close(fd);
		return ret;
	}
	/* Another user's recorder cannot be behind this user's directory,
	 * but what answers is checked all the same. */
	if (msc_fsafe_peer(fd) < 0) {
		close(fd);
		return msc_err_set(err, -EPERM, "'%s' is served by another user: not read", sa.sun_path);
	}
	if (send_request(fd, request) < 0) {
		close(fd);
		return msc_err_set(err, -EAGAIN, "pid %d: its recorder is busy", pid);
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = msc_now_monotonic();
		ssize_t n;

		if (*cap - len < 16384 && MSC_GROW(*buf, *cap + 1, *cap, 65536)) {
			ret = msc_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		n = read(fd, *buf + len, *cap - len);
		if (n > 0) {
			len += (size_t)n;
			continue;
		}
		if (n == 0) {
			ret = (long)len;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			ret = msc_err_set(err, -errno, "'%s': %s", sa.sun_path, strerror(errno));
			break;
		}
		if (now >= deadline || poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000)) == 0) {
			ret = msc_err_set(err, -ETIMEDOUT, "pid %d: its recorder did not answer in %d ms",
					  pid, timeout_ms);
			break;
		}
	}
	close(fd);
	return ret;
}
