#!/bin/sh
# A program that writes over the memory it shares with ms-record (a stray
# write into its own ring) is never hung by it: ms-record says so once,
# the end record says "corrupt", and the thread whose ring it was runs on,
# its later events dropped, in lossless mode where it would wait for room.
. "$(dirname "$0")/lib.sh"

# Stops ms-record (its parent), makes an allocation, spoils that record in
# its own ring, lets ms-record go on, then allocates ten rings' worth.
cat >"$OUT/spoil.c" <<'C'
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "msc_proto.h"

static void stop_parent(void)
{
	char path[64], st[512], *p;
	FILE *f;

	kill(getppid(), SIGSTOP);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getppid());
	for (;;) {	/* stopped for sure: it must not read the record first */
		f = fopen(path, "r");
		st[0] = '\0';
		if (f) {
			if (!fgets(st, sizeof(st), f))
				st[0] = '\0';
			fclose(f);
		}
		p = strrchr(st, ')');
		if (p && p[1] == ' ' && p[2] == 'T')
			return;
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	void *volatile keep = malloc(16);
	uintptr_t lo = 0;
	char line[512];
	struct msc_ctl *ctl;
	struct msc_ring *mine = NULL;
	uint64_t head, *rec;
	unsigned i;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:memscope") && sscanf(line, "%lx", &lo) == 1)
			break;
	if (f)
		fclose(f);
	if (!lo)
		return 3;
	ctl = (struct msc_ctl *)lo;
	for (i = 1; i < ctl->nrings && !mine; i++) {
		struct msc_ring *r = msc_ring_at((void *)lo, ctl, i);

		if (r->tid == (uint32_t)syscall(SYS_gettid) && r->state == MSC_RING_OWNED)
			mine = r;
	}
	if (!mine)
		return 4;
	stop_parent();
	keep = malloc(24);
	head = mine->head;
	rec = (uint64_t *)(msc_ring_data(mine) + ((head - 32) & (ctl->ring_size - 1)));
	if (MSC_EV_TYPE(rec[0]) != MSC_EV_ALLOC) {
		kill(getppid(), SIGCONT);
		return 5;
	}
	if (strcmp(argv[1], "garbage") == 0)
		rec[0] = 0xdeadbeefdeadbeefull;
	else	/* an ALLOC of 2 words: no address, no size */
		rec[0] = msc_ev_hdr(MSC_EV_ALLOC, MSC_FN_MALLOC, 2, 0);
	kill(getppid(), SIGCONT);
	for (i = 0; i < 10 * (ctl->ring_size / 32); i++)
		free(malloc(32 + (i & 63)));
	(void)keep;
	(void)argc;
	puts("spoil: done");
	return 0;
}
C
cc -O1 -g -I"$TOP/libmsc/proto" -o "$OUT/spoil" "$OUT/spoil.c"

for how in garbage short; do
	check_status "$how: the program ends, unhung" 0 \
		timeout 30 ms-record -o "$OUT/$how.ndjson" "$OUT/spoil" "$how"
	check_grep "$how: the program ran to its end" "spoil: done" "$OUT/last.out"
	check_eq "$how: one warning" 1 "$(grep -c 'ring 1 holds something that is not a record' "$OUT/last.err")"
	check_eq "$how: and the summary" 2 "$(wc -l <"$OUT/last.err")"
	check_eq "$how: end record" "exit 0 true 0" \
		"$(jq -r 'select(.type=="end") | "\(.reason) \(.status) \(.corrupt) \(.lost)"' "$OUT/$how.ndjson")"
done
finish
