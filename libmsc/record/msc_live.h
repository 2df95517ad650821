/* SPDX-License-Identifier: MIT */
/*
 * msc_live: the live heap of a recorded process, served by the recorder
 * and fetched by ms-snap(1).
 *
 * While ms-record records a process (launched or attached), it listens on
 * the unix socket PID.sock in a private per-user directory:
 * $XDG_RUNTIME_DIR/memscope, else /tmp/memscope-UID, mode 0700 and owned by
 * the user (anything else there is refused, not used).  A client that
 * connects reads the records of that moment: the "stack" records the sites
 * need, then one "site" record per allocation site of the process, with the
 * live figures (memscope-format(5)), and the connection closes.
 */
#ifndef MSC_LIVE_H
#define MSC_LIVE_H

#include <dirent.h>
#include <stddef.h>

#include "msc_err.h"
#include "msc_ndjson.h"

/* The directory of the sockets, private to this user ($XDG_RUNTIME_DIR/
 * memscope or /tmp/memscope-UID), into buf; created if mk.  0 or -errno
 * with err filled (an unsafe directory is -EPERM). */
int msc_live_dir(char *buf, size_t n, int mk, struct msc_err *err);

/* The socket's path for pid into buf; creates the directory if mk.  0 or
 * -errno with err filled (an unsafe directory is -EPERM). */
int msc_live_path(int pid, char *buf, size_t n, int mk, struct msc_err *err);

/* Listens for pid's clients: a non-blocking socket, or -errno. */
int msc_live_listen(int pid, struct msc_err *err);

/* Removes pid's socket. */
void msc_live_unlink(int pid);

/*
 * Copies the live records of pid to w.  request: "sites" (the heap by
 * site), or "leaks" (a reachability scan of the process now, its threads
 * stopped while its memory is read: "leak" records and a "live" record
 * with the scan's figures).  A client sends its request as a line first.
 * Returns the count of records, or -ENOENT when pid is not being recorded
 * (no one listens), or -errno.
 */
long msc_live_fetch(int pid, const char *request, struct msc_writer *w, struct msc_err *err);

/*
 * Calls cb with the pid of every socket of the directory: the processes
 * being recorded (a socket whose recorder died may stay behind while its
 * process lives: reading it then fails with -ENOENT; one whose process is
 * gone too is removed).  *dir, NULL at first, keeps the directory open
 * between calls (closedir() it when done), so that a caller that asks once
 * a second allocates nothing.  Returns 0, cb's non-zero value, or -errno
 * (-ENOENT when there is no directory: nothing was ever recorded here).
 */
int msc_live_foreach(DIR **dir, int (*cb)(int pid, void *arg), void *arg);

/*
 * The records msc_live_fetch copies, read into *buf (capacity *cap, grown
 * as needed; the caller keeps it for the next call and frees it), waiting
 * at most timeout_ms in all: for a caller that must not hang on a recorder
 * that stalls (ms-top).  The records are not checked: read them with
 * msc_reader_init_mem.  Returns the length, or -ENOENT (not being
 * recorded), -ETIMEDOUT, -EAGAIN (the recorder is busy with other
 * clients) or another -errno, with err set.
 */
long msc_live_read(int pid, char **buf, size_t *cap, int timeout_ms, struct msc_err *err);

#endif
