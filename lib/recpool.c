/* recpool.c: read, work on several records at once, write in order.
 *
 * The records between the oldest not yet written and the newest read
 * live in a ring, so that a long input streams through in bounded
 * memory: the reader waits while the ring is full. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "recpool.h"
#include "util.h"

enum { QUEUED, TAKEN, DONE, WRITTEN };

struct item {
	json_t *rec;
	char *raw;                /* the line as read, for records written unchanged */
	size_t rawlen;
	char *where;
	int state;
	int verdict;              /* GEAK_DONE, GEAK_PASS, GEAK_FAILED */
};

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct item *ring;        /* item i is ring[i % cap] */
	size_t cap;
	size_t n;                 /* items read */
	size_t next;              /* no item below it is queued */
	size_t low;               /* no item below it is unwritten */
	size_t nwritten;
	size_t *ready;            /* unordered: items done, in the order done */
	size_t rhead, rtail;
	int eof, read_failed;
	int stop;                 /* the signal that stopped the loop, or 0 */
	struct geak_pool *pool;
};

struct worker_arg {
	struct queue *q;
	void *slot;
};

static struct item *
at(struct queue *q, size_t i)
{
	return &q->ring[i % q->cap];
}

/* Under q->mu: item i is done. */
static void
mark_done(struct queue *q, size_t i, int verdict)
{
	at(q, i)->verdict = verdict;
	at(q, i)->state = DONE;
	if (q->pool->unordered)
		q->ready[q->rtail++ % q->cap] = i;
	pthread_cond_broadcast(&q->cv);
}

/* Queue a record, waiting for room; finished records need no slot.  0,
 * or -1 when the loop is stopping (the record is dropped). */
static int
push(struct queue *q, json_t *rec, const char *raw, size_t rawlen, const char *where,
    int finished, int verdict)
{
	struct item *it;

	pthread_mutex_lock(&q->mu);
	while (q->n - q->low >= q->cap && !q->stop)
		pthread_cond_wait(&q->cv, &q->mu);
	if (q->stop) {
		pthread_mutex_unlock(&q->mu);
		json_decref(rec);
		return -1;
	}
	it = at(q, q->n);
	it->rec = rec;
	it->raw = raw ? geak_xstrndup(raw, rawlen) : NULL;
	it->rawlen = rawlen;
	it->where = geak_xstrdup(where);
	it->state = QUEUED;
	it->verdict = GEAK_DONE;
	q->n++;
	if (finished)
		mark_done(q, q->n - 1, verdict);
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

/* A record with a field of the wrong type keeps its fields and gets an
 * error that names the field, the file and the line. */
static void
bad_field(json_t *rec, struct geak_input *in, const char *msg)
{
	char file[256];
	size_t len;
	const char *raw = geak_input_raw(in, &len);
	/* An error field that is not an object is replaced: the raw line,
	 * which parsed, so is UTF-8, keeps it. */
	json_t *line = json_object_get(rec, "error") ? json_stringn(raw, len) : NULL;
	json_t *err;

	geak_warn("%s: %s", geak_input_where(in), msg);
	snprintf(file, sizeof file, "%s", geak_input_file(in));
	geak_utf8_scrub(file);
	geak_set_error(rec, "input", "bad_field", "%s", msg);
	err = json_object_get(rec, "error");
	if (json_object_set_new(err, "file", json_string(file)) < 0 ||
	    json_object_set_new(err, "line", json_integer(geak_input_lineno(in))) < 0 ||
	    (line && json_object_set_new(err, "raw", line) < 0))
		geak_die(GEAK_EXIT_FATAL, "out of memory");
}

/* Hand a record that is to be worked on to the slots, split into its
 * parts.  0, or -1 when the loop is stopping. */
static int
push_work(struct queue *q, json_t *rec, const char *raw, size_t rawlen, const char *where)
{
	struct geak_pool *p = q->pool;
	json_t **parts = NULL;
	size_t n = p->split ? p->split(p->arg, rec, where, &parts) : 1;

	if (n == 0)
		return push(q, rec, raw, rawlen, where, 1,
		    geak_has_error(rec) ? GEAK_FAILED : GEAK_PASS);
	/* What split kept it may have changed: it is written as it is. */
	if (n == 1)
		return push(q, rec, p->split ? NULL : raw, rawlen, where, !p->fn, GEAK_DONE);
	json_decref(rec);
	for (size_t i = 0; i < n; i++)
		if (push(q, parts[i], NULL, 0, where, !p->fn, GEAK_DONE) < 0) {
			while (++i < n)
				json_decref(parts[i]);
			free(parts);
			return -1;
		}
	free(parts);
	return 0;
}

/* One record read, or made by the source. */
static int
take_record(struct queue *q, json_t *rec, int read_status, struct geak_input *in)
{
	const char *raw = NULL, *where = in ? geak_input_where(in) : "-";
	size_t rawlen = 0;
	char msg[512];

	if (in)
		raw = geak_input_raw(in, &rawlen);
	if (read_status == GEAK_READ_BAD)
		return push(q, rec, NULL, 0, where, 1, GEAK_FAILED);
	if (geak_has_error(rec)) {
		if (!in)
			return push(q, rec, NULL, 0, where, 1, GEAK_FAILED);
		if (!q->pool->all)
			return push(q, rec, raw, rawlen, where, 1, GEAK_PASS);
		return push(q, rec, raw, rawlen, where, !q->pool->fn, GEAK_PASS);
	}
	if (in && geak_check_record(rec, msg, sizeof msg) < 0) {
		bad_field(rec, in, msg);
		return push(q, rec, NULL, 0, where, 1, GEAK_FAILED);
	}
	return push_work(q, rec, raw, rawlen, where);
}

static void
read_files(struct queue *q)
{
	struct geak_input *in = geak_input_open(q->pool->paths, q->pool->npaths);
	json_t *rec;
	int r;

	geak_input_set_shard(in, q->pool->shard, q->pool->shards);
	while ((r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		if (r == GEAK_READ_FAIL) {
			pthread_mutex_lock(&q->mu);
			q->read_failed = 1;
			pthread_mutex_unlock(&q->mu);
		} else if (take_record(q, rec, r, in) < 0) {
			break;
		}
	}
	geak_input_close(in);
}

static void *
reader(void *arg)
{
	struct queue *q = arg;
	struct geak_pool *p = q->pool;

	if (p->source) {
		json_t *rec;
		while ((rec = p->source(p->arg)))
			if (take_record(q, rec, GEAK_READ_OK, NULL) < 0)
				break;
	} else {
		read_files(q);
	}
	pthread_mutex_lock(&q->mu);
	q->eof = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* The next queued record, waiting for one; -1 when the input is done or
 * the loop stops. */
static long
take(struct queue *q)
{
	long i = -1;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->next < q->n && at(q, q->next)->state != QUEUED)
			q->next++;
		if (q->next < q->n || q->eof || q->stop)
			break;
		pthread_cond_wait(&q->cv, &q->mu);
	}
	if (q->next < q->n && !q->stop) {
		i = (long)q->next++;
		at(q, (size_t)i)->state = TAKEN;
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
		json_t *rec = at(q, (size_t)i)->rec;
		const char *where = at(q, (size_t)i)->where;
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

/* Under q->mu: the next record to write, waiting for it; -1 when all are
 * written or the loop stops. */
static long
next_result(struct queue *q)
{
	for (;;) {
		if (q->stop)
			return -1;
		if (q->pool->unordered) {
			if (q->rhead < q->rtail)
				return (long)q->ready[q->rhead++ % q->cap];
		} else if (q->nwritten < q->n && at(q, q->nwritten)->state == DONE) {
			return (long)q->nwritten;
		}
		if (q->eof && q->nwritten >= q->n)
			return -1;
		pthread_cond_wait(&q->cv, &q->mu);
	}
}

static int
write_item(struct geak_output *out, struct queue *q, struct item *it)
{
	if (q->pool->sink)
		return 0;
	if (it->verdict == GEAK_PASS && it->raw)
		return geak_output_write_line(out, it->raw, it->rawlen);
	return geak_output_write(out, it->rec);
}

static int
writer(struct queue *q)
{
	struct geak_output out;
	int status = GEAK_EXIT_OK;
	long i;

	geak_output_init(&out, stdout, "stdout");
	pthread_mutex_lock(&q->mu);
	while ((i = next_result(q)) >= 0) {
		struct item it = *at(q, (size_t)i);
		pthread_mutex_unlock(&q->mu);
		if (it.verdict == GEAK_FAILED && !status)
			status = GEAK_EXIT_RECORDS;
		if (write_item(&out, q, &it) < 0)
			status = GEAK_EXIT_FATAL;
		if (q->pool->written)
			q->pool->written(q->pool->arg, it.verdict);
		json_decref(it.rec);
		free(it.raw);
		free(it.where);
		pthread_mutex_lock(&q->mu);
		memset(at(q, (size_t)i), 0, sizeof it);
		at(q, (size_t)i)->state = WRITTEN;
		q->nwritten++;
		while (q->low < q->n && at(q, q->low)->state == WRITTEN)
			q->low++;
		pthread_cond_broadcast(&q->cv);
	}
	if (q->read_failed)
		status = GEAK_EXIT_FATAL;
	pthread_mutex_unlock(&q->mu);
	if (geak_output_close(&out) < 0)
		status = GEAK_EXIT_FATAL;
	return status;
}

/* ---- stopping on a signal ---- */

struct stopper {
	pthread_t thread;
	sigset_t set, old;
	struct queue *q;
	int on;
};

static void *
wait_signals(void *arg)
{
	struct stopper *st = arg;
	int sig;

	while (sigwait(&st->set, &sig) == 0) {
		if (geak_stopping()) {
			if (sig != SIGINT)
				continue; /* TERM again: the work in flight still ends */
			signal(sig, SIG_DFL);
			pthread_sigmask(SIG_UNBLOCK, &st->set, NULL);
			raise(sig);
		}
		geak_stop(sig);
		pthread_mutex_lock(&st->q->mu);
		st->q->stop = sig;
		pthread_cond_broadcast(&st->q->cv);
		pthread_mutex_unlock(&st->q->mu);
	}
	return NULL;
}

/* Block the stop signals in every thread the loop starts, and wait for
 * them in a thread of their own. */
static void
stopper_start(struct stopper *st, struct queue *q)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	struct sigaction sa;

	sigemptyset(&st->set);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&st->set, sigs[i]);
	st->q = q;
	pthread_sigmask(SIG_BLOCK, &st->set, &st->old);
	if (pthread_create(&st->thread, NULL, wait_signals, st))
		geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	st->on = 1;
}

static void
stopper_end(struct stopper *st)
{
	if (!st->on)
		return;
	pthread_cancel(st->thread);
	pthread_join(st->thread, NULL);
	pthread_sigmask(SIG_SETMASK, &st->old, NULL);
}

/* The loop was stopped: end the process by the signal that stopped it,
 * once the slots have finished what they were doing. */
static void
die_by(int sig, pthread_t *wt, long nslots)
{
	for (long i = 0; i < nslots; i++)
		pthread_join(wt[i], NULL);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	raise(sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	_exit(128 + sig); /* not reached */
}

int
geak_pool_run(struct geak_pool *p)
{
	long nslots = p->nslots > 0 ? p->nslots : 1;
	struct queue q = { .pool = p };
	struct stopper st = { .on = 0 };
	pthread_t rt, *wt = geak_xcalloc((size_t)nslots, sizeof *wt);
	struct worker_arg *wa = geak_xcalloc((size_t)nslots, sizeof *wa);
	int status;

	q.cap = 8 * (size_t)nslots + 256;
	q.ring = geak_xcalloc(q.cap, sizeof *q.ring);
	q.ready = geak_xcalloc(q.cap, sizeof *q.ready);
	pthread_mutex_init(&q.mu, NULL);
	pthread_cond_init(&q.cv, NULL);
	if (p->stoppable)
		stopper_start(&st, &q);
	if (pthread_create(&rt, NULL, reader, &q))
		geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	for (long i = 0; i < nslots && p->fn; i++) {
		wa[i].q = &q;
		wa[i].slot = p->slots ? p->slots[i] : p->arg;
		if (pthread_create(&wt[i], NULL, worker, &wa[i]))
			geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	}
	status = writer(&q);
	if (q.stop)
		die_by(q.stop, wt, p->fn ? nslots : 0);
	pthread_join(rt, NULL);
	for (long i = 0; i < nslots && p->fn; i++)
		pthread_join(wt[i], NULL);
	stopper_end(&st);
	free(q.ring);
	free(q.ready);
	free(wt);
	free(wa);
	pthread_mutex_destroy(&q.mu);
	pthread_cond_destroy(&q.cv);
	return status;
}
