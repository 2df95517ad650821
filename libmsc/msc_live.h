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

#include <stddef.h>

#include "msc_err.h"
#include "msc_ndjson.h"

/* The socket's path for pid into buf; creates the directory if mk.  0 or
 * -errno with err filled (an unsafe directory is -EPERM). */
int msc_live_path(int pid, char *buf, size_t n, int mk, struct msc_err *err);

/* Listens for pid's clients: a non-blocking socket, or -errno. */
int msc_live_listen(int pid, struct msc_err *err);

/* Removes pid's socket. */
void msc_live_unlink(int pid);

/*
 * Copies the live records of pid to w.  Returns the count of records, or
 * -ENOENT when pid is not being recorded (no one listens), or -errno.
 */
long msc_live_fetch(int pid, struct msc_writer *w, struct msc_err *err);

#endif
