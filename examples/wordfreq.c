/* SPDX-License-Identifier: MIT */
/*
 * wordfreq: counts the words of a text, leaning on libc the way real
 * programs do (stdio, getline, opendir, localtime), so that libc's own
 * allocations sit next to the program's.
 *
 * libc allocates for itself: the FILE and the read buffer of fopen, the
 * stdout buffer (when stdout is not a terminal), the DIR of opendir, the
 * time zone of localtime.  None of them is the program's doing, and
 * libc frees them (fclose, closedir) or keeps them until __libc_freeres.
 *
 * Known answer (leaks of the program, all definitely lost):
 *   1 x 120 B  malloc  getdelim <- read_words   (the getline buffer: glibc
 *                                                starts it at 120 bytes)
 *   3 x 6 B    malloc  strdup <- keep_word <- main  ("gamma", "delta" and
 *                                                "omega" kept, then lost)
 *   1 x 8 B    malloc  vasprintf <- asprintf <- make_title  ("9 words")
 *   1 x 2 B    malloc  strdup <- realpath <- make_title  ("/")
 * = 6 blocks, 148 B.  Output: the word counts, then "wordfreq: done".
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_WORDS 64

static const char text[] =
	"alpha beta gamma\n"
	"delta alpha omega\n"
	"beta gamma alpha\n";

static char *words[MAX_WORDS];
static unsigned nwords;
void *volatile sink;

/* A title for the report, and where it was made: the caller's to free. */
NOINLINE static void make_title(unsigned n)
{
	char *title = NULL, *where;

	if (asprintf(&title, "%u words", n) < 0)
		return;
	sink = title;
	where = realpath("/", NULL);
	sink = where;
	nwords += 0;
}

/* Returns a heap copy of word: the caller's to free. */
NOINLINE static void keep_word(const char *word)
{
	sink = strdup(word);
	nwords += 0;
}

NOINLINE static int read_words(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *tok, *save;
	size_t cap = 0;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		for (tok = strtok_r(line, " \n", &save); tok && nwords < MAX_WORDS;
		     tok = strtok_r(NULL, " \n", &save))
			words[nwords++] = strdup(tok);
	fclose(f);
	sink = line;		/* the getline buffer is never freed */
	line = NULL;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	char path[] = "/tmp/wordfreq.XXXXXX", when[64];
	int fd = mkstemp(path);
	unsigned i, entries = 0;
	time_t t = 86400;
	DIR *d;

	if (fd < 0 || write(fd, text, sizeof(text) - 1) != (ssize_t)(sizeof(text) - 1))
		return 1;
	close(fd);
	if (read_words(path))
		return 1;
	unlink(path);
	qsort(words, nwords, sizeof(*words), cmp);
	make_title(nwords);
	for (i = 0; i < nwords; i++) {
		unsigned n = 1;

		while (i + 1 < nwords && strcmp(words[i], words[i + 1]) == 0) {
			free(words[i]);
			words[i++] = NULL;	/* no stale pointer keeps a block reachable */
			n++;
		}
		printf("%-6s %u\n", words[i], n);
		if (n == 1 || strcmp(words[i], "gamma") == 0)
			keep_word(words[i]);
		free(words[i]);
		words[i] = NULL;
	}
	d = opendir("/");
	while (d && readdir(d))
		entries++;
	if (d)
		closedir(d);
	strftime(when, sizeof(when), "%Y-%m-%d", localtime(&t));
	printf("%s, %u entries in /\n", when, entries > 0 ? 1u : 0u);
	fflush(stdout);
	sink = NULL;		/* the last pointers to the leaks go */
	fputs("wordfreq: done\n", stderr);
	return 0;
}
