/* evalworker.h: geak-eval's warm Python worker (share/harness/geak_worker.py).
 *
 * The worker imports torch and Triton once and forks a child per job; it
 * runs under eval/sandbox.h's layers, and talks JSON lines over a socket
 * that it sees as descriptor 3. */
#ifndef GEAK_EVALWORKER_H
#define GEAK_EVALWORKER_H

#include <jansson.h>

#include "eval/sandbox.h"
#include "runner.h"
#include "util.h"

struct geak_worker_opts {
	const char *python;            /* interpreter */
	const char *script;            /* geak_worker.py */
	const char *gpu;               /* the device (physical index or UUID); NULL: CPU mode */
	const char *vendor;            /* "nvidia", "amd" or NULL: unknown */
	const char *home;              /* the worker's HOME (writable) */
	const char *triton_cache;      /* root of the per-code Triton caches, or NULL */
	const char *const *write_dirs; /* Landlock: where the worker may write */
	double start_timeout_s;        /* for the greeting (imports) */
	int cpu_threads;               /* OMP_NUM_THREADS when the user set none; 0: leave it */
	int sandbox;                   /* GEAK_SB_* layers to ask for */
	long long file_limit;          /* bytes one file of the worker's may take; 0: no limit */
	const char *run_dir;           /* the run's private directory; NULL: no private root */
	long long job_memory;          /* bytes of memory a job may use; 0: no limit */
	long job_procs;                /* processes and threads a job may have; 0: no limit */
	const char *profiler;          /* a profiler the jobs run (its folder is shown), or NULL */
};

struct geak_worker {
	struct geak_proc proc;
	int fd;            /* our end of the socket; -1: not running */
	char *rbuf;        /* bytes read past the last line */
	size_t rlen;
	json_t *hello;     /* the greeting: harness, versions, device */
	int sandbox;       /* GEAK_SB_* layers applied to the worker */
	struct geak_buf err_tail; /* the worker's own stderr, last bytes */
	int id;            /* its sandbox number (uid, cgroups); -1: none */
	char *cg_worker, *cg_job; /* its cgroups, or NULL */
	long long job_memory_set; /* cg_job's memory.max as last set, bytes */
	json_t *job_sandbox;      /* the layers the last job said it ran under */
};

int geak_worker_start(struct geak_worker *w, const struct geak_worker_opts *o,
	char *err, size_t errlen);
/* The halves of geak_worker_start, so that several workers import torch
 * at once: start the process; wait for its greeting. */
int geak_worker_spawn(struct geak_worker *w, const struct geak_worker_opts *o,
	char *err, size_t errlen);
int geak_worker_greet(struct geak_worker *w, const struct geak_worker_opts *o,
	char *err, size_t errlen);
/* Send one request and wait up to timeout_s for its answer (a new
 * reference).  NULL with err set when the worker died or did not answer
 * in time; the worker is then stopped. */
json_t *geak_worker_call(struct geak_worker *w, json_t *req, double timeout_s,
	char *err, size_t errlen);
/* The halves of a call, for a job that talks with geak-eval on its way
 * (a timing run says when it is ready to time, and waits to be told to
 * go): send one line; read one line, as geak_worker_call does. */
int geak_worker_send(struct geak_worker *w, json_t *msg, char *err, size_t errlen);
json_t *geak_worker_read(struct geak_worker *w, double timeout_s, char *err, size_t errlen);
void geak_worker_stop(struct geak_worker *w);
/* The sandbox's layers beyond netns and Landlock, for eval.sandbox: the
 * worker's (view, userns) and those of its last job (pidns, mountns,
 * uid, cgroup, memory, procs).  A new reference. */
json_t *geak_worker_sandbox(const struct geak_worker *w);

#endif
