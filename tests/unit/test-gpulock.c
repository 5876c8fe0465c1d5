/* Unit tests of the in-process GPU queue (lib/gpulock.c): a timing run
 * never overlaps a correctness run, waits for those in flight, lets new
 * ones start while its patience lasts (so timing runs gather), and stops
 * them once it is spent.  Threads and short sleeps order the events; the
 * log of who held what, in order, is what is checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpulock.h"

static struct geak_gpuqueue queue;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char event_log[256];
static int in_shared, in_exclusive, overlap;

static void
note(const char *what)
{
	pthread_mutex_lock(&log_mu);
	strcat(event_log, what);
	pthread_mutex_unlock(&log_mu);
}

static void
nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct job {
	int exclusive, start_ms, hold_ms;
	const char *name;
};

static void *
run_job(void *arg)
{
	struct job *j = arg;

	nap(j->start_ms);
	geak_gpuqueue_enter(&queue, j->exclusive);
	pthread_mutex_lock(&log_mu);
	if (j->exclusive ? in_shared || in_exclusive : in_exclusive)
		overlap = 1;
	*(j->exclusive ? &in_exclusive : &in_shared) += 1;
	strcat(event_log, j->name);
	pthread_mutex_unlock(&log_mu);
	nap(j->hold_ms);
	pthread_mutex_lock(&log_mu);
	*(j->exclusive ? &in_exclusive : &in_shared) -= 1;
	pthread_mutex_unlock(&log_mu);
	geak_gpuqueue_leave(&queue, j->exclusive);
	return NULL;
}

static void
run_all(struct job *jobs, int n, int patience_s)
{
	pthread_t t[8];

	geak_gpuqueue_init(&queue, patience_s);
	event_log[0] = '\0';
	in_shared = in_exclusive = overlap = 0;
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	note(".");
}

/* A timing run waits for the correctness runs in flight. */
static void
test_waits_for_shared(void **state)
{
	struct job jobs[] = {
		{ 0, 0, 800, "a" }, { 0, 0, 800, "b" }, { 1, 300, 50, "T" },
	};

	(void)state;
	run_all(jobs, 3, 30);
	assert_false(overlap);
	assert_string_equal(event_log + 2, "T.");
}

/* Within its patience a waiting timing run lets new correctness runs
 * start; timing runs that queue meanwhile go back to back. */
static void
test_gathers(void **state)
{
	struct job jobs[] = {
		{ 0, 0, 600, "a" }, { 1, 100, 50, "T" }, { 0, 250, 600, "b" }, { 1, 400, 50, "U" },
	};

	(void)state;
	run_all(jobs, 4, 30);
	assert_false(overlap);
	/* b started while T waited; T and U ran only after a and b. */
	assert_true(strcmp(event_log, "abTU.") == 0 || strcmp(event_log, "abUT.") == 0);
}

/* Once its patience is spent, a timing run holds back new correctness
 * runs, so it is not starved. */
static void
test_patience(void **state)
{
	struct job jobs[] = {
		{ 0, 0, 2000, "a" }, { 1, 200, 50, "T" }, { 0, 1600, 50, "b" },
	};

	(void)state;
	run_all(jobs, 3, 1);
	assert_false(overlap);
	assert_string_equal(event_log, "aTb.");
}

/* Timing runs that queue while the queue drains join the round: they run
 * before correctness runs that asked earlier, so the device is drained
 * once for all of them. */
static void
test_round(void **state)
{
	struct job jobs[] = {
		{ 0, 0, 3000, "a" }, { 1, 100, 50, "T" }, { 0, 1600, 50, "b" }, { 0, 1700, 50, "c" },
		{ 0, 1800, 50, "d" }, { 1, 2500, 50, "U" },
	};

	(void)state;
	run_all(jobs, 6, 1);
	assert_false(overlap);
	/* T and U in either order, then b, c and d in any order. */
	assert_true(strncmp(event_log, "aTU", 3) == 0 || strncmp(event_log, "aUT", 3) == 0);
	assert_int_equal(strlen(event_log), 7);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_for_shared),
		cmocka_unit_test(test_gathers),
		cmocka_unit_test(test_patience),
		cmocka_unit_test(test_round),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
