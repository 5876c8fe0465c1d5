/* gpulock.c: per-GPU readers-writer locks made of two flock(2)ed files:
 * gpu-N.lock (shared by correctness runs, exclusive for timing) and
 * gpu-N.gate (passed through by everyone; held by a waiting timer).
 * flock locks belong to the open file description, so two threads of one
 * process exclude each other like two processes do, and a process that
 * dies releases its locks. */
#include <errno.h>
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
geak_gpuqueue_init(struct geak_gpuqueue *q, int patience_s)
{
	memset(q, 0, sizeof *q);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->patience_s = patience_s;
}

void
geak_gpuqueue_enter(struct geak_gpuqueue *q, int exclusive)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += q->patience_s;
	pthread_mutex_lock(&q->mu);
	if (exclusive) {
		q->waiting++;
		while (q->shared || q->exclusive) {
			if (q->draining)
				pthread_cond_wait(&q->cv, &q->mu);
			else if (pthread_cond_timedwait(&q->cv, &q->mu, &until) == ETIMEDOUT)
				q->draining = 1;
		}
		q->waiting--;
		q->exclusive = 1;
	} else {
		while (q->exclusive || q->draining)
			pthread_cond_wait(&q->cv, &q->mu);
		q->shared++;
	}
	pthread_mutex_unlock(&q->mu);
}

void
geak_gpuqueue_leave(struct geak_gpuqueue *q, int exclusive)
{
	pthread_mutex_lock(&q->mu);
	if (exclusive) {
		q->exclusive = 0;
		/* The device is free of correctness runs now: the timing runs
		 * waiting go first, so one drain serves them all. */
		q->draining = q->waiting > 0;
	} else {
		q->shared--;
	}
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}
