/* SPDX-License-Identifier: MIT */
/*
 * The collector made and unmade: its options' defaults, its private
 * directory and listening socket (what killed recorders left behind pruned
 * first), the rings' size, and its finish and freeing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "collect_internal.h"
#include "msc_collect.h"
#include "msc_fsafe.h"
#include "msc_live.h"
#include "msc_proc.h"

#define DEFAULT_RING_SIZE (2048u * 1024)
#define DEFAULT_NRINGS 257u
/* msc_collector_size_rings: the most all threads may write ahead. */
#define WRITE_AHEAD (8ull << 20)
#define MIN_SIZED_RING (16u * 1024)

/*
 * What recorders killed with SIGKILL left in base: directories named and
 * owned as ours whose ctl.sock nobody listens on.  Removed before one more
 * is made, so that they do not pile up.  A directory without its socket
 * may be a recorder's between mkdtemp and bind: it is left alone unless it
 * is a minute old.
 */
static void prune_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char dir[PATH_MAX];
		struct stat st, sst;
		int s, rc;

		if (strncmp(e->d_name, "memscope.", 9) != 0 || strlen(e->d_name) != 15 ||
		    (size_t)snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name) >= sizeof(dir) ||
		    lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    (size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl.sock", dir) >=
			    sizeof(sa.sun_path))
			continue;
		if (lstat(sa.sun_path, &sst) == 0) {
			if (!S_ISSOCK(sst.st_mode))
				continue;
			s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (s < 0)
				continue;
			rc = connect(s, (struct sockaddr *)&sa, sizeof(sa));
			close(s);
			if (rc == 0 || errno != ECONNREFUSED)
				continue;	/* alive, or cannot tell */
			unlink(sa.sun_path);
		} else if (errno != ENOENT || now - st.st_mtime < 60) {
			continue;
		}
		rmdir(dir);	/* fails if something else is inside: not ours to judge */
	}
	closedir(d);
}

/*
 * Whether prune_stale is due: it reads all of base, and a server's /tmp may
 * hold thousands of names, read at every start if it ran each time.  A stamp
 * in this user's private directory (msc_live_dir) says when it ran last:
 * once in PRUNE_EVERY seconds, or every time without a place for it.
 */
#define PRUNE_EVERY 600
static bool prune_due(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stat st;
	time_t now = time(NULL);
	int fd;

	if (msc_live_dir(dir, sizeof(dir), 1, NULL) ||
	    (size_t)snprintf(path, sizeof(path), "%s/pruned", dir) >= sizeof(path))
		return true;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime <= now &&
	    now - st.st_mtime < PRUNE_EVERY)
		return false;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	return true;
}

struct msc_collector *msc_collector_new(const struct msc_collect_opts *o,
					const struct msc_collect_ops *ops, void *ctx,
					struct msc_stacks *stacks, struct msc_err *err)
{
	struct msc_collector *c = calloc(1, sizeof(*c));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char base[PATH_MAX];

	if (!c) {
		msc_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	c->o = *o;
	if (!c->o.ring_size || (c->o.ring_size & (c->o.ring_size - 1)) || c->o.ring_size < 4096)
		c->o.ring_size = DEFAULT_RING_SIZE;
	if (!c->o.nrings)
		c->o.nrings = DEFAULT_NRINGS;
	if (c->o.nrings > MSC_PROTO_MAX_RINGS)
		c->o.nrings = MSC_PROTO_MAX_RINGS;
	collect_own_room();
	if (!c->o.depth)
		c->o.depth = 64;
	c->ops = ops;
	c->ctx = ctx;
	c->stacks = stacks;
	c->listen_fd = -1;
	c->watch_fd = -1;
	c->child_pid = -1;
	c->child_pidfd = -1;
	c->page_size = sysconf(_SC_PAGESIZE);
	c->dir_fd = -1;
	if (msc_fsafe_base(base, sizeof(base), err) < 0) {
		free(c);
		return NULL;
	}
	if (prune_due())
		prune_stale(base);
	if ((size_t)snprintf(c->dir, sizeof(c->dir), "%s/memscope.XXXXXX", base) >= sizeof(c->dir))
		errno = ENAMETOOLONG;
	else if (mkdtemp(c->dir))	/* mode 0700 */
		errno = 0;
	if (errno) {
		c->dir[0] = '\0';
		msc_err_set(err, -errno, "cannot create a directory in '%s': %s", base,
			    strerror(errno));
		free(c);
		return NULL;
	}
	/* Ours, made just now in a directory where no one else can rename
	 * it: held by a descriptor for what is done to it later
	 * (msc_collector_allow_uid). */
	c->dir_fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dir_fd < 0) {
		msc_err_set(err, -errno, "'%s': %s", c->dir, strerror(errno));
		goto fail;
	}
	snprintf(c->sock_path, sizeof(c->sock_path), "%s/ctl.sock", c->dir);
	if (strlen(c->sock_path) >= sizeof(sa.sun_path)) {
		msc_err_set(err, -ENAMETOOLONG, "socket path '%s' is too long", c->sock_path);
		goto fail;
	}
	strcpy(sa.sun_path, c->sock_path);
	c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->listen_fd < 0 || bind(c->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(c->listen_fd, 64) < 0) {
		msc_err_set(err, -errno, "cannot listen on '%s': %s", c->sock_path, strerror(errno));
		goto fail;
	}
	collect_calibrate_begin(c);
	return c;
fail:
	msc_collector_free(c);
	return NULL;
}

const char *msc_collector_socket(const struct msc_collector *c)
{
	return c->sock_path + c->sock_inside;
}

int msc_collector_listen_for(struct msc_collector *c, int pid, struct msc_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char root[64], dir[256], sock[300];
	const char *tmp = "/tmp";
	size_t off;
	int fd, dfd;

	if (c->sock_inside || msc_proc_sees(pid, c->sock_path))
		return 0;
	off = (size_t)snprintf(root, sizeof(root), "/proc/%d/root", pid);
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s/memscope.XXXXXX", root, tmp) >= sizeof(dir) ||
	    !mkdtemp(dir))
		return msc_err_set(err, -errno, "pid %d sees another %s (a container?), and %s%s cannot have a directory of ours: %s",
				   pid, tmp, root, tmp, strerror(errno));
	snprintf(sock, sizeof(sock), "%s/ctl.sock", dir);
	if (strlen(sock) >= sizeof(sa.sun_path)) {
		rmdir(dir);
		return msc_err_set(err, -ENAMETOOLONG, "socket path '%s' is too long", sock);
	}
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || dfd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 64) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		if (dfd >= 0)
			close(dfd);
		unlink(sock);
		rmdir(dir);
		return msc_err_set(err, -e, "cannot listen on '%s': %s", sock, strerror(e));
	}
	/* The first one goes: only this process will connect. */
	close(c->listen_fd);
	unlink(c->sock_path);
	rmdir(c->dir);
	close(c->dir_fd);
	c->listen_fd = fd;
	c->dir_fd = dfd;
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	snprintf(c->sock_path, sizeof(c->sock_path), "%s", sock);
	c->sock_inside = off;
	return 0;
}

void msc_collector_size_rings(struct msc_collector *c, int threads)
{
	uint32_t size = DEFAULT_RING_SIZE;

	while (threads > 0 && size > MIN_SIZED_RING && (uint64_t)size * (uint64_t)threads > WRITE_AHEAD)
		size /= 2;
	if (size < c->o.ring_size)
		c->o.ring_size = size;
}

void msc_collector_finish(struct msc_collector *c, const char *reason)
{
	struct msc_collector_private *p;

	for (p = c->procs; p; p = p->next)
		if (p->ctl)
			__atomic_store_n(&p->ctl->stop, 1, __ATOMIC_RELEASE);
	while (c->procs)
		collect_end_session(c, c->procs, reason, 0, false);
}

void msc_collector_free(struct msc_collector *c)
{
	if (!c)
		return;
	while (c->procs) {
		struct msc_collector_private *p = c->procs;

		c->procs = p->next;
		collect_free_session(p);
	}
	while (c->nhellos)
		close(c->hellos[--c->nhellos].fd);
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	if (c->child_pidfd >= 0)
		close(c->child_pidfd);
	if (c->sock_path[0])
		unlink(c->sock_path);
	if (c->dir[0])
		rmdir(c->dir);
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	free(c->pfd);
	free(c->owner);
	free(c);
}
