/* SPDX-License-Identifier: MIT */
/*
 * threads: allocations in some threads freed in others.
 *
 *   threads [NPAIRS] [ITEMS]     (defaults 4 and 20000; NPAIRS up to 256)
 *
 * NPAIRS producer threads each allocate ITEMS blocks (sizes 16 + i % 64,
 * from make_item) and hand them to their consumer thread through a queue;
 * each consumer frees every block it receives except those whose index is a
 * multiple of 1000, which it keeps in a list it then drops (leaks).
 *
 * Known answer with the defaults: 4 x 20,000 = 80,000 allocations by
 * make_item, of which 80,000 - 80 are freed by the consumers; leaked: the 80
 * kept items, 16 + i % 64 bytes for i = 0, 1000, ..., 19000 (i % 64 = 0, 40,
 * 16, 56, 32, 8, 48, 24, repeating): 4 x 880 = 3,520 B, and their 80 list
 * nodes of 16 B from keep: 1,280 B.  In all 160 blocks, 4,800 B: per
 * consumer the list head is definitely lost (its last node) and the other 39
 * blocks indirectly (as Valgrind reports).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct item {
	unsigned index;
	char payload[];
};

struct node {
	struct item *item;
	struct node *next;
};

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item **slots;
	unsigned head, tail, cap, done;
};

static unsigned items = 20000;
volatile unsigned sink;

NOINLINE static struct item *make_item(unsigned i)
{
	struct item *it = malloc(16 + i % 64);

	it->index = i;
	sink += i;
	return it;
}

NOINLINE static void keep(struct node **list, struct item *it)
{
	struct node *n = malloc(sizeof(*n));

	n->item = it;
	n->next = *list;
	*list = n;
	sink++;
}

static void *producer(void *arg)
{
	struct queue *q = arg;
	unsigned i;

	for (i = 0; i < items; i++) {
		struct item *it = make_item(i);

		pthread_mutex_lock(&q->lock);
		while (q->tail - q->head == q->cap)
			pthread_cond_wait(&q->cond, &q->lock);
		q->slots[q->tail++ % q->cap] = it;
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
	}
	pthread_mutex_lock(&q->lock);
	q->done = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void *consumer(void *arg)
{
	struct queue *q = arg;
	struct node *kept = NULL;

	for (;;) {
		struct item *it;

		pthread_mutex_lock(&q->lock);
		while (q->head == q->tail && !q->done)
			pthread_cond_wait(&q->cond, &q->lock);
		if (q->head == q->tail && q->done) {
			pthread_mutex_unlock(&q->lock);
			break;
		}
		it = q->slots[q->head++ % q->cap];
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		if (it->index % 1000 == 0)
			keep(&kept, it);
		else
			free(it);
	}
	/* Dropping the list: its nodes and their items leak. */
	kept = NULL;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned pairs = argc > 1 ? (unsigned)atoi(argv[1]) : 4, i;
	pthread_t *t;
	struct queue *q;
	char msg[64];
	int n;

	if (argc > 2)
		items = (unsigned)atoi(argv[2]);
	if (pairs < 1 || pairs > 256 || items < 1) {
		fprintf(stderr, "usage: threads [NPAIRS] [ITEMS]\n");
		return 2;
	}
	t = calloc(2 * pairs, sizeof(*t));
	q = calloc(pairs, sizeof(*q));
	for (i = 0; i < pairs; i++) {
		pthread_mutex_init(&q[i].lock, NULL);
		pthread_cond_init(&q[i].cond, NULL);
		q[i].cap = 64;
		q[i].slots = calloc(q[i].cap, sizeof(*q[i].slots));
		pthread_create(&t[2 * i], NULL, producer, &q[i]);
		pthread_create(&t[2 * i + 1], NULL, consumer, &q[i]);
	}
	for (i = 0; i < 2 * pairs; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < pairs; i++)
		free(q[i].slots);
	free(q);
	free(t);
	n = snprintf(msg, sizeof(msg), "threads: %u pairs done\n", pairs);
	return write(1, msg, (size_t)n) == n ? 0 : 1;
}
