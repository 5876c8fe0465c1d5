/* recpool.c: read, work on several records at once, write in order. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "recpool.h"
#include "util.h"

struct item {
	json_t *rec;
	char *raw;                /* the line as read, for records written unchanged */
	size_t rawlen;
	char *where;
	int state;                /* 0 queued, 1 taken, 2 done */
	int verdict;              /* GEAK_DONE, GEAK_PASS, GEAK_FAILED */
};

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct item *items;
	size_t n, cap, next;
	size_t *ready;            /* indices done, in the order they were done */
	size_t nready, ready_cap;
	int eof, read_failed;
	struct geak_pool *pool;
};

struct worker_arg {
	struct queue *q;
	void *slot;
};

/* Under q->mu: item i is done. */
static void
mark_done(struct queue *q, size_t i, int verdict)
{
	q->items[i].verdict = verdict;
	q->items[i].state = 2;
	if (q->nready == q->ready_cap) {
		q->ready_cap = q->ready_cap ? 2 * q->ready_cap : 64;
		q->ready = geak_xrealloc(q->ready, q->ready_cap * sizeof *q->ready);
	}
	q->ready[q->nready++] = i;
	pthread_cond_broadcast(&q->cv);
}

static void *
reader(void *arg)
{
	struct queue *q = arg;
	struct geak_input *in = geak_input_open(q->pool->paths, q->pool->npaths);
	json_t *rec;
	int r;

	while ((r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		size_t len;
		const char *raw = geak_input_raw(in, &len);
		pthread_mutex_lock(&q->mu);
		if (r == GEAK_READ_FAIL) {
			q->read_failed = 1;
			pthread_mutex_unlock(&q->mu);
			continue;
		}
		if (q->n == q->cap) {
			q->cap = q->cap ? 2 * q->cap : 64;
			q->items = geak_xrealloc(q->items, q->cap * sizeof *q->items);
		}
		struct item *it = &q->items[q->n++];
		it->rec = rec;
		it->raw = r == GEAK_READ_OK ? geak_xstrndup(raw, len) : NULL;
		it->rawlen = len;
		it->where = geak_xstrdup(geak_input_where(in));
		it->state = 0;
		it->verdict = GEAK_DONE;
		if (r == GEAK_READ_BAD || geak_has_error(rec))
			mark_done(q, q->n - 1, r == GEAK_READ_BAD ? GEAK_FAILED : GEAK_PASS);
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
	}
	geak_input_close(in);
	pthread_mutex_lock(&q->mu);
	q->eof = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* The next queued record, waiting for one; -1 when the input is done. */
static long
take(struct queue *q)
{
	long i = -1;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->next < q->n && q->items[q->next].state != 0)
			q->next++;
		if (q->next < q->n || q->eof)
			break;
		pthread_cond_wait(&q->cv, &q->mu);
	}
	if (q->next < q->n) {
		i = (long)q->next++;
		q->items[i].state = 1;
	}
	pthread_mutex_unlock(&q->mu);
	return i;
}

static void *
worker(void *arg)
{
	struct worker_arg *wa = arg;
	struct queue *q = wa->q;
	long i;

	while ((i = take(q)) >= 0) {
		pthread_mutex_lock(&q->mu);
		json_t *rec = q->items[i].rec;
		const char *where = q->items[i].where;
		pthread_mutex_unlock(&q->mu);
		int v = q->pool->fn(wa->slot, rec, where);
		pthread_mutex_lock(&q->mu);
		mark_done(q, (size_t)i, v);
		pthread_mutex_unlock(&q->mu);
	}
	if (q->pool->slot_end)
		q->pool->slot_end(wa->slot);
	return NULL;
}

/* The next record to write, waiting for it; -1 when all are written. */
static long
next_result(struct queue *q, size_t written)
{
	long i = -1;

	pthread_mutex_lock(&q->mu);
	if (q->pool->unordered) {
		while (written >= q->nready && !(q->eof && written >= q->n))
			pthread_cond_wait(&q->cv, &q->mu);
		if (written < q->nready)
			i = (long)q->ready[written];
	} else {
		while (!(written < q->n && q->items[written].state == 2) && !(q->eof && written >= q->n))
			pthread_cond_wait(&q->cv, &q->mu);
		if (written < q->n)
			i = (long)written;
	}
	pthread_mutex_unlock(&q->mu);
	return i;
}

static int
writer(struct queue *q)
{
	struct geak_output out;
	int status = GEAK_EXIT_OK;
	long i;

	geak_output_init(&out, stdout, "stdout");
	for (size_t written = 0; (i = next_result(q, written)) >= 0; written++) {
		pthread_mutex_lock(&q->mu);
		struct item it = q->items[i];
		q->items[i].rec = NULL;
		q->items[i].raw = NULL;
		q->items[i].where = NULL;
		pthread_mutex_unlock(&q->mu);
		if (it.verdict == GEAK_FAILED && !status)
			status = GEAK_EXIT_RECORDS;
		int w = it.verdict == GEAK_PASS && it.raw ? geak_output_write_line(&out, it.raw, it.rawlen)
		    : geak_output_write(&out, it.rec);
		if (w < 0 || (q->pool->unordered && fflush(stdout) == EOF))
			status = GEAK_EXIT_FATAL;
		if (q->pool->written)
			q->pool->written(q->pool->arg, it.verdict);
		json_decref(it.rec);
		free(it.raw);
		free(it.where);
	}
	if (q->read_failed)
		status = GEAK_EXIT_FATAL;
	if (geak_output_close(&out) < 0)
		status = GEAK_EXIT_FATAL;
	return status;
}

int
geak_pool_run(struct geak_pool *p)
{
	struct queue q = { .pool = p };
	pthread_t rt, *wt = geak_xcalloc((size_t)p->nslots, sizeof *wt);
	struct worker_arg *wa = geak_xcalloc((size_t)p->nslots, sizeof *wa);
	int status;

	pthread_mutex_init(&q.mu, NULL);
	pthread_cond_init(&q.cv, NULL);
	if (pthread_create(&rt, NULL, reader, &q))
		geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	for (long i = 0; i < p->nslots; i++) {
		wa[i].q = &q;
		wa[i].slot = p->slots[i];
		if (pthread_create(&wt[i], NULL, worker, &wa[i]))
			geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	}
	status = writer(&q);
	pthread_join(rt, NULL);
	for (long i = 0; i < p->nslots; i++)
		pthread_join(wt[i], NULL);
	free(q.items);
	free(q.ready);
	free(wt);
	free(wa);
	pthread_mutex_destroy(&q.mu);
	pthread_cond_destroy(&q.cv);
	return status;
}
