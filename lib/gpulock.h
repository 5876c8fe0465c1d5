/* gpulock.h: timing jobs run alone on their GPU, across processes. */
#ifndef GEAK_GPULOCK_H
#define GEAK_GPULOCK_H

#include <pthread.h>
#include <sys/types.h>

/* The directory of the lock files: $GEAK_LOCK_DIR, else
 * /tmp/geak-gpulock-<uid>.  Every geak-eval on a host that uses the same
 * directory shares the locks.  Caller frees. */
char *geak_gpulock_dir(void);

/* A held lock of one GPU: shared (correctness runs, any number at once)
 * or exclusive (a timing run, alone on the device). */
struct geak_gpulock {
	int gate, dev; /* descriptors; -1 when not held */
};

/* Take the lock of one GPU (an index or UUID), waiting for it.  A waiting
 * exclusive taker holds the gate, so new shared takers queue behind it
 * and a timing run is never starved.  0, or -1 with errno. */
int geak_gpulock_acquire(struct geak_gpulock *l, const char *dir, const char *gpu, int exclusive);
void geak_gpulock_release(struct geak_gpulock *l);

/* Turn a held exclusive lock into a shared one without letting another
 * exclusive taker in between. */
void geak_gpulock_share(struct geak_gpulock *l);

/* Within one process, the threads that use a GPU go through its queue,
 * which holds the cross-process lock above for all of them: shared while
 * correctness runs are in flight, exclusive while a timing run is.
 *
 * A timing run does not wait for the correctness runs in flight: it
 * pauses them (SIGUSR1 to each one's worker, which stops the job's
 * process group and stops its clock) and resumes them (SIGUSR2) when the
 * last timing run waiting is done.  Waiting for them instead cost a
 * drain of every correctness run in flight per round of timing runs; one
 * cold compile or one hung reference held all timing up for minutes.
 * Timing runs that queue meanwhile run back to back, before new
 * correctness runs.
 *
 * A job that ran out of memory beside other jobs, running or paused
 * (paused ones keep their memory), runs again with more of it free.
 * GEAK_GPU_ROOM waits until fewer correctness runs are in flight than
 * when it asked (or none), holding new ones back meanwhile, and then runs
 * as a correctness run: the wait lasts as long as the shortest run in
 * flight, not the longest.  GEAK_GPU_DRAINED, for a job that ran short
 * even so, waits until no correctness run is in flight.  Either holds new
 * ones back for drain_hold_s at most (geak-eval: as long as a run may
 * last); after that they start again and the job runs the next time the
 * condition holds, at the latest when the input runs out.
 *
 * Correctness runs in other processes (xargs -P) are not paused: a timing
 * run waits for their shared locks to go, as before. */
enum { GEAK_GPU_SHARED, GEAK_GPU_ALONE, GEAK_GPU_DRAINED, GEAK_GPU_ROOM };

struct geak_gpumember {
	pid_t pid;                      /* the worker to pause; 0: none */
	struct geak_gpumember *next;
};

struct geak_gpuqueue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *dir, *gpu;          /* the cross-process lock; gpu NULL: none */
	struct geak_gpulock lock;
	int held;                       /* 0, 1 shared or 2 exclusive */
	int busy;                       /* a thread is changing the lock */
	int shared, exclusive;          /* runs admitted */
	int alone_waiting;
	int drain_holding;              /* drained or room runs holding back new runs */
	double drain_hold_s;            /* for how long at most (default 30 s) */
	int paused;                     /* the members are paused */
	struct geak_gpumember *members; /* correctness runs in flight */
};

void geak_gpuqueue_init(struct geak_gpuqueue *q, const char *dir, const char *gpu);
/* Wait for the GPU in a mode.  Returns how many runs a GEAK_GPU_ALONE run
 * paused (0 otherwise), or -1 with errno when the cross-process lock
 * could not be taken (the run is admitted all the same). */
int geak_gpuqueue_enter(struct geak_gpuqueue *q, int mode, struct geak_gpumember *m);
void geak_gpuqueue_leave(struct geak_gpuqueue *q, int mode, struct geak_gpumember *m);

#endif
