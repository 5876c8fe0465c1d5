/* gpulock.c: per-GPU readers-writer locks made of two flock(2)ed files:
 * gpu-N.lock (shared by correctness runs, exclusive for timing) and
 * gpu-N.gate (passed through by everyone; held by a waiting timer).
 * flock locks belong to the open file description, so two threads of one
 * process exclude each other like two processes do, and a process that
 * dies releases its locks. */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "eval/gpulock.h"
#include "util.h"

char *
geak_gpulock_dir(void)
{
	const char *env = getenv("GEAK_LOCK_DIR");

	if (env && *env)
		return geak_xstrdup(env);
	return geak_xasprintf("/tmp/geak-gpulock-%u", (unsigned)getuid());
}

static int
lock_file(const char *dir, const char *gpu, const char *ext, int how)
{
	char *path = geak_xasprintf("%s/gpu-%s.%s", dir, gpu, ext);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600), saved;

	saved = errno;
	free(path);
	if (fd < 0) {
		errno = saved;
		return -1;
	}
	while (flock(fd, how) < 0) {
		if (errno != EINTR) {
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
	}
	return fd;
}

static void
unlock_fd(int *fd)
{
	if (*fd >= 0) {
		flock(*fd, LOCK_UN);
		close(*fd);
	}
	*fd = -1;
}

int
geak_gpulock_acquire(struct geak_gpulock *l, const char *dir, const char *gpu, int exclusive)
{
	l->gate = l->dev = -1;
	if (strchr(gpu, '/') || !*gpu) {
		errno = EINVAL;
		return -1;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	if ((l->gate = lock_file(dir, gpu, "gate", LOCK_EX)) < 0)
		return -1;
	l->dev = lock_file(dir, gpu, "lock", exclusive ? LOCK_EX : LOCK_SH);
	if (l->dev < 0 || !exclusive) {
		int saved = errno;
		unlock_fd(&l->gate);
		errno = saved;
	}
	return l->dev < 0 ? -1 : 0;
}

void
geak_gpulock_release(struct geak_gpulock *l)
{
	unlock_fd(&l->dev);
	unlock_fd(&l->gate);
}

void
geak_gpulock_share(struct geak_gpulock *l)
{
	/* Nobody else can wait for the device lock while we hold the gate,
	 * so the conversion does not wait. */
	while (l->dev >= 0 && flock(l->dev, LOCK_SH) < 0 && errno == EINTR)
		;
	unlock_fd(&l->gate);
}

void
geak_gpuqueue_init(struct geak_gpuqueue *q, const char *dir, const char *gpu)
{
	memset(q, 0, sizeof *q);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->dir = dir;
	q->gpu = gpu;
	q->lock.gate = q->lock.dev = -1;
	q->drain_hold_s = 30;
}

static void
signal_members(struct geak_gpuqueue *q, int sig)
{
	for (struct geak_gpumember *m = q->members; m; m = m->next)
		if (m->pid > 0)
			kill(m->pid, sig);
}

/* Under q->mu, with q->busy set by the caller: take the cross-process
 * lock in a mode (1 shared, 2 exclusive), letting go of q->mu while
 * waiting.  0, or -1 with errno. */
static int
take_lock(struct geak_gpuqueue *q, int want)
{
	int rc = 0, saved = 0;

	if (!q->gpu || q->held == want)
		return 0;
	pthread_mutex_unlock(&q->mu);
	/* Our own shared hold goes first: waiting for the gate while holding
	 * it could deadlock with another process's timing run, which holds
	 * the gate while it waits for every shared hold to go. */
	geak_gpulock_release(&q->lock);
	if (geak_gpulock_acquire(&q->lock, q->dir, q->gpu, want == 2) < 0)
		rc = -1, saved = errno;
	pthread_mutex_lock(&q->mu);
	q->held = rc < 0 ? 0 : want;
	errno = saved;
	return rc;
}

/* The device memory a member expects to use, as far as it may reserve. */
static long
need_of(const struct geak_gpuqueue *q, const struct geak_gpumember *m)
{
	long need = m && m->need_mib > 0 ? m->need_mib : q->guess_mib;

	for (int i = 0; m && i < m->doublings && need < q->memory_mib; i++)
		need *= 2;
	if (m && m->floor_mib > need)
		need = m->floor_mib;
	return need < q->memory_mib ? need : q->memory_mib;
}

/* Whether a run that needs need MiB may start beside the reservations. */
static int
fits(const struct geak_gpuqueue *q, long need)
{
	return !q->memory_mib || !q->reservations || q->reserved_mib + need <= q->memory_mib;
}

/* What a run waits for, holding others back: its memory to fit (ROOM_FIT),
 * fewer correctness runs than fewer_than in flight, or none (ROOM_COUNT,
 * ROOM_NONE). */
enum { ROOM_FIT, ROOM_COUNT, ROOM_NONE };

static int
no_room(const struct geak_gpuqueue *q, int what, long need, int fewer_than)
{
	if (q->exclusive || q->busy)
		return 1;
	switch (what) {
	case ROOM_FIT:
		return !fits(q, need);
	case ROOM_COUNT:
		return q->shared && q->shared >= fewer_than;
	default:
		return q->shared > 0;
	}
}

/* Wait until there is room, holding new correctness runs back for
 * drain_hold_s at most. */
static void
wait_for_room(struct geak_gpuqueue *q, int what, long need, int fewer_than)
{
	struct timespec until;
	int holding = 1;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)q->drain_hold_s;
	until.tv_nsec += (long)((q->drain_hold_s - (double)(time_t)q->drain_hold_s) * 1e9);
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	q->drain_holding++;
	while (no_room(q, what, need, fewer_than)) {
		if (!holding) {
			pthread_cond_wait(&q->cv, &q->mu);
		} else if (pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT) {
			holding = 0;
			q->drain_holding--;
			pthread_cond_broadcast(&q->cv);
		}
	}
	if (holding) {
		q->drain_holding--;
		pthread_cond_broadcast(&q->cv);
	}
}

static void
reserve(struct geak_gpuqueue *q, struct geak_gpumember *m, long need)
{
	if (!m || !q->memory_mib || m->held_mib)
		return;
	m->held_mib = need;
	q->reserved_mib += need;
	q->reservations++;
}

static void
unreserve(struct geak_gpuqueue *q, struct geak_gpumember *m)
{
	if (!m || !m->held_mib)
		return;
	q->reserved_mib -= m->held_mib;
	q->reservations--;
	m->held_mib = 0;
}

/* Join the correctness runs once its memory fits; held_back: it also
 * waits while other runs hold new ones back (a run waiting for room does
 * not, its own hold among them). */
static int
enter_shared(struct geak_gpuqueue *q, struct geak_gpumember *m, int held_back)
{
	long need = need_of(q, m);
	int rc = 0;

	for (;;) {
		while (q->exclusive || q->alone_waiting || q->busy || (held_back && q->drain_holding))
			pthread_cond_wait(&q->cv, &q->mu);
		if (!fits(q, need)) {
			wait_for_room(q, ROOM_FIT, need, 0);
			held_back = 0;
			continue;
		}
		if (q->held || !q->gpu)
			break;
		q->busy = 1;
		rc = take_lock(q, 1);
		q->busy = 0;
		pthread_cond_broadcast(&q->cv);
		if (rc < 0)
			break;
	}
	reserve(q, m, need);
	q->shared++;
	m->next = q->members;
	q->members = m;
	return rc;
}

static int
enter_exclusive(struct geak_gpuqueue *q, int mode)
{
	int paused = 0, rc;

	if (mode == GEAK_GPU_ALONE) {
		q->alone_waiting++;
		while (q->exclusive || q->busy)
			pthread_cond_wait(&q->cv, &q->mu);
		q->alone_waiting--;
		if (q->shared && !q->paused) {
			signal_members(q, SIGUSR1);
			q->paused = 1;
		}
		paused = q->paused ? q->shared : 0;
	} else {
		wait_for_room(q, ROOM_NONE, 0, 0);
	}
	q->exclusive = 1;
	q->busy = 1;
	rc = take_lock(q, 2);
	q->busy = 0;
	pthread_cond_broadcast(&q->cv);
	return rc < 0 ? -1 : paused;
}

int
geak_gpuqueue_enter(struct geak_gpuqueue *q, int mode, struct geak_gpumember *m)
{
	int rc;

	pthread_mutex_lock(&q->mu);
	switch (mode) {
	case GEAK_GPU_SHARED:
		rc = enter_shared(q, m, 1);
		break;
	case GEAK_GPU_ROOM:
		if (!q->memory_mib)
			wait_for_room(q, ROOM_COUNT, 0, q->shared);
		rc = enter_shared(q, m, 0);
		break;
	default:
		rc = enter_exclusive(q, mode);
		if (mode == GEAK_GPU_DRAINED)
			reserve(q, m, need_of(q, m));
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

static void
leave_exclusive(struct geak_gpuqueue *q)
{
	q->exclusive = 0;
	if (q->alone_waiting)
		return; /* the next timing run takes over the lock and the pause */
	if (q->held == 2) {
		if (q->shared) {
			geak_gpulock_share(&q->lock);
			q->held = 1;
		} else {
			geak_gpulock_release(&q->lock);
			q->held = 0;
		}
	}
	if (q->paused) {
		signal_members(q, SIGUSR2);
		q->paused = 0;
	}
}

void
geak_gpuqueue_leave(struct geak_gpuqueue *q, int mode, struct geak_gpumember *m)
{
	pthread_mutex_lock(&q->mu);
	if (mode != GEAK_GPU_ALONE && m && !m->keep)
		unreserve(q, m);
	if (mode == GEAK_GPU_ALONE || mode == GEAK_GPU_DRAINED) {
		leave_exclusive(q);
	} else {
		struct geak_gpumember **pp = &q->members;
		while (*pp && *pp != m)
			pp = &(*pp)->next;
		if (*pp)
			*pp = m->next;
		/* A job can end before its pause reached it: its worker must
		 * not keep the pause for the next job. */
		if (q->paused && m->pid > 0)
			kill(m->pid, SIGUSR2);
		q->shared--;
		if (!q->shared && !q->exclusive && !q->busy && q->held == 1) {
			geak_gpulock_release(&q->lock);
			q->held = 0;
		}
	}
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void
geak_gpuqueue_unreserve(struct geak_gpuqueue *q, struct geak_gpumember *m)
{
	pthread_mutex_lock(&q->mu);
	unreserve(q, m);
	m->keep = 0;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void
geak_gpuqueue_set_memory(struct geak_gpuqueue *q, long device_mib, long slots)
{
	pthread_mutex_lock(&q->mu);
	if (!q->memory_mib && device_mib > 0) {
		q->memory_mib = device_mib - device_mib / 10;
		q->guess_mib = q->memory_mib / (slots > 0 ? slots : 1);
		if (q->guess_mib < 1024)
			q->guess_mib = q->memory_mib < 1024 ? q->memory_mib : 1024;
	}
	pthread_mutex_unlock(&q->mu);
}
