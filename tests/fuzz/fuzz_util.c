/* SPDX-License-Identifier: MIT */
/* Helpers of the fuzz targets (fuzz.h). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

const char *fuzz_file(unsigned slot, const uint8_t *data, size_t size)
{
	static int fds[2] = { -1, -1 };
	static char paths[2][64];
	size_t off = 0;

	if (slot > 1)
		return NULL;
	if (fds[slot] < 0) {
		fds[slot] = memfd_create(slot ? "fuzz-input-1" : "fuzz-input-0", MFD_CLOEXEC);
		if (fds[slot] < 0)
			return NULL;
		snprintf(paths[slot], sizeof(paths[slot]), "/proc/self/fd/%d", fds[slot]);
	}
	if (ftruncate(fds[slot], 0))
		return NULL;
	while (off < size) {
		ssize_t n = pwrite(fds[slot], data + off, size - off, (off_t)off);

		if (n <= 0)
			return NULL;
		off += (size_t)n;
	}
	return paths[slot];
}

FILE *fuzz_null(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "we");
	return f;
}

int fuzz_null_fd(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return fd;
}
