/* SPDX-License-Identifier: MIT */
/* Paths another local user cannot steer: see msc_fsafe.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_fsafe.h"

/* As the kernel's own limit on links followed in one lookup. */
#define MAX_LINKS 40

static bool trusted_uid(uid_t uid)
{
	return uid == geteuid() || uid == 0;
}

bool msc_fsafe_open_to_others(const struct stat *dir)
{
	return !trusted_uid(dir->st_uid) || (dir->st_mode & (S_IWGRP | S_IWOTH));
}

static bool link_trusted(const struct stat *dir, const struct stat *link)
{
	return trusted_uid(link->st_uid) || !msc_fsafe_open_to_others(dir);
}

/* Nobody but this user and root can rename child out of dir, or put
 * something else in its place. */
static bool child_safe(const struct stat *dir, const struct stat *child)
{
	return !msc_fsafe_open_to_others(dir) ||
	       ((dir->st_mode & S_ISVTX) && trusted_uid(dir->st_uid) && trusted_uid(child->st_uid));
}

/*
 * A lookup under way: the directory reached (dfd, as O_PATH) and the path
 * left to resolve from it.  strict: each directory passed must also be
 * safe in its parent (child_safe), for directories whose names are used
 * again later (sockets are bound and connected by path).
 */
struct walk {
	int dfd;
	struct stat dst;
	unsigned links;
	bool strict;
	char rest[2 * PATH_MAX];
};

static int walk_root(struct walk *w, const char *dir)
{
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &w->dst) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = fd;
	return 0;
}

static int walk_start(struct walk *w, const char *path, bool strict)
{
	w->dfd = -1;
	w->links = 0;
	w->strict = strict;
	if (!*path)
		return -ENOENT;
	if (strlen(path) >= sizeof(w->rest))
		return -ENAMETOOLONG;
	strcpy(w->rest, path);
	return walk_root(w, path[0] == '/' ? "/" : ".");
}

static void walk_release(struct walk *w)
{
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = -1;
}

/* The next component of rest into name (NAME_MAX + 1 bytes); *after
 * points past it and the slashes that follow, *last says nothing else
 * does.  1, 0 at the end, or a negative errno. */
static int next_comp(struct walk *w, char *name, const char **after, bool *last)
{
	const char *p = w->rest, *e;
	size_t len;

	while (*p == '/')
		p++;
	if (!*p)
		return 0;
	e = strchrnul(p, '/');
	len = (size_t)(e - p);
	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, p, len);
	name[len] = '\0';
	while (*e == '/')
		e++;
	*after = e;
	*last = !*e;
	return 1;
}

/* name, in the directory reached, is a link that may be followed: what is
 * left becomes its target, then the rest. */
static int splice_link(struct walk *w, const char *name, const char *after)
{
	char target[PATH_MAX], next[sizeof(w->rest)];
	ssize_t n;
	int len;

	if (++w->links > MAX_LINKS)
		return -ELOOP;
	n = readlinkat(w->dfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENOENT;
	target[n] = '\0';
	len = snprintf(next, sizeof(next), "%s%s%s", target, *after ? "/" : "", after);
	if (len < 0 || (size_t)len >= sizeof(next))
		return -ENAMETOOLONG;
	memcpy(w->rest, next, (size_t)len + 1);
	return target[0] == '/' ? walk_root(w, "/") : 0;
}

/* Goes into directory name (or along the link it is). */
static int step_dir(struct walk *w, const char *name, const char *after)
{
	struct stat st;
	int fd;

	if (strcmp(name, ".") == 0) {
		memmove(w->rest, after, strlen(after) + 1);
		return 0;
	}
	fd = openat(w->dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	if (S_ISLNK(st.st_mode)) {
		close(fd);
		return link_trusted(&w->dst, &st) ? splice_link(w, name, after) : -EPERM;
	}
	if (!S_ISDIR(st.st_mode) ||
	    (w->strict && strcmp(name, "..") != 0 && !child_safe(&w->dst, &st))) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EPERM : -ENOTDIR;
	}
	close(w->dfd);
	w->dfd = fd;
	w->dst = st;
	memmove(w->rest, after, strlen(after) + 1);
	return 0;
}

/* Resolves all but the last component; its name goes to name, and rest
 * is left with nothing (or slashes) after it. */
static int walk_to_last(struct walk *w, char *name)
{
	for (;;) {
		const char *after;
		bool last;
		int rc = next_comp(w, name, &after, &last);

		if (rc <= 0)
			return rc ? rc : -EISDIR;	/* "/": no name to open */
		if (last) {
			memmove(w->rest, after, strlen(after) + 1);
			return 0;
		}
		rc = step_dir(w, name, after);
		if (rc)
			return rc;
	}
}

int msc_fsafe_open_output(const char *path, bool truncate)
{
	char name[NAME_MAX + 1];
	struct walk w;
	struct stat st;
	int rc, fd = -1;

	rc = walk_start(&w, path, false);
	while (!rc) {
		rc = walk_to_last(&w, name);
		if (rc)
			break;
		fd = openat(w.dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0)
			break;
		/* ELOOP: a link; or EACCES, when fs.protected_symlinks
		 * refused it first. */
		rc = -errno;
		if ((rc != -ELOOP && rc != -EACCES) ||
		    fstatat(w.dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
			break;
		rc = link_trusted(&w.dst, &st) ? splice_link(&w, name, w.rest) : -EPERM;
	}
	if (fd >= 0 && fstat(fd, &st) < 0)
		rc = -errno;
	/* Another user's file, or a second name of a file (a hard link made
	 * to one of ours), where others may have put it: not written over.
	 * Checked on the file opened, before it is truncated. */
	else if (fd >= 0 && S_ISREG(st.st_mode) && msc_fsafe_open_to_others(&w.dst) &&
		 ((st.st_uid != geteuid() && st.st_uid != w.dst.st_uid) || st.st_nlink > 1))
		rc = -EPERM;
	else if (fd >= 0 && truncate && S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0)
		rc = -errno;
	if (rc && fd >= 0) {
		close(fd);
		fd = -1;
	}
	walk_release(&w);
	if (fd < 0)
		errno = -rc;
	return fd;
}

/* The directory path names, reached as `strict` asks, as lstat(2) sees
 * its last component; its parent's stat in parent. */
static int stat_dir(const char *path, struct stat *st, struct stat *parent)
{
	char name[NAME_MAX + 1];
	struct walk w;
	int rc = walk_start(&w, path, true);

	if (!rc)
		rc = walk_to_last(&w, name);
	if (!rc && fstatat(w.dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = -errno;
	if (!rc)
		*parent = w.dst;
	walk_release(&w);
	return rc;
}

int msc_fsafe_private_dir(const char *path, struct msc_err *err)
{
	struct stat st, parent;
	int rc = stat_dir(path, &st, &parent);

	if (rc == -ENOENT)
		return msc_err_set(err, rc, "'%s': %s", path, strerror(-rc));
	if (rc || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
	    !child_safe(&parent, &st))
		return msc_err_set(err, -EPERM, "'%s' is not a private directory of this user", path);
	return 0;
}

int msc_fsafe_base(char *buf, size_t n, struct msc_err *err)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st, parent;

	/* Kept by `sudo -E` or `su` without `-`, it may be another user's. */
	if (rt && rt[0] == '/' && strlen(rt) < n && stat_dir(rt, &st, &parent) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) &&
	    child_safe(&parent, &st) && access(rt, W_OK | X_OK) == 0) {
		strcpy(buf, rt);
		return 0;
	}
	if (stat_dir("/tmp", &st, &parent) == 0 && S_ISDIR(st.st_mode) &&
	    child_safe(&parent, &st) &&
	    (!msc_fsafe_open_to_others(&st) || ((st.st_mode & S_ISVTX) && trusted_uid(st.st_uid))) &&
	    n > 4) {
		strcpy(buf, "/tmp");
		return 0;
	}
	return msc_err_set(err, -EPERM,
			   "no safe directory for memscope's sockets ('/tmp' is open to others and not sticky)");
}

int msc_fsafe_peer(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	return trusted_uid(cred.uid) ? 0 : -EPERM;
}
