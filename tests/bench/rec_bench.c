/* SPDX-License-Identifier: MIT */
/*
 * rec_bench: how fast the record reader (msc_reader) reads NDJSON, against
 * jansson on the same file.
 *
 *   rec_bench [-n LINES] [-g] FILE
 *
 * Without FILE on disk (or with -g) it first writes FILE: LINES records
 * (default 1,000,000) of a realistic ms-record --events stream: a header,
 * stack records (each before its first use, 3 to 10 frames), alloc and free
 * events, site records, and an end record.  The content is a function of
 * LINES only (fixed PRNG seed), so runs compare.
 *
 * Then it reads FILE twice and times each pass on CLOCK_MONOTONIC:
 *   ours     msc_reader_next() per line (every line fully validated), then
 *            three fields per record: ts, ptr (hex) and size for alloc/free,
 *            stack, bytes and allocs for site, id for stack;
 *   jansson  getline() + json_loadb() per line, then json_object_get() of the
 *            same fields (and strtoull() of the hex ptr).
 * Both fold the fields into a checksum; they must agree, or the benchmark
 * compared different work and exits 1.
 *
 * Output, one line per reader, tab-separated, for tests/bench/run.sh:
 *   reader  records  bytes  seconds  records_per_s  checksum
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "msc_err.h"
#include "msc_ndjson.h"
#include "msc_util.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: fast, and the same stream on every machine. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *const fns[] = {
	"parse_request", "http_read_body", "json_decode_value", "cache_insert",
	"strbuf_grow", "vector_push_back", "std::__cxx11::basic_string<char>::_M_create",
	"worker_loop", "main", "handle_connection", "lru_evict", "config_load",
};
static const char *const files[] = {
	"src/parse.c", "src/http.c", "src/json.c", "src/cache.c", "lib/strbuf.c",
	"include/vector.h", "/usr/include/c++/12/bits/basic_string.tcc", "src/worker.c",
};
static const char *const objs[] = {
	"/usr/local/bin/server", "/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/local/lib/libjsonish.so.2",
};
static const char *const alloc_fns[] = { "malloc", "malloc", "malloc", "calloc", "realloc", "new" };

#define NSTACKS 4096
#define NLIVE 8192

static void write_stack(FILE *f, unsigned id)
{
	unsigned n = 3 + (unsigned)(rnd() % 8), i;

	fprintf(f, "{\"type\":\"stack\",\"id\":%u,\"frames\":[", id);
	for (i = 0; i < n; i++) {
		uint64_t r = rnd();
		unsigned obj = (unsigned)(r % ARRAY_SIZE(objs));

		fprintf(f, "%s{\"ip\":\"0x%" PRIx64 "\",\"obj\":\"%s\"", i ? "," : "",
			(uint64_t)((obj ? 0x7f3a10000000ull : 0x55d0c0a00000ull) + (r >> 40)), objs[obj]);
		if (obj != 1)
			fprintf(f, ",\"fn\":\"%s\",\"file\":\"%s\",\"line\":%u",
				fns[(r >> 8) % ARRAY_SIZE(fns)], files[(r >> 16) % ARRAY_SIZE(files)],
				(unsigned)((r >> 24) % 2000) + 1);
		if (obj != 1 && (r & 0x30) == 0)
			fputs(",\"inline\":true", f);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

static int generate(const char *path, unsigned long lines)
{
	static uint64_t live_ptr[NLIVE];
	static uint32_t live_size[NLIVE], live_stack[NLIVE];
	static bool stack_sent[NSTACKS];
	FILE *f = fopen(path, "w");
	unsigned long i;
	uint64_t ts = 1000, next_ptr = 0x7f3a12340000ull;
	int ret = 0;

	if (!f) {
		fprintf(stderr, "rec_bench: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{\"type\":\"header\",\"format\":\"memscope\",\"version\":1,"
		   "\"tool\":\"ms-record\",\"tool_version\":\"0.1.0\",\"mode\":\"launch\","
		   "\"host\":\"bench\",\"kernel\":\"6.1.0\",\"page_size\":4096,"
		   "\"pid\":4242,\"argv\":[\"/usr/local/bin/server\",\"--port\",\"8080\"],"
		   "\"options\":{\"events\":true,\"depth\":32}}\n");
	for (i = 1; i + 1 < lines; i++) {
		uint64_t r = rnd();
		unsigned kind = (unsigned)(r % 100);
		unsigned slot = (unsigned)((r >> 8) % NLIVE);
		unsigned stack = (unsigned)((r >> 24) % NSTACKS);

		ts += 50 + (r >> 48) % 2000;
		if (!stack_sent[stack]) {
			/* a stack record precedes the first record that uses it */
			stack_sent[stack] = true;
			write_stack(f, stack);
			if (++i + 1 >= lines)
				break;
		}
		if (kind < 10) {
			/* site: aggregated figures of one (stack, size) */
			unsigned allocs = 1 + (unsigned)((r >> 32) % 100000);
			unsigned size = 16u << ((r >> 20) % 10);
			unsigned frees = allocs - (unsigned)((r >> 40) % (allocs < 50 ? allocs : 50));

			fprintf(f, "{\"type\":\"site\",\"stack\":%u,\"size\":%u,\"allocs\":%u,"
				   "\"frees\":%u,\"bytes\":%" PRIu64 ",\"live\":%u,\"live_bytes\":%" PRIu64
				   ",\"peak_live_bytes\":%" PRIu64 ",\"short_lived\":%u}\n",
				stack, size, allocs, frees, (uint64_t)allocs * size, allocs - frees,
				(uint64_t)(allocs - frees) * size,
				(uint64_t)(allocs - frees + 7) * size, frees / 2);
			continue;
		}
		if (kind < 55 || !live_ptr[slot]) {
			unsigned size = (unsigned)(r >> 52) % 512 + 1;

			if (live_ptr[slot]) {
				/* the slot's block is freed first: keeps the stream paired */
				fprintf(f, "{\"type\":\"free\",\"ts\":%" PRIu64 ",\"tid\":%u,\"ptr\":\"0x%"
					   PRIx64 "\",\"size\":%u,\"stack\":%u}\n",
					ts, 4 + (unsigned)(r % 7), live_ptr[slot], live_size[slot],
					live_stack[slot]);
				if (++i + 1 >= lines)
					break;
				ts += 20;
			}
			next_ptr += ((size + 15) & ~15u) + 16;
			live_ptr[slot] = next_ptr;
			live_size[slot] = size;
			live_stack[slot] = stack;
			fprintf(f, "{\"type\":\"alloc\",\"ts\":%" PRIu64 ",\"tid\":%u,\"ptr\":\"0x%" PRIx64
				   "\",\"size\":%u,\"fn\":\"%s\",\"stack\":%u}\n",
				ts, 4 + (unsigned)(r % 7), next_ptr, size,
				alloc_fns[(r >> 4) % ARRAY_SIZE(alloc_fns)], stack);
		} else {
			fprintf(f, "{\"type\":\"free\",\"ts\":%" PRIu64 ",\"tid\":%u,\"ptr\":\"0x%" PRIx64
				   "\",\"size\":%u,\"stack\":%u}\n",
				ts, 4 + (unsigned)(r % 7), live_ptr[slot], live_size[slot],
				live_stack[slot]);
			live_ptr[slot] = 0;
		}
	}
	fprintf(f, "{\"type\":\"end\",\"reason\":\"exit\",\"status\":0,\"events_lost\":0}\n");
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "rec_bench: write error on '%s': %s\n", path, strerror(errno));
		ret = -1;
	}
	return ret;
}

/* Folds one value into the checksum (order-sensitive). */
static inline uint64_t fold(uint64_t sum, uint64_t v)
{
	return (sum ^ v) * 0x100000001b3ull;
}

struct result {
	uint64_t records, checksum;
	double seconds;
};

static int bench_ours(const char *path, struct result *res)
{
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_err err;
	uint64_t sum = 14695981039346656037ull, a, b, c;
	double t0 = now();
	int ret;

	memset(res, 0, sizeof(*res));
	if (msc_reader_open(&r, path, &err)) {
		fprintf(stderr, "rec_bench: %s\n", err.msg);
		return -1;
	}
	while ((ret = msc_reader_next(&r, &rec, &err)) > 0) {
		res->records++;
		a = b = c = 0;
		switch (rec.type[0]) {
		case 'a':
		case 'f':
			if (msc_rec_type_is(&rec, "alloc") || msc_rec_type_is(&rec, "free")) {
				msc_rec_u64(&rec, "ts", &a);
				msc_rec_hex(&rec, "ptr", &b);
				msc_rec_u64(&rec, "size", &c);
			}
			break;
		case 's':
			if (msc_rec_type_is(&rec, "site")) {
				msc_rec_u64(&rec, "stack", &a);
				msc_rec_u64(&rec, "bytes", &b);
				msc_rec_u64(&rec, "allocs", &c);
			} else if (msc_rec_type_is(&rec, "stack")) {
				msc_rec_u64(&rec, "id", &a);
			}
			break;
		}
		sum = fold(fold(fold(sum, a), b), c);
	}
	res->seconds = now() - t0;
	msc_reader_release(&r);
	if (ret < 0) {
		fprintf(stderr, "rec_bench: %s\n", err.msg);
		return -1;
	}
	res->checksum = sum;
	return 0;
}

static uint64_t j_u64(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static int bench_jansson(const char *path, struct result *res)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t sum = 14695981039346656037ull, a, b, c;
	unsigned long lineno = 0;
	double t0 = now();
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (!f) {
		fprintf(stderr, "rec_bench: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		json_error_t jerr;
		json_t *root, *type;
		const char *t;

		lineno++;
		root = json_loadb(line, (size_t)len, 0, &jerr);
		if (!root || !json_is_object(root)) {
			fprintf(stderr, "rec_bench: %s:%lu: jansson: %s\n", path, lineno, jerr.text);
			json_decref(root);
			ret = -1;
			break;
		}
		res->records++;
		a = b = c = 0;
		type = json_object_get(root, "type");
		t = json_is_string(type) ? json_string_value(type) : "";
		if (strcmp(t, "alloc") == 0 || strcmp(t, "free") == 0) {
			json_t *ptr = json_object_get(root, "ptr");

			a = j_u64(root, "ts");
			if (json_is_string(ptr))
				b = strtoull(json_string_value(ptr), NULL, 16);
			c = j_u64(root, "size");
		} else if (strcmp(t, "site") == 0) {
			a = j_u64(root, "stack");
			b = j_u64(root, "bytes");
			c = j_u64(root, "allocs");
		} else if (strcmp(t, "stack") == 0) {
			a = j_u64(root, "id");
		}
		sum = fold(fold(fold(sum, a), b), c);
		json_decref(root);
	}
	res->seconds = now() - t0;
	free(line);
	fclose(f);
	res->checksum = sum;
	return ret;
}

static void report(const char *name, const struct result *res, off_t bytes)
{
	printf("%s\t%" PRIu64 "\t%lld\t%.6f\t%.0f\t%016" PRIx64 "\n", name, res->records,
	       (long long)bytes, res->seconds,
	       res->seconds > 0 ? (double)res->records / res->seconds : 0.0, res->checksum);
}

static void usage(void)
{
	fprintf(stderr, "usage: rec_bench [-n LINES] [-g] FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long lines = 1000000;
	bool gen = false;
	struct result ours, jans;
	struct stat st;
	const char *path;
	int c;

	while ((c = getopt(argc, argv, "n:g")) != -1) {
		switch (c) {
		case 'n': {
			char *end;

			lines = strtoul(optarg, &end, 10);
			if (*end || lines < 2)
				usage();
			break;
		}
		case 'g':
			gen = true;
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc)
		usage();
	path = argv[optind];
	if ((gen || stat(path, &st) != 0) && generate(path, lines))
		return 2;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "rec_bench: cannot stat '%s': %s\n", path, strerror(errno));
		return 2;
	}
	if (bench_ours(path, &ours) || bench_jansson(path, &jans))
		return 2;
	report("ours", &ours, st.st_size);
	report("jansson", &jans, st.st_size);
	if (ours.records != jans.records || ours.checksum != jans.checksum) {
		fprintf(stderr, "rec_bench: the readers disagree: %" PRIu64 " records, %016" PRIx64
				" vs %" PRIu64 " records, %016" PRIx64 "\n",
			ours.records, ours.checksum, jans.records, jans.checksum);
		return 1;
	}
	return 0;
}
