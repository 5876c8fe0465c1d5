/* evaljob.h: geak-eval's jobs: the slots that run them, their two warm
 * harness workers, the GPU each uses, and the directories, nonces and
 * files of a job (geak-harness(7)). */
#ifndef GEAK_EVALJOB_H
#define GEAK_EVALJOB_H

#include <jansson.h>
#include <stddef.h>

#include "eval/evalworker.h"
#include "eval/gpulock.h"

/* How the jobs are run, as the tool that runs them was told: read only,
 * the same for every slot. */
struct geak_evalcfg {
	long jobs;                /* slots at once */
	size_t ngpus;             /* the GPUs they share; 0: the CPU mode */
	const char *vendor;       /* of the GPUs, from the runtimes; NULL: unknown */
	double timeout_s, compile_s;
	int timeout_given;        /* timeout_s was asked for: a task's own is not taken */
	double max_task_timeout_s;  /* the most a task's own timeout may be */
	long max_task_memory_mib;   /* the most a task's own memory may be */
	const char *cache_dir;
	int no_cache, keep, no_perf, verbose;
	int profile;              /* a kernel breakdown of the largest case */
	const char *ncu;          /* the profiler reading hardware counters, or NULL */
	const char *counters_why; /* with profile and no ncu: why there are no counters */
	const char *static_mode;  /* strict, warn or off */
	long reps;
	long file_limit_mib;
	long memory_mib, proc_limit;  /* each job's; 0: none */
	int memory_given;         /* memory_mib was asked for: never more */
	double speedup_limit;     /* flag speedups above it; 0: none */
	const char *python;
	const char *harness;      /* geak_worker.py */
	const char *scratch;      /* this run's private directory */
	const char *triton_cache; /* per-code compile caches, shared by every job */
	const char *lockdir;
	const char *const *write_dirs; /* Landlock: where the workers may write */
	double started;           /* for the trace */
};

/* The workers of a slot: RUN runs code (the candidate's, the reference's)
 * on the GPU; JUDGE judges and checks sources, beside a candidate that
 * waits in RUN to be timed.  Where nothing is timed (the CPU mode,
 * --no-perf) RUN does JUDGE's jobs too, and JUDGE is never started. */
enum { GEAK_W_RUN, GEAK_W_JUDGE, GEAK_NWORKERS };
/* How a job uses the slot's GPU: not at all, or as gpulock.h's modes. */
enum { GEAK_USE_NONE = -1 };

struct geak_slot {
	int idx;
	const struct geak_evalcfg *cfg;
	const char *gpu;
	struct geak_gpuqueue *queue;
	struct geak_worker w[GEAK_NWORKERS];
	int up[GEAK_NWORKERS];
	size_t layer;             /* index of the sandbox layers in use */
	json_t *hello;            /* a stored greeting still valid, or NULL */
	char *home;
	/* A job that said it is ready and waits for go: */
	struct geak_gpumember member;
	int pending;
	char pending_name[64];
};

/* A candidate as its slot evaluates it: made where its record is
 * processed, gone with it.  Every job of the candidate runs through it. */
struct geak_cand {
	struct geak_slot *slot;
	const char *where, *id;   /* its input line and id, for the trace */
	double task_timeout_s;    /* its task's own timeout (task.timeout), or 0 */
	long task_memory_mib;     /* its task's own memory (task.memory_mib), or 0 */
	long gpu_peak_mib;        /* its task's reference's device memory at most
	                           * (calibrated), or 0: a calibration's is not known */
	double lock_wait;         /* seconds waited for the GPU */
	int oom_retries;          /* jobs run again for want of memory */
};

/* One job: what it does, where, and where its failure is said. */
struct geak_jobreq {
	const char *op;           /* GEAK_OP_* */
	const char *dir;          /* its directory (geak_job_dir) */
	const char *nonce;        /* its result carries it */
	json_t *extra;            /* further keys of its request, or NULL */
	char *err;                /* why it failed, where it did */
	size_t errlen;
};

void geak_slot_init(struct geak_slot *s, const struct geak_evalcfg *cfg, int idx, const char *gpu,
	struct geak_gpuqueue *q, const char *home);
void geak_slot_fini(struct geak_slot *s);
/* The worker's greeting: the running RUN worker's, else a stored one
 * whose fingerprint still holds, else NULL. */
json_t *geak_slot_hello(struct geak_slot *s);
/* Start the worker if it is not running; 0 or -1 with err set. */
int geak_slot_up(struct geak_slot *s, int which, char *err, size_t errlen);

/* Every limit a job of the slot's candidate is sent, decided here once:
 * the harness keeps no defaults.  run_s is --timeout where given, else
 * its task's own (at most --max-task-timeout), else the default
 * --timeout; the others follow from it and --compile-timeout. */
struct geak_budget {
	double run_s;        /* a job, after its first call returned (request timeout) */
	double compile_s;    /* until then, on top (request compile_timeout) */
	double calib_run_s;  /* each run of a calibration (request run_budget) */
	double calib_s;      /* a calibration, after its start (its request timeout) */
	double regen_s;      /* an imported profile's outputs made again (its request timeout) */
	double counters_s;   /* the profiler reading hardware counters (ncu_timeout) */
	long warmup;         /* untimed calls of each timed case (timing warmup) */
};
struct geak_budget geak_budget(const struct geak_cand *c);

/* One job on a worker, through the GPU's queue in mode (GEAK_GPU_*, or
 * GEAK_USE_NONE): its response, or NULL with err set (the worker failed).
 * A correctness run that ran out of memory beside others runs again with
 * more of it free (see retry_mode in evaljob.c). */
json_t *geak_job(struct geak_cand *c, int which, int mode, const struct geak_jobreq *job);
/* geak_job for a job that answers in its folder's file NAME, written with
 * the job's nonce: the file's JSON, or NULL with the job's err set to
 * WHAT, how the job ended, and what the file's refusal or the job's
 * stderr says. */
json_t *geak_job_answer(struct geak_cand *c, int which, int mode, const struct geak_jobreq *job,
    const char *name, const char *what);
/* A job that says when it is ready and waits for go: shared until then.
 * Returns {"ready": true} (the job waits: answer with geak_job_go) or
 * the job's response, or NULL with err set. */
json_t *geak_job_start(struct geak_cand *c, const struct geak_jobreq *job);
/* Tell the waiting job to go (alone on the GPU) or to stop; its response. */
json_t *geak_job_go(struct geak_cand *c, int go, char *err, size_t errlen);

/* A fresh directory under the run's jobs/; caller frees. */
char *geak_job_dir(const struct geak_evalcfg *cfg, const char *prefix);
void geak_job_drop(const struct geak_evalcfg *cfg, char *dir);
void geak_nonce(char out[33]);
/* A job's JSON file, read as geak_read_untrusted reads (its job may have
 * made or replaced it), or NULL.  why, where not NULL, gets why a file
 * that is there was not read (a link, a FIFO, too large): the job's
 * doing. */
json_t *geak_job_load(const char *dir, const char *name, char *why, size_t whylen);
/* A job's file NAME in its folder FROM, read as geak_job_load reads it,
 * copied to the new file PATH (ours, mode 0600) if it holds at most cap
 * bytes: 0, or an errno (ENOENT: the job left none; EFBIG: over cap),
 * which geak_untrusted_why words.  A PATH left half-written is removed. */
int geak_job_copy(const char *from, const char *name, const char *path, unsigned long long cap);
void geak_job_dump(json_t *v, const char *dir, const char *name);
/* The job's result file carries this nonce. */
int geak_job_nonce_ok(json_t *result, const char *nonce);
const char *geak_job_status(json_t *resp);
/* The job left the harness's mark of running out of GPU memory (taken
 * away); need_mib, where not NULL, gets the device memory it showed it
 * needs (0: not known). */
int geak_job_ran_short(const char *dir, long *need_mib);
/* The last bytes of a job's file as a JSON string, or null; why as for
 * geak_job_load. */
json_t *geak_job_tail(const char *dir, const char *name, size_t bytes, char *why, size_t whylen);
/* What a job's stderr says: its last line, then its last lines whole. */
void geak_job_gist(const char *dir, char *buf, size_t n);

/* With verbose: one line per step of a candidate on stderr. */
void geak_trace(const struct geak_cand *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
