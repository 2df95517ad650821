/* SPDX-License-Identifier: MIT */
/*
 * Replays inputs through a fuzz target without libFuzzer: every file named,
 * and every file of every directory named (one level), once each.  Exits 0
 * when all ran; a crash or a sanitizer report ends it as they do.  `make
 * check` runs it over tests/fuzz/corpus/TARGET and tests/fuzz/crashes/TARGET.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path, unsigned long *n)
{
	FILE *f = fopen(path, "rbe");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f) {
		perror(path);
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	(*n)++;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;
	int i, fail = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &st)) {
			continue;	/* no crashes yet: no directory */
		}
		if (!S_ISDIR(st.st_mode)) {
			fail |= run_file(argv[i], &n);
			continue;
		}
		if (!(d = opendir(argv[i])))
			continue;
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			fail |= run_file(path, &n);
		}
		closedir(d);
	}
	printf("%lu inputs\n", n);
	return fail ? 1 : 0;
}
