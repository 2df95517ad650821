/* SPDX-License-Identifier: MIT */
/*
 * Internal declarations of libmemscope.so, the code that runs inside the
 * profiled program.  Nothing here may allocate through malloc: per-thread
 * state lives in mmap'ed memory, and everything that could reach malloc runs
 * with the thread's recursion guard set.
 */
#ifndef SHIM_H
#define SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_proto.h"
#include "unwind.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define TLS_IE __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
