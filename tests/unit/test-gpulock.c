/* Unit tests of the in-process GPU queue (lib/eval/gpulock.c): a timing run
 * pauses the correctness runs in flight instead of waiting for them, and
 * resumes them when the last timing run of its round is done; a drained
 * timing run waits for them; the queue holds the cross-process lock in
 * the right mode.  Threads and sleeps order the events; the log of who
 * started, in order, and the signals the "workers" (this process) got are
 * what is checked. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <cmocka.h>

#include "eval/gpulock.h"

static struct geak_gpuqueue queue;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char event_log[256];
static int in_exclusive, overlap;
/* Signals sent to this process quickly one after another arrive as one:
 * these count that some came, enter's return value how many runs. */
static volatile sig_atomic_t pauses, resumes;

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		pauses++;
	else
		resumes++;
}

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

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

struct job {
	int mode, start_ms, hold_ms;
	const char *name;
	int paused;                /* what enter returned */
	int waited_ms;             /* in enter */
	long need_mib;             /* device memory it reserves; 0: the guess */
};

/* The queue's drain_hold_s for the next run_all; 0: the default. */
static double hold_s;

static int
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void *
run_job(void *arg)
{
	struct job *j = arg;
	struct geak_gpumember me = { .pid = getpid(), .need_mib = j->need_mib };
	int asked, excl = j->mode == GEAK_GPU_ALONE || j->mode == GEAK_GPU_DRAINED;

	nap(j->start_ms);
	asked = now_ms();
	j->paused = geak_gpuqueue_enter(&queue, j->mode, &me);
	j->waited_ms = now_ms() - asked;
	pthread_mutex_lock(&log_mu);
	if (excl && in_exclusive)
		overlap = 1;
	in_exclusive += excl;
	strcat(event_log, j->name);
	pthread_mutex_unlock(&log_mu);
	nap(j->hold_ms);
	pthread_mutex_lock(&log_mu);
	in_exclusive -= excl;
	strcat(event_log, excl ? "_" : "-");
	pthread_mutex_unlock(&log_mu);
	geak_gpuqueue_leave(&queue, j->mode, &me);
	return NULL;
}

/* The device memory of the queue of the next run_all, MiB; 0: unknown. */
static long device_mib;

static void
run_all(struct job *jobs, int n, const char *dir)
{
	pthread_t t[8];

	geak_gpuqueue_init(&queue, dir, dir ? "0" : NULL);
	geak_gpuqueue_set_memory(&queue, device_mib, 4);
	if (hold_s > 0)
		queue.drain_hold_s = hold_s;
	event_log[0] = '\0';
	in_exclusive = overlap = 0;
	pauses = resumes = 0;
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	note(".");
}

/* A timing run starts at once, the correctness runs in flight paused
 * (one signal each), and resumed when it is done. */
static void
test_pauses_shared(void **state)
{
	struct job jobs[] = {
		{ GEAK_GPU_SHARED, 0, 1500, "a", 0, 0, 0 }, { GEAK_GPU_SHARED, 0, 1500, "b", 0, 0, 0 },
		{ GEAK_GPU_ALONE, 400, 100, "T", 0, 0, 0 },
	};

	(void)state;
	run_all(jobs, 3, NULL);
	/* T started and ended before a and b ended. */
	assert_true(strcmp(event_log, "abT_--.") == 0 || strcmp(event_log, "baT_--.") == 0);
	assert_int_equal(jobs[2].paused, 2);
	assert_true(pauses >= 1);
	assert_true(resumes >= 1);
}

/* Timing runs that queue during a round run back to back, before
 * correctness runs that asked earlier; the pause lasts the whole round. */
static void
test_round(void **state)
{
	struct job jobs[] = {
		{ GEAK_GPU_SHARED, 0, 2500, "a", 0, 0, 0 }, { GEAK_GPU_ALONE, 300, 1000, "T", 0, 0, 0 },
		{ GEAK_GPU_SHARED, 600, 50, "b", 0, 0, 0 }, { GEAK_GPU_ALONE, 900, 100, "U", 0, 0, 0 },
	};

	(void)state;
	run_all(jobs, 4, NULL);
	assert_false(overlap);
	assert_string_equal(event_log, "aT_U_b--.");
	/* U took over the pause: it was sent once, and the resume once. */
	assert_int_equal(jobs[1].paused, 1);
	assert_int_equal(jobs[3].paused, 1);
	assert_int_equal(pauses, 1);
	assert_int_equal(resumes, 1);
}

/* A drained timing run waits for the correctness runs in flight, pauses
 * none, and holds back new ones. */
static void
test_drained(void **state)
{
	struct job jobs[] = {
		{ GEAK_GPU_SHARED, 0, 1000, "a", 0, 0, 0 }, { GEAK_GPU_DRAINED, 300, 100, "D", 0, 0, 0 },
		{ GEAK_GPU_SHARED, 600, 50, "b", 0, 0, 0 },
	};

	(void)state;
	run_all(jobs, 3, NULL);
	assert_string_equal(event_log, "a-D_b-.");
	assert_int_equal(jobs[1].paused, 0);
	assert_int_equal(pauses, 0);
}

/* A drained run holds new correctness runs back for drain_hold_s only:
 * one long run in flight must not stop every slot.  It then runs when
 * the GPU is next idle. */
static void
test_drain_hold(void **state)
{
	struct job jobs[] = {
		{ GEAK_GPU_SHARED, 0, 1500, "a", 0, 0, 0 }, { GEAK_GPU_DRAINED, 200, 100, "D", 0, 0, 0 },
		{ GEAK_GPU_SHARED, 300, 100, "b", 0, 0, 0 },
	};

	(void)state;
	hold_s = 0.5;
	run_all(jobs, 3, NULL);
	hold_s = 0;
	assert_string_equal(event_log, "ab--D_.");
	/* b was held back until the hold ran out (at 700 ms), not until a
	 * ended (1500 ms). */
	assert_in_range(jobs[2].waited_ms, 300, 1000);
	assert_in_range(jobs[1].waited_ms, 1100, 2000);
	assert_int_equal(pauses, 0);
}

/* A run waiting for room waits until one run in flight ends, not all,
 * holds new correctness runs back meanwhile, and then runs beside the
 * rest; with none in flight it does not wait. */
static void
test_room(void **state)
{
	struct job jobs[] = {
		{ GEAK_GPU_SHARED, 0, 1200, "a", 0, 0, 0 }, { GEAK_GPU_SHARED, 0, 400, "b", 0, 0, 0 },
		{ GEAK_GPU_ROOM, 200, 100, "R", 0, 0, 0 }, { GEAK_GPU_SHARED, 300, 50, "c", 0, 0, 0 },
		{ GEAK_GPU_ROOM, 1400, 50, "S", 0, 0, 0 },
	};

	(void)state;
	run_all(jobs, 5, NULL);
	assert_true(strcmp(event_log, "ab-Rc---S-.") == 0 || strcmp(event_log, "ba-Rc---S-.") == 0);
	/* R waited for b (until 400 ms), not for a (1200 ms); c for R. */
	assert_in_range(jobs[2].waited_ms, 120, 500);
	assert_in_range(jobs[3].waited_ms, 50, 400);
	assert_in_range(jobs[4].waited_ms, 0, 50);
	assert_int_equal(pauses, 0);
}

/* A run whose memory does not fit beside the runs in flight waits for
 * room, holding back a later run that would fit, so that it is not
 * overtaken; a run reserves its need, doubled once for each time it ran
 * short, at most what the queue has. */
static void
test_memory(void **state)
{
	struct job jobs[] = {
		{ GEAK_GPU_SHARED, 0, 400, "a", 0, 0, 5000 },
		{ GEAK_GPU_SHARED, 50, 300, "b", 0, 0, 5000 },
		{ GEAK_GPU_SHARED, 100, 50, "c", 0, 0, 1000 },
	};
	struct geak_gpumember m = { .pid = 0, .need_mib = 3000, .doublings = 1 };

	(void)state;
	device_mib = 10000;
	run_all(jobs, 3, NULL);
	device_mib = 0;
	assert_int_equal(queue.memory_mib, 9000);
	assert_int_equal(queue.guess_mib, 2250);
	assert_true(strcmp(event_log, "a-bc--.") == 0 || strcmp(event_log, "a-cb--.") == 0);
	assert_in_range(jobs[1].waited_ms, 250, 500);
	assert_in_range(jobs[2].waited_ms, 200, 450);
	assert_int_equal(queue.reserved_mib, 0);
	assert_int_equal(queue.reservations, 0);

	geak_gpuqueue_enter(&queue, GEAK_GPU_SHARED, &m);
	assert_int_equal(m.held_mib, 6000);
	m.keep = 1;
	geak_gpuqueue_leave(&queue, GEAK_GPU_SHARED, &m);
	assert_int_equal(queue.reserved_mib, 6000); /* kept while it waits for its go */
	geak_gpuqueue_unreserve(&queue, &m);
	assert_int_equal(queue.reserved_mib, 0);
	assert_int_equal(m.keep, 0);
	m.floor_mib = 7500; /* what a run short of memory showed, over the doubled 6000 */
	geak_gpuqueue_enter(&queue, GEAK_GPU_ROOM, &m);
	assert_int_equal(m.held_mib, 7500);
	geak_gpuqueue_leave(&queue, GEAK_GPU_ROOM, &m);
	m.floor_mib = 4000; /* below it: the doubled need stands */
	geak_gpuqueue_enter(&queue, GEAK_GPU_ROOM, &m);
	assert_int_equal(m.held_mib, 6000);
	geak_gpuqueue_leave(&queue, GEAK_GPU_ROOM, &m);
	m.doublings = 5;
	m.floor_mib = 20000;
	geak_gpuqueue_enter(&queue, GEAK_GPU_ROOM, &m);
	assert_int_equal(m.held_mib, 9000);
	geak_gpuqueue_leave(&queue, GEAK_GPU_ROOM, &m);
	assert_int_equal(queue.reservations, 0);
}

/* Whether another process could take the device lock now in a mode. */
static int
free_for(const char *dir, int how)
{
	char path[512];
	int fd, ok;

	snprintf(path, sizeof path, "%s/gpu-0.lock", dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	ok = flock(fd, how | LOCK_NB) == 0;
	close(fd);
	return ok;
}

/* The queue holds the cross-process lock for its runs: shared while a
 * correctness run is in flight, exclusive for a timing run (paused
 * correctness runs included), none when idle. */
static void
test_cross_process(void **state)
{
	char dir[] = "/tmp/geak-gpulock-test-XXXXXX";
	struct geak_gpumember a = { .pid = getpid() }, b = { .pid = getpid() };

	(void)state;
	assert_non_null(mkdtemp(dir));
	geak_gpuqueue_init(&queue, dir, "0");
	pauses = resumes = 0;
	assert_int_equal(geak_gpuqueue_enter(&queue, GEAK_GPU_SHARED, &a), 0);
	assert_int_equal(geak_gpuqueue_enter(&queue, GEAK_GPU_SHARED, &b), 0);
	assert_true(free_for(dir, LOCK_SH));
	assert_false(free_for(dir, LOCK_EX));
	assert_int_equal(geak_gpuqueue_enter(&queue, GEAK_GPU_ALONE, NULL), 2);
	assert_false(free_for(dir, LOCK_SH));
	geak_gpuqueue_leave(&queue, GEAK_GPU_ALONE, NULL);
	assert_true(free_for(dir, LOCK_SH));
	assert_false(free_for(dir, LOCK_EX));
	geak_gpuqueue_leave(&queue, GEAK_GPU_SHARED, &a);
	geak_gpuqueue_leave(&queue, GEAK_GPU_SHARED, &b);
	assert_true(free_for(dir, LOCK_EX));
	assert_true(pauses >= 1);
	assert_true(resumes >= 1);
	for (const char *const *f = (const char *const[]){ "lock", "gate", NULL }; *f; f++) {
		char path[512];
		snprintf(path, sizeof path, "%s/gpu-0.%s", dir, *f);
		unlink(path);
	}
	rmdir(dir);
}

/* A job that ends while paused (its pause came too late) is sent the
 * resume as it leaves, so its worker does not keep the pause for its next
 * job. */
static void
test_leave_while_paused(void **state)
{
	struct geak_gpumember a = { .pid = getpid() };

	(void)state;
	geak_gpuqueue_init(&queue, NULL, NULL);
	pauses = resumes = 0;
	geak_gpuqueue_enter(&queue, GEAK_GPU_SHARED, &a);
	assert_int_equal(geak_gpuqueue_enter(&queue, GEAK_GPU_ALONE, NULL), 1);
	assert_int_equal(pauses, 1);
	geak_gpuqueue_leave(&queue, GEAK_GPU_SHARED, &a);
	assert_int_equal(resumes, 1);
	geak_gpuqueue_leave(&queue, GEAK_GPU_ALONE, NULL);
	assert_int_equal(resumes, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pauses_shared),
		cmocka_unit_test(test_round),
		cmocka_unit_test(test_drained),
		cmocka_unit_test(test_drain_hold),
		cmocka_unit_test(test_room),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_cross_process),
		cmocka_unit_test(test_leave_while_paused),
	};
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
