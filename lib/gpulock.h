/* gpulock.h: timing jobs run alone on their GPU, across processes. */
#ifndef GEAK_GPULOCK_H
#define GEAK_GPULOCK_H

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

#endif
