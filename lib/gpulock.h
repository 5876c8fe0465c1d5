/* gpulock.h: timing jobs run alone on their GPU, across processes. */
#ifndef GEAK_GPULOCK_H
#define GEAK_GPULOCK_H

#include <pthread.h>

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

/* Within one process, the threads that use a GPU queue here before its
 * lock.  A timing run (exclusive) waits until no correctness run is in
 * flight.  While its patience (patience_s seconds) lasts, new correctness
 * runs still start, so timing runs gather; once it is spent the queue
 * drains: no new correctness run starts until every timing run waiting
 * has run, back to back.  One drain of the correctness runs in flight
 * (which can take as long as the slowest cold compile) then serves a
 * whole round of timing runs, not one each, and a stream of candidates
 * that never reach timing cannot starve it. */
#define GEAK_GPUQUEUE_PATIENCE 30

struct geak_gpuqueue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int shared, exclusive;     /* running now */
	int waiting;               /* timing runs waiting */
	int draining;              /* no new correctness runs until they ran */
	int patience_s;
};

void geak_gpuqueue_init(struct geak_gpuqueue *q, int patience_s);
void geak_gpuqueue_enter(struct geak_gpuqueue *q, int exclusive);
void geak_gpuqueue_leave(struct geak_gpuqueue *q, int exclusive);

#endif
