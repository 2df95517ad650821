/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the /proc parsers (msc_proc.h).  The first byte of an input
 * chooses the file, the rest is its text, written under a proc root of our
 * own (a directory made once) for the reader of that file to parse: stat,
 * status, statm, smaps_rollup, maps, smaps, cmdline, meminfo and stat's
 * btime line.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "msc_proc.h"

static const char *const files[] = {
	"1/stat", "1/status", "1/statm", "1/smaps_rollup", "1/maps", "1/smaps", "1/cmdline",
	"meminfo", "stat",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char root[64];

static int make_root(void)
{
	char dir[96];

	if (root[0])
		return 0;
	snprintf(root, sizeof(root), "/tmp/msc-fuzz-proc.XXXXXX");
	if (!mkdtemp(root)) {
		root[0] = '\0';
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s/1", root);
	return mkdir(dir, 0700);
}

static int put(const char *rel, const uint8_t *data, size_t size)
{
	char path[160];
	int fd;
	size_t off = 0;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	return off == size ? 0 : -1;
}

static int count_mapping(const struct msc_mapping *m, void *arg)
{
	(void)m;
	(*(unsigned long *)arg)++;
	return 0;
}

static void count_arg(const char *arg, size_t len, void *ctx)
{
	(void)arg;
	*(size_t *)ctx += len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msc_procfs fs;
	struct msc_err err = { 0 };
	unsigned k;

	if (size < 1 || make_root())
		return 0;
	k = data[0] % NFILES;
	if (put(files[k], data + 1, size - 1))
		return 0;
	if (msc_procfs_init(&fs, root))
		return 0;
	switch (k) {
	case 0: {
		struct msc_pstat st;

		msc_proc_stat(&fs, 1, &st, &err);
		break;
	}
	case 1: {
		struct msc_pstatus st;

		msc_proc_status(&fs, 1, &st, &err);
		break;
	}
	case 2: {
		struct msc_pstatm st;

		msc_proc_statm(&fs, 1, &st, &err);
		break;
	}
	case 3: {
		struct msc_memcounts mc;
		bool summed;

		msc_proc_rollup(&fs, 1, &mc, &summed, &err);
		break;
	}
	case 4:
	case 5: {
		unsigned long n = 0;

		if (k == 4)
			msc_proc_maps(&fs, 1, count_mapping, &n, &err);
		else
			msc_proc_smaps(&fs, 1, count_mapping, &n, &err);
		break;
	}
	case 6: {
		size_t total = 0;

		msc_proc_cmdline(&fs, 1, count_arg, &total);
		break;
	}
	case 7: {
		struct msc_meminfo mi;

		msc_proc_meminfo(&fs, &mi, &err);
		break;
	}
	default:
		msc_proc_boot_time(&fs);
		break;
	}
	msc_procfs_release(&fs);
	/* The next input finds only its own file. */
	{
		char path[160];

		snprintf(path, sizeof(path), "%s/%s", root, files[k]);
		unlink(path);
	}
	return 0;
}
