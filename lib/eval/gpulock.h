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
 * Correctness runs reserve device memory: a run starts beside the others
 * only where what it expects to use fits in what they left of the
 * device's (memory_mib), or where none holds a reservation.  A run that
 * does not fit waits, holding new ones back for drain_hold_s at most,
 * so that smaller runs do not overtake it for ever.  A job that waits for
 * its go to be timed keeps its reservation until it ends: its memory
 * stays in use while it waits.
 *
 * A job that ran out of memory beside other jobs, running or paused
 * (paused ones keep their memory), runs again with more of it free: twice
 * what it expected, or what it showed it needs where that is more.
 * GEAK_GPU_ROOM, with a larger need, is a correctness run that is not
 * held back by the holds of the others; where the device's memory is not
 * known, it waits until fewer correctness runs are in flight than when
 * it asked (or none) instead.  GEAK_GPU_DRAINED, for a job that ran short
 * even so, waits until no correctness run is in flight, holding new ones
 * back as above; after that they start again and the job runs the next
 * time the condition holds, at the latest when the input runs out.
 *
 * Correctness runs in other processes (xargs -P) are not paused, and
 * their memory is not counted: a timing run waits for their shared locks
 * to go, as before. */
enum { GEAK_GPU_SHARED, GEAK_GPU_ALONE, GEAK_GPU_DRAINED, GEAK_GPU_ROOM };

struct geak_gpumember {
	pid_t pid;                      /* the worker to pause; 0: none */
	struct geak_gpumember *next;
	long need_mib;                  /* device memory it expects to use; 0: the queue's guess */
	int doublings;                  /* that, doubled this often (it ran short) */
	long floor_mib;                 /* and at least this (what a run short of it showed) */
	int keep;                       /* leaving keeps the reservation (it waits for its go) */
	long held_mib;                  /* reserved for it; set by the queue */
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
	long memory_mib;                /* what runs may reserve; 0: not known, nothing counted */
	long guess_mib;                 /* what a run that does not know its need reserves */
	long reserved_mib;              /* reserved now, */
	int reservations;               /* by this many runs */
	struct geak_gpumember *members; /* correctness runs in flight */
};

void geak_gpuqueue_init(struct geak_gpuqueue *q, const char *dir, const char *gpu);
/* Wait for the GPU in a mode.  Returns how many runs a GEAK_GPU_ALONE run
 * paused (0 otherwise), or -1 with errno when the cross-process lock
 * could not be taken (the run is admitted all the same). */
int geak_gpuqueue_enter(struct geak_gpuqueue *q, int mode, struct geak_gpumember *m);
void geak_gpuqueue_leave(struct geak_gpuqueue *q, int mode, struct geak_gpumember *m);
/* The reservation a member kept (keep) as it left, given back. */
void geak_gpuqueue_unreserve(struct geak_gpuqueue *q, struct geak_gpumember *m);
/* Count reservations against the device's memory (MiB), of which a tenth
 * is left to what runs hold outside torch's allocator and to the timing
 * runs; a run that does not know its need guesses its share over slots
 * runs.  The first call sets it; later ones do nothing. */
void geak_gpuqueue_set_memory(struct geak_gpuqueue *q, long device_mib, long slots);

#endif
