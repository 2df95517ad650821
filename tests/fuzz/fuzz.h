/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets' common ground (tests/fuzz/): each target defines
 * LLVMFuzzerTestOneInput, the entry point libFuzzer calls with one input;
 * `make fuzz` links it with libFuzzer (clang -fsanitize=fuzzer), and
 * replay.c, for `make check`, calls it once per file of the corpus and of
 * the crashes found so far.
 *
 * A target must not leak, must not exit, and must give the same result for
 * the same input: what it reads comes from the input only.
 */
#ifndef MSC_FUZZ_H
#define MSC_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A file holding data[0..size), at a path the library's readers open
 * (/proc/self/fd/N of a memfd, rewritten for each input); NULL when the
 * system refuses one.  slot: 0 or 1, for a target that needs two files.
 */
const char *fuzz_file(unsigned slot, const uint8_t *data, size_t size);

/* /dev/null, opened once, for what the targets render. */
FILE *fuzz_null(void);
int fuzz_null_fd(void);

#endif
