/* SPDX-License-Identifier: MIT */
/*
 * msc_fsafe: paths that another local user cannot steer.
 *
 * memscope often runs as root, on paths that pass through directories
 * other users can write (/tmp, a runtime directory kept by `sudo -E`, a
 * colleague's home).  A path is resolved here one component at a time,
 * with openat(2) and O_NOFOLLOW, never by the kernel in one go:
 *
 *   - a directory is *open to others* when its owner is neither this user
 *     nor root, or when its group or others may write it;
 *   - a symbolic link is followed only when its owner is this user or
 *     root, or when the directory it is in is not open to others (then
 *     only this user or root can have put it there);
 *   - an existing file owned by another user, in a directory open to
 *     others, is not written over.
 *
 * So a link that another user planted anywhere on the way (in a sticky
 * /tmp, or in a directory of theirs that a link of theirs led to) is never
 * followed, whatever fs.protected_symlinks says.  Refusals are EPERM.
 */
#ifndef MSC_FSAFE_H
#define MSC_FSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "msc_err.h"

/*
 * Opens path for writing (O_CREAT, mode 0666 less the umask, close-on-exec),
 * truncated if truncate.  Returns the descriptor, or -1 with errno set
 * (EPERM: a link or file of another user, as above; ELOOP: too many links).
 */
int msc_fsafe_open_output(const char *path, bool truncate);

/* Whether a directory (its stat) is open to others, as above. */
bool msc_fsafe_open_to_others(const struct stat *dir);

/*
 * The directory memscope's private sockets go under, in buf: the user's
 * $XDG_RUNTIME_DIR when every directory on its way is safe (none open to
 * others, or sticky with the next one this user's or root's) and it is
 * this user's own, writable by no one else; else /tmp, when it is sticky
 * or open to no one.  0, or a negative errno with err set.
 */
int msc_fsafe_base(char *buf, size_t n, struct msc_err *err);

/*
 * Checks that path is a directory (not a link) of this user's, open to no
 * one else, reached through directories that are safe as for
 * msc_fsafe_base.  0, or -EPERM (-ENOENT when missing) with err set.
 */
int msc_fsafe_private_dir(const char *path, struct msc_err *err);

/*
 * Whether the other end of the unix socket fd is this user or root
 * (SO_PEERCRED: who bound or connected it): 0, or -EPERM.
 */
int msc_fsafe_peer(int fd);

#endif
