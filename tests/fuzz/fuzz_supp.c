/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the suppressions parser (ms-filter --suppressions, Valgrind's
 * format and memscope's own), then the rules it made matched against a few
 * stacks, as ms-filter matches them.
 */
#include <string.h>

#include "fuzz.h"
#include "msc_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(0, data, size);
	struct msc_supp s;
	struct msc_err err = { 0 };

	if (!path)
		return 0;
	if (msc_supp_load(&s, path, &err) == 0) {
		unsigned i;

		for (i = 0; i < s.n; i++)
			msc_frame_matches(s.rules[i].glob, "std::vector<int>::push_back(int const&)",
					  "/usr/include/c++/12/bits/stl_vector.h", "libstdc++.so.6");
		msc_supp_release(&s);
	}
	/* the glob matcher the rules use, with the input as a pattern */
	if (size && size < 256 && !memchr(data, '\0', size)) {
		char pat[256];

		memcpy(pat, data, size);
		pat[size] = '\0';
		msc_frame_matches(pat, "leak_frames", "pools.c", "/usr/lib/libc.so.6");
		msc_frame_matches(pat, NULL, NULL, NULL);
	}
	return 0;
}
