/* SPDX-License-Identifier: MIT */
/*
 * msc_pprof: the wire format of a pprof profile, written by hand.
 *
 * A pprof profile is one protocol buffers message, perftools.profiles.Profile
 * (github.com/google/pprof, proto/profile.proto), compressed with gzip.  The
 * few parts of the protobuf encoding it needs are here, so that memscope
 * needs no protobuf library and no generated code:
 *
 *   - struct msc_pb, a growing buffer of wire format: varint fields (int64,
 *     uint64 and bool are all varints; negative int64s take ten bytes, as
 *     protobuf writes them, not zigzag), length-delimited fields (strings,
 *     packed repeated varints) and nested messages, begun and ended like
 *     brackets;
 *   - struct msc_pb_strings, the profile's string table: every string once,
 *     index 0 the empty string as profile.proto requires;
 *   - msc_pb_gzip(): the finished message as a gzip member (zlib).
 *
 * Fields at their default (0, false) are left out, as proto3 writers do;
 * strings and nested messages are always written.  An allocation failure
 * sets the buffer's oom flag and makes every later call a no-op, so that a
 * writer checks once, at the end.  The render_pprof.c renderer decides
 * what goes in a profile; the field numbers are its business.
 */
#ifndef MSC_PPROF_H
#define MSC_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "msc_arena.h"
#include "msc_hash.h"

struct msc_pb {
	unsigned char *buf;
	size_t len, cap;
	bool oom;			/* an allocation failed: buf is incomplete */
};

/* Protobuf wire types (the low three bits of a field's key). */
#define MSC_PB_VARINT 0
#define MSC_PB_LEN 2

void msc_pb_init(struct msc_pb *b);
void msc_pb_release(struct msc_pb *b);
/* A bare varint (base 128, least significant group first). */
void msc_pb_varint(struct msc_pb *b, uint64_t v);
/* A field's key: (field << 3) | wire type. */
void msc_pb_key(struct msc_pb *b, unsigned field, unsigned wire);
/* A varint field (uint64, int64 as its two's complement, bool); left out
 * when v is 0. */
void msc_pb_uint(struct msc_pb *b, unsigned field, uint64_t v);
/* A length-delimited field of n bytes (a string): always written. */
void msc_pb_bytes(struct msc_pb *b, unsigned field, const void *p, size_t n);
/* A packed repeated varint field (repeated uint64/int64); left out when
 * n is 0. */
void msc_pb_packed(struct msc_pb *b, unsigned field, const uint64_t *v, size_t n);
/*
 * A nested message: msc_pb_begin() writes its key and returns where its body
 * starts, the fields follow, and msc_pb_end() writes the length in front of
 * them.  Nested messages nest.
 */
size_t msc_pb_begin(struct msc_pb *b, unsigned field);
void msc_pb_end(struct msc_pb *b, size_t start);

/* The string table: strings in order of first use, index 0 "". */
struct msc_pb_strings {
	struct msc_arena arena;		/* the strings' copies */
	struct msc_strmap index;	/* string -> index + 1 */
	const char **list;
	size_t n, cap;
	bool oom;
};

/* 0 or -ENOMEM; the table then holds "". */
int msc_pb_strings_init(struct msc_pb_strings *t);
void msc_pb_strings_release(struct msc_pb_strings *t);
/* The index of s (NULL is ""), added when new; on allocation failure 0
 * and t->oom set. */
int64_t msc_pb_string(struct msc_pb_strings *t, const char *s);
/* The table as repeated string field `field`, in index order. */
void msc_pb_strings_write(const struct msc_pb_strings *t, struct msc_pb *b, unsigned field);

/* The buffer as one gzip member on out: 0, -ENOMEM, or the -errno of a
 * failed write (-EIO when stdio does not say). */
int msc_pb_gzip(const struct msc_pb *b, FILE *out);

#endif
