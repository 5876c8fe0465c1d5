/* recpool.c: read, work on several records at once, write in order.
 *
 * The records between the oldest not yet written and the newest read
 * live in a ring, so that a long input streams through in bounded
 * memory: the reader waits while the ring is full. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "progress.h"
#include "record.h"
#include "recpool.h"
#include "util.h"

enum { QUEUED, TAKEN, DONE, WRITTEN };

/* A record that came with an error: written byte for byte, as GEAK_PASS,
 * and counted apart. */
enum { PASS_ERROR = 4 };

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
	int aborted;              /* fn gave up (GEAK_ABORT) */
	int reader_done;
	struct geak_pool *pool;
	struct geak_pool_stats st;
	long lines_total;         /* non-blank input lines, or -1: not known */
	long lines_taken;         /* input lines taken so far */
	double started;
	struct geak_progress prog;
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

/* Under q->mu. */
static void
count(struct queue *q, int verdict)
{
	switch (verdict) {
	case GEAK_DONE: q->st.done++; break;
	case GEAK_PASS: q->st.passed++; break;
	case PASS_ERROR: q->st.had_error++; break;
	default: q->st.failed++;
	}
}

/* Under q->mu: item i is done. */
static void
mark_done(struct queue *q, size_t i, int verdict)
{
	count(q, verdict);
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
	while (q->n - q->low >= q->cap && !q->stop && !q->aborted)
		pthread_cond_wait(&q->cv, &q->mu);
	if (q->stop || q->aborted) {
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
	pthread_mutex_lock(&q->mu);
	q->lines_taken++;
	pthread_mutex_unlock(&q->mu);
	if (read_status == GEAK_READ_BAD)
		return push(q, rec, NULL, 0, where, 1, GEAK_FAILED);
	if (geak_has_error(rec)) {
		if (!in)
			return push(q, rec, NULL, 0, where, 1, GEAK_FAILED);
		if (!q->pool->all)
			return push(q, rec, raw, rawlen, where, 1, PASS_ERROR);
		return push(q, rec, raw, rawlen, where, !q->pool->fn, PASS_ERROR);
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

/* Non-blank lines of a regular file from off on; -1 when unreadable. */
static long
count_fd(int fd, off_t off)
{
	char buf[1 << 16];
	ssize_t k;
	long n = 0;
	int blank = 1;

	while ((k = pread(fd, buf, sizeof buf, off)) > 0) {
		for (ssize_t i = 0; i < k; i++) {
			if (buf[i] == '\n') {
				n += !blank;
				blank = 1;
			} else if (!isspace((unsigned char)buf[i])) {
				blank = 0;
			}
		}
		off += k;
	}
	return k < 0 ? -1 : n + !blank;
}

/* The records to come, when every input is a regular file (a pipe cannot
 * be read twice): for the progress line's total; -1 when not known. */
static long
count_lines(char *const *paths, int npaths)
{
	long total = 0;

	for (int i = 0; i < (npaths ? npaths : 1); i++) {
		const char *path = npaths ? paths[i] : "-";
		int in = strcmp(path, "-") == 0;
		int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
		off_t off = in ? lseek(fd, 0, SEEK_CUR) : 0;
		struct stat sb;
		long n = -1;

		if (fd < 0)
			return -1;
		if (off >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
			n = count_fd(fd, off);
		if (!in)
			close(fd);
		if (n < 0)
			return -1;
		total += n;
	}
	return total;
}

static void *
reader(void *arg)
{
	struct queue *q = arg;
	struct geak_pool *p = q->pool;

	if (q->prog.mode != GEAK_PROGRESS_OFF && !p->source) {
		long n = count_lines(p->paths, p->npaths);
		pthread_mutex_lock(&q->mu);
		q->lines_total = n;
		pthread_mutex_unlock(&q->mu);
	}
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
	q->reader_done = 1;
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
		if (q->next < q->n || q->eof || q->stop || q->aborted)
			break;
		pthread_cond_wait(&q->cv, &q->mu);
	}
	if (q->next < q->n && !q->stop && !q->aborted) {
		i = (long)q->next++;
		at(q, (size_t)i)->state = TAKEN;
		q->st.in_flight++;
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
		q->st.in_flight--;
		if (v == GEAK_ABORT) {
			q->aborted = 1;
			pthread_cond_broadcast(&q->cv);
		} else {
			mark_done(q, (size_t)i, v);
		}
		pthread_mutex_unlock(&q->mu);
	}
	if (q->pool->slot_end)
		q->pool->slot_end(wa->slot);
	return NULL;
}

/* Under q->mu: wait for the queue to change, or until the next update
 * of the progress line is due; ETIMEDOUT then. */
static int
wait_change(struct queue *q)
{
	struct timespec ts;
	double due;

	if (q->prog.mode == GEAK_PROGRESS_OFF)
		return pthread_cond_wait(&q->cv, &q->mu);
	due = q->prog.last + q->prog.every - geak_now();
	if (due <= 0)
		return ETIMEDOUT;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)due;
	ts.tv_nsec += (long)((due - (double)(time_t)due) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_sec++, ts.tv_nsec -= 1000000000L;
	return pthread_cond_timedwait(&q->cv, &q->mu, &ts);
}

/* Under q->mu: the next record to write, waiting for it; -1 when all are
 * written or the loop stops, -2 when the progress line is due. */
static long
next_result(struct queue *q)
{
	for (;;) {
		if (q->stop || q->aborted)
			return -1;
		if (q->pool->unordered) {
			if (q->rhead < q->rtail)
				return (long)q->ready[q->rhead++ % q->cap];
		} else if (q->nwritten < q->n && at(q, q->nwritten)->state == DONE) {
			return (long)q->nwritten;
		}
		if (q->eof && q->nwritten >= q->n)
			return -1;
		if (wait_change(q) == ETIMEDOUT)
			return -2;
	}
}

static int
write_item(struct geak_output *out, struct queue *q, struct item *it)
{
	/* Its jobs were killed under it: a record now would tell of that. */
	if (q->pool->sink || geak_abandoned())
		return 0;
	if ((it->verdict == GEAK_PASS || it->verdict == PASS_ERROR) && it->raw)
		return geak_output_write_line(out, it->raw, it->rawlen);
	return geak_output_write(out, it->rec);
}

/* ---- the progress line and the summary ---- */

/* Under q->mu: the counts now, with the total known or estimated from
 * the share of the input read. */
static struct geak_pool_stats
stats(struct queue *q)
{
	struct geak_pool_stats st = q->st;

	st.read = q->n;
	st.written = q->nwritten;
	st.elapsed = geak_now() - q->started;
	if (q->eof) {
		st.total = q->n;
	} else if (q->lines_total > 0 && q->lines_taken > 0) {
		long left = q->lines_total - q->lines_taken;
		st.total = q->n + (size_t)(left > 0 ? left : 0) * q->n / (size_t)q->lines_taken;
		st.estimated = left > 0;
	}
	return st;
}

/* "geak-eval: 14/37 done, 5 pass, 2 in flight, 1m02s, ETA 2m40s".  Done
 * is what has finished, written or not: ordered output holds a finished
 * record back behind a slower earlier one, and the line must add up. */
static void
progress_line(struct queue *q, const struct geak_pool_stats *st, struct geak_buf *b)
{
	size_t finished = st->done + st->passed + st->had_error + st->failed;

	geak_buf_printf(b, "%s: %zu/", geak_prog, finished);
	if (st->total)
		geak_buf_printf(b, "%s%zu done", st->estimated ? "~" : "", st->total);
	else
		geak_buf_printf(b, "%zu+ done", st->read);
	if (q->pool->tally)
		q->pool->tally(q->pool->arg, st, b, 0);
	geak_buf_printf(b, ", %zu in flight, ", st->in_flight);
	geak_fmt_duration(b, st->elapsed);
	/* The rate so far, over what is left; none before the first record,
	 * nor while the input's end is not in sight. */
	if (st->total > finished && finished > 0) {
		geak_buf_puts(b, ", ETA ");
		geak_fmt_duration(b, st->elapsed * (double)(st->total - finished) / (double)finished);
	}
}

static void
show_progress(struct queue *q)
{
	struct geak_pool_stats st;
	struct geak_buf b = { 0 };

	if (q->prog.mode == GEAK_PROGRESS_OFF || geak_now() - q->prog.last < q->prog.every)
		return;
	pthread_mutex_lock(&q->mu);
	st = stats(q);
	pthread_mutex_unlock(&q->mu);
	progress_line(q, &st, &b);
	geak_progress_show(&q->prog, b.data, 1);
	geak_buf_free(&b);
}

/* "geak-eval: 37 evaluated, 12 pass, 3 cached, 2 passed through (no code), 4m10s" */
static void
summary(struct queue *q)
{
	struct geak_pool *p = q->pool;
	struct geak_pool_stats st;
	struct geak_buf b = { 0 };

	if (!p->noun)
		return;
	pthread_mutex_lock(&q->mu);
	st = stats(q);
	st.stopped = q->aborted ? -1 : q->stop;
	pthread_mutex_unlock(&q->mu);
	geak_progress_end(&q->prog);
	geak_buf_printf(&b, "%zu %s", st.done, p->noun);
	if (p->tally)
		p->tally(p->arg, &st, &b, 1);
	else if (st.passed)
		geak_buf_printf(&b, ", %zu passed through", st.passed);
	if (st.had_error)
		geak_buf_printf(&b, ", %zu passed through with an error", st.had_error);
	if (st.failed)
		geak_buf_printf(&b, ", %zu error%s", st.failed, st.failed == 1 ? "" : "s");
	geak_buf_puts(&b, ", ");
	geak_fmt_duration(&b, st.elapsed);
	if (st.stopped > 0)
		geak_buf_printf(&b, ", stopped by signal %d", st.stopped);
	else if (st.stopped < 0)
		geak_buf_puts(&b, ", stopped (see above)");
	geak_warn("%s", b.data);
	geak_buf_free(&b);
}

static int
writer(struct queue *q)
{
	struct geak_output out;
	int status = GEAK_EXIT_OK;
	long i;

	geak_output_init(&out, stdout, "stdout");
	pthread_mutex_lock(&q->mu);
	while ((i = next_result(q)) != -1) {
		if (i == -2) {
			pthread_mutex_unlock(&q->mu);
			show_progress(q);
			pthread_mutex_lock(&q->mu);
			continue;
		}
		struct item it = *at(q, (size_t)i);
		pthread_mutex_unlock(&q->mu);
		if (it.verdict == GEAK_FAILED && !status)
			status = GEAK_EXIT_RECORDS;
		if (write_item(&out, q, &it) < 0)
			status = GEAK_EXIT_FATAL;
		if (q->pool->written)
			q->pool->written(q->pool->arg, it.verdict == PASS_ERROR ? GEAK_PASS : it.verdict);
		json_decref(it.rec);
		free(it.raw);
		free(it.where);
		show_progress(q);
		pthread_mutex_lock(&q->mu);
		memset(at(q, (size_t)i), 0, sizeof it);
		at(q, (size_t)i)->state = WRITTEN;
		q->nwritten++;
		while (q->low < q->n && at(q, q->low)->state == WRITTEN)
			q->low++;
		pthread_cond_broadcast(&q->cv);
	}
	if (q->read_failed || q->aborted)
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
die_by(struct queue *q, pthread_t *wt, long nslots)
{
	int sig = q->stop;

	for (long i = 0; i < nslots; i++)
		pthread_join(wt[i], NULL);
	summary(q);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	raise(sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	_exit(128 + sig); /* not reached */
}

static struct queue *
queue_new(struct geak_pool *p, long nslots)
{
	struct queue *q = geak_xcalloc(1, sizeof *q);
	pthread_condattr_t ca;

	q->pool = p;
	q->cap = 8 * (size_t)nslots + 256;
	q->ring = geak_xcalloc(q->cap, sizeof *q->ring);
	q->ready = geak_xcalloc(q->cap, sizeof *q->ready);
	q->lines_total = -1;
	q->started = geak_now();
	pthread_mutex_init(&q->mu, NULL);
	/* The progress line's timed waits count in the clock geak_now reads. */
	if (pthread_condattr_init(&ca) || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&q->cv, &ca))
		geak_die(GEAK_EXIT_FATAL, "cannot make a condition variable");
	pthread_condattr_destroy(&ca);
	if (p->noun)
		geak_progress_init(&q->prog);
	return q;
}

static void
queue_free(struct queue *q)
{
	/* Records left behind by a loop that gave up. */
	for (size_t i = q->low; i < q->n; i++) {
		struct item *it = at(q, i);
		if (it->state != WRITTEN) {
			json_decref(it->rec);
			free(it->raw);
			free(it->where);
		}
	}
	free(q->ring);
	free(q->ready);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
}

/* A loop that gave up may leave its reader waiting for input that never
 * comes (a pipe): the reader keeps the queue, and ends with the process. */
static struct queue *left_reading;

int
geak_pool_run(struct geak_pool *p)
{
	long nslots = p->nslots > 0 ? p->nslots : 1;
	struct queue *q = queue_new(p, nslots);
	struct stopper st = { .on = 0 };
	pthread_t rt, *wt = geak_xcalloc((size_t)nslots, sizeof *wt);
	struct worker_arg *wa = geak_xcalloc((size_t)nslots, sizeof *wa);
	int status, reading;

	if (p->stoppable)
		stopper_start(&st, q);
	if (pthread_create(&rt, NULL, reader, q))
		geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	for (long i = 0; i < nslots && p->fn; i++) {
		wa[i].q = q;
		wa[i].slot = p->slots ? p->slots[i] : p->arg;
		if (pthread_create(&wt[i], NULL, worker, &wa[i]))
			geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	}
	status = writer(q);
	if (q->stop)
		die_by(q, wt, p->fn ? nslots : 0);
	for (long i = 0; i < nslots && p->fn; i++)
		pthread_join(wt[i], NULL);
	summary(q);
	pthread_mutex_lock(&q->mu);
	reading = !q->reader_done;
	pthread_mutex_unlock(&q->mu);
	if (reading && q->aborted) {
		pthread_detach(rt);
		left_reading = q;
	} else {
		pthread_join(rt, NULL);
	}
	stopper_end(&st);
	if (left_reading != q)
		queue_free(q);
	free(wt);
	free(wa);
	return status;
}
