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

#include "gpulock.h"
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

/* Join the correctness runs; a run that waited for room is not held back
 * by the holds of those that wait (its own among them). */
static int
enter_shared(struct geak_gpuqueue *q, struct geak_gpumember *m, int held_back)
{
	int rc = 0;

	for (;;) {
		while (q->exclusive || q->alone_waiting || q->busy || (held_back && q->drain_holding))
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->held || !q->gpu)
			break;
		q->busy = 1;
		rc = take_lock(q, 1);
		q->busy = 0;
		pthread_cond_broadcast(&q->cv);
		if (rc < 0)
			break;
	}
	q->shared++;
	m->next = q->members;
	q->members = m;
	return rc;
}

/* Wait until fewer than fewer_than correctness runs are in flight, or
 * none, and no timing run is: holding new correctness runs back for
 * drain_hold_s at most. */
static void
wait_for_room(struct geak_gpuqueue *q, int fewer_than)
{
	struct timespec until;
	int holding = 1;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)q->drain_hold_s;
	until.tv_nsec += (long)((q->drain_hold_s - (double)(time_t)q->drain_hold_s) * 1e9);
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	q->drain_holding++;
	while (q->exclusive || q->busy || (q->shared && q->shared >= fewer_than)) {
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
		wait_for_room(q, 1);
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
		wait_for_room(q, q->shared);
		rc = enter_shared(q, m, 0);
		break;
	default:
		rc = enter_exclusive(q, mode);
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
