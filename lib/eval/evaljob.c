/* evaljob.c: slots, their workers, and the jobs they run. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "eval/evalcache.h"
#include "eval/evaljob.h"
#include "eval/harness.h"
#include "eval/pyenv.h"
#include "record.h"
#include "runner.h"
#include "eval/sandbox.h"
#include "secrets.h"
#include "util.h"

/* Seconds a job may spend paused by timing runs, or waiting for its go,
 * before geak-eval gives up on its worker.  The worker enforces the job's
 * own limits; this only catches a worker that hangs itself. */
#define PAUSE_ROOM_S 3600
/* How many runs' time a calibration may take: its processes (see
 * geakh/calibrate.py) each get a run's allowance, the resampling more. */
#define CALIBRATION_RUNS 12
/* How many runs' time a regeneration may take: the calibration's first
 * process runs the first seed twice, every seed, and each case twice. */
#define REGEN_RUNS 4
/* Untimed calls of each timed case before its timed ones. */
#define TIMING_WARMUP 2

void
geak_trace(const struct geak_cand *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!c->slot->cfg->verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	/* geak_warn: one line, escaped and redacted as every message is. */
	geak_warn("%7.1f s: slot %d: %s%s%s%s: %s", geak_now() - c->slot->cfg->started,
	    c->slot->idx, c->where ? c->where : "-", c->id && *c->id ? " (" : "", c->id ? c->id : "",
	    c->id && *c->id ? ")" : "", line);
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void
geak_slot_init(struct geak_slot *s, const struct geak_evalcfg *cfg, int idx, const char *gpu,
    struct geak_gpuqueue *q, const char *home)
{
	memset(s, 0, sizeof *s);
	s->idx = idx;
	s->cfg = cfg;
	s->gpu = gpu;
	s->queue = q;
	s->home = geak_xstrdup(home);
	for (int i = 0; i < GEAK_NWORKERS; i++)
		s->w[i].fd = -1;
}

void
geak_slot_fini(struct geak_slot *s)
{
	for (int i = 0; i < GEAK_NWORKERS; i++)
		if (s->up[i])
			geak_worker_stop(&s->w[i]);
	json_decref(s->hello);
	free(s->home);
	memset(s, 0, sizeof *s);
}

/* ---- the worker's greeting, stored ----
 *
 * The cache key needs the harness version, the library versions and the
 * device, which the worker's greeting gives; a greeting stored with the
 * fingerprint of what it depends on lets a run whose every candidate is
 * cached finish without starting Python. */

/* Its name in the cache. */
static char *
hello_name(const struct geak_slot *s)
{
	char key[65];
	json_t *k = json_pack("{s:s, s:s, s:s?, s:s?}", "python", s->cfg->python,
	    "script", s->cfg->harness, "gpu", s->gpu, "vendor", s->cfg->vendor);

	geak_cache_key(k, key);
	json_decref(k);
	return geak_xasprintf("worker/%s.json", key);
}

static char *
hello_path(const struct geak_slot *s)
{
	char *name = hello_name(s), *path = geak_xasprintf("%s/%s", s->cfg->cache_dir, name);

	free(name);
	return path;
}

static int
fingerprint_ok(json_t *hello)
{
	json_t *fp = json_object_get(hello, GEAK_HELLO_FINGERPRINT), *e;
	size_t i;

	if (!json_is_array(fp) || json_array_size(fp) == 0)
		return 0;
	json_array_foreach(fp, i, e) {
		const char *path = json_string_value(json_array_get(e, 0));
		struct stat st;
		if (!path || stat(path, &st) < 0)
			return 0;
		if ((json_int_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec !=
		    json_integer_value(json_array_get(e, 1)) ||
		    (json_int_t)st.st_size != json_integer_value(json_array_get(e, 2)) ||
		    (json_int_t)st.st_ino != json_integer_value(json_array_get(e, 3)))
			return 0;
	}
	return 1;
}

json_t *
geak_slot_hello(struct geak_slot *s)
{
	char *name;

	if (s->up[GEAK_W_RUN])
		return s->w[GEAK_W_RUN].hello;
	if (!s->hello && !s->cfg->no_cache) {
		/* The workers write in the cache: read as a job's file. */
		name = hello_name(s);
		s->hello = geak_job_load(s->cfg->cache_dir, name, NULL, 0);
		free(name);
		if (s->hello && (!json_is_string(geak_get(s->hello, "device.name")) ||
		    !fingerprint_ok(s->hello))) {
			json_decref(s->hello);
			s->hello = NULL;
		}
	}
	return s->hello;
}

static void
store_hello(struct geak_slot *s, json_t *hello)
{
	char *path = hello_path(s), *dir = geak_xasprintf("%s/worker", s->cfg->cache_dir);
	char *tmp = geak_xasprintf("%s.%ld.tmp", path, (long)getpid());

	if (!s->cfg->no_cache && json_is_string(geak_get(hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_NAME)) &&
	    geak_mkdirs(dir, 0700) == 0 && json_dump_file(hello, tmp, JSON_COMPACT) == 0)
		rename(tmp, path);
	unlink(tmp);
	free(path), free(dir), free(tmp);
}

/* The cores shared out among the slots' run workers, at least one each. */
static int
cpu_threads(const struct geak_evalcfg *cfg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	return ncpu > cfg->jobs ? (int)(ncpu / cfg->jobs) : 1;
}

/* Whether the slot's JUDGE worker is a process of its own: only a
 * candidate waiting in RUN to be timed needs one beside it. */
static int
judge_apart(const struct geak_slot *s)
{
	return s->gpu && !s->cfg->no_perf;
}

/* Start the workers of the slot that are not running, all at once (each
 * imports torch for seconds), at the sandbox layers learned so far. */
static int
start_workers(struct geak_slot *s, const struct geak_worker_opts *o, char *err, size_t errlen)
{
	int spawned[GEAK_NWORKERS] = { 0 }, r = 0;

	for (int i = 0; i < GEAK_NWORKERS; i++)
		if (!s->up[i] && (i == GEAK_W_RUN || judge_apart(s))) {
			if (geak_worker_spawn(&s->w[i], o, err, errlen) < 0) {
				r = -1;
				break;
			}
			spawned[i] = 1;
		}
	for (int i = 0; i < GEAK_NWORKERS; i++) {
		if (!spawned[i])
			continue;
		if (r < 0) {
			geak_worker_stop(&s->w[i]);
			continue;
		}
		if (geak_worker_greet(&s->w[i], o, err, errlen) < 0) {
			r = -1;
			continue;
		}
		s->up[i] = 1;
	}
	if (r < 0)
		for (int i = 0; i < GEAK_NWORKERS; i++)
			if (spawned[i] && s->up[i]) {
				geak_worker_stop(&s->w[i]);
				s->up[i] = 0;
			}
	return r;
}

static void
stop_workers(struct geak_slot *s)
{
	for (int k = 0; k < GEAK_NWORKERS; k++)
		if (s->up[k]) {
			geak_worker_stop(&s->w[k]);
			s->up[k] = 0;
		}
}

int
geak_slot_up(struct geak_slot *s, int which, char *err, size_t errlen)
{
	const struct geak_evalcfg *cfg = s->cfg;
	struct geak_worker_opts o = {
		.python = cfg->python, .script = cfg->harness, .gpu = s->gpu,
		.vendor = cfg->vendor, .home = s->home, .write_dirs = cfg->write_dirs,
		.start_timeout_s = 300, .triton_cache = cfg->triton_cache,
		.cpu_threads = cpu_threads(cfg), .file_limit = (long long)cfg->file_limit_mib << 20,
		.run_dir = cfg->scratch, .job_memory = (long long)cfg->memory_mib << 20,
		.job_procs = cfg->proc_limit, .profiler = cfg->ncu,
	};
	/* Some GPU runtimes do not start under Landlock, in a private root
	 * or inside a network namespace: then the workers start again with
	 * fewer layers, and each evaluation records the layers it ran under. */
	enum { ALL = GEAK_SB_NONET | GEAK_SB_FSWRITE | GEAK_SB_PID | GEAK_SB_VIEW | GEAK_SB_IPC };
	static const int layers[] = { ALL, ALL & ~GEAK_SB_FSWRITE, ALL & ~(GEAK_SB_FSWRITE | GEAK_SB_VIEW),
		GEAK_SB_NONET, 0 };
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static size_t learned;    /* what one slot learned, the others reuse */
	struct geak_worker *run = &s->w[GEAK_W_RUN];

	const size_t n = sizeof layers / sizeof *layers;
	int bare_tried = 0;

	if (s->up[which])
		return 0;
	pthread_mutex_lock(&mu);
	if (learned > s->layer)
		s->layer = learned;
	pthread_mutex_unlock(&mu);
	for (size_t i = s->layer; i < n; i++) {
		int had_run = s->up[GEAK_W_RUN];
		o.sandbox = layers[i];
		if (start_workers(s, &o, err, errlen) < 0)
			return -1;
		if (had_run || !s->gpu || i + 1 == n ||
		    json_is_string(geak_get(run->hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_NAME)))
			break;
		/* A CPU build of torch has no device under any layer: the
		 * caller says so, and no layer is dropped for it. */
		if (geak_pyenv_cpu_build(json_object_get(run->hello, GEAK_HELLO_BUILD)))
			break;
		geak_warn("GPU %s: no device inside the sandbox (%s); starting the workers with fewer layers",
		    s->gpu, geak_get_str(run->hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_ERROR) ?
		    geak_get_str(run->hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_ERROR) : "unknown error");
		stop_workers(s);
		/* Once, with no layer at all: a device absent there too is no
		 * layer's fault, and the workers keep every layer. */
		if (!bare_tried && i + 2 < n) {
			bare_tried = 1;
			o.sandbox = layers[n - 1];
			if (start_workers(s, &o, err, errlen) < 0)
				return -1;
			stop_workers(s);
			if (!json_is_string(geak_get(run->hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_NAME))) {
				geak_warn("GPU %s: no device without the sandbox either; keeping every layer",
				    s->gpu);
				o.sandbox = layers[i];
				if (start_workers(s, &o, err, errlen) < 0)
					return -1;
				break;
			}
		}
		s->layer = i + 1;
		pthread_mutex_lock(&mu);
		if (learned < s->layer)
			learned = s->layer;
		pthread_mutex_unlock(&mu);
	}
	if (s->up[GEAK_W_RUN])
		store_hello(s, run->hello);
	return 0;
}

/* ---- jobs ---- */

/* The GPU modes (GEAK_GPU_SHARED ...) as traces name them. */
static const char *const mode_name[] = { "shared", "alone", "drained", "room" };

/* A job's runs again for want of memory: made for each job, so that what
 * one job learned never holds the next. */
struct rerun {
	int doublings;            /* it ran out of device memory beside others this often */
	long floor_mib;           /* and showed it needs at least this much, or 0 */
	int memory_boost;         /* run again after its share ran out: what the host has */
	long long boost_bytes;    /* that, measured as the run again starts; 0: not yet */
};

/* The operator's limits are ceilings: an explicit flag is taken as it
 * is, and a task may ask for less or more than the default, but never
 * more than --max-task-timeout and --max-task-memory. */
static double
job_timeout_s(const struct geak_cand *c)
{
	const struct geak_evalcfg *cfg = c->slot->cfg;

	if (cfg->timeout_given || !(c->task_timeout_s > 0))
		return cfg->timeout_s;
	return c->task_timeout_s < cfg->max_task_timeout_s ? c->task_timeout_s :
	    cfg->max_task_timeout_s;
}

struct geak_budget
geak_budget(const struct geak_cand *c)
{
	struct geak_budget b = { .run_s = job_timeout_s(c), .compile_s = c->slot->cfg->compile_s,
		.warmup = TIMING_WARMUP };

	b.calib_run_s = b.run_s + b.compile_s;
	b.calib_s = b.calib_run_s * CALIBRATION_RUNS;
	b.regen_s = b.calib_run_s * REGEN_RUNS;
	/* Half a run's allowance: the timing gets all of it, and must never
	 * run out of it for the profiler's sake. */
	b.counters_s = b.run_s / 2;
	return b;
}

/* How long geak-eval waits for a job's answer: its own limits (the
 * worker enforces them, and stops their clock while the job is paused or
 * waits), and room for the worker. */
static double
answer_wait_s(double timeout_s, double compile_s)
{
	return timeout_s + compile_s + 60 + PAUSE_ROOM_S;
}

static long long host_headroom(void);

/* MiB of memory a job of the candidate's task may use; 0: no limit. */
static long
memory_mib(const struct geak_cand *c)
{
	const struct geak_evalcfg *cfg = c->slot->cfg;

	if (cfg->memory_given || c->task_memory_mib <= 0)
		return cfg->memory_mib;
	return c->task_memory_mib < cfg->max_task_memory_mib ? c->task_memory_mib :
	    cfg->max_task_memory_mib;
}

/* Bytes of memory a run of the candidate's job may use; 0: no limit. */
static long long
job_memory(const struct geak_cand *c, struct rerun *rr)
{
	long mib = memory_mib(c);
	if (mib > 0 && rr->memory_boost) {
		if (!rr->boost_bytes)
			rr->boost_bytes = host_headroom();
		if (rr->boost_bytes > (long long)mib << 20)
			return rr->boost_bytes;
	}
	return (long long)mib << 20;
}

/* Bytes a job whose share ran out may use: what the host has available
 * now less an eighth of its memory (left to the jobs beside it), and at
 * most half of its memory (what one hostile job can take from them), or
 * 0. */
static long long
host_headroom(void)
{
	FILE *fp = fopen("/proc/meminfo", "r");
	char line[128];
	long long avail = -1, kib;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);

	if (!fp)
		return 0;
	while (avail < 0 && fgets(line, sizeof line, fp))
		if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
			avail = kib << 10;
	fclose(fp);
	if (avail < 0 || pages <= 0 || page <= 0)
		return 0;
	avail -= (long long)pages * page / 8;
	if (avail > (long long)pages * page / 2)
		avail = (long long)pages * page / 2;
	return avail > 0 ? avail : 0;
}

static json_t *
request(const struct geak_cand *c, struct rerun *rr, const struct geak_jobreq *job)
{
	struct geak_budget b = geak_budget(c);
	json_t *req = json_pack("{s:s, s:s, s:s, s:f, s:f}", GEAK_REQ_OP, job->op, GEAK_REQ_DIR,
	    job->dir, GEAK_REQ_NONCE, job->nonce, GEAK_REQ_TIMEOUT, b.run_s,
	    GEAK_REQ_COMPILE, b.compile_s);
	long long memory = job_memory(c, rr);

	if (!req)
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	if (memory > 0)
		json_object_set_new(req, GEAK_REQ_MEMORY, json_integer(memory));
	if (job->extra)
		json_object_update(req, job->extra);
	return req;
}

/* The job cgroup of the worker that runs the next job held to its task's
 * memory. */
static void
limit_memory(struct geak_cand *c, struct rerun *rr, int which)
{
	struct geak_worker *w = &c->slot->w[which];
	long long bytes = job_memory(c, rr);

	if (w->cg_job && w->job_memory_set != bytes) {
		geak_cgroup_memory(w->cg_job, bytes);
		w->job_memory_set = bytes;
	}
}

/* The net under a worker that hangs itself, for the limits req sends. */
static double
worker_wait_s(json_t *req)
{
	return answer_wait_s(json_number_value(json_object_get(req, GEAK_REQ_TIMEOUT)),
	    json_number_value(json_object_get(req, GEAK_REQ_COMPILE)));
}

const char *
geak_job_status(json_t *resp)
{
	const char *st = json_string_value(json_object_get(resp, GEAK_RESP_STATUS));

	return st ? st : "";
}

int
geak_job_ran_short(const char *dir, long *need_mib)
{
	char *mark = geak_xasprintf("%s/%s", dir, GEAK_FILE_OOM);
	json_t *said = need_mib ? geak_job_load(dir, GEAK_FILE_OOM, NULL, 0) : NULL;
	json_t *need = json_object_get(said, GEAK_OOM_NEED_MIB);
	int found = unlink(mark) == 0;

	if (need_mib)
		*need_mib = found && json_is_integer(need) && json_integer_value(need) > 0 ?
		    (long)json_integer_value(need) : 0;
	json_decref(said);
	free(mark);
	return found;
}

/* The harness's mark of running short of GPU memory in dir, taken away:
 * -1 where there is none, else the MiB the job showed it needs (0: not
 * known). */
static long
short_mark(const char *dir)
{
	long need_mib;

	return geak_job_ran_short(dir, &need_mib) ? need_mib : -1;
}

/* Killed by a SIGKILL that neither the worker (its timeouts say
 * "timeout") nor geak-eval sent: the kernel's out-of-memory killer, most
 * likely, on a host that the jobs beside it had filled. */
static int
killed_from_outside(json_t *resp)
{
	return !strcmp(geak_job_status(resp), GEAK_ENDED_SIGNAL) &&
	    json_integer_value(json_object_get(resp, GEAK_RESP_SIGNAL)) == SIGKILL &&
	    !json_object_get(resp, GEAK_RESP_LIMIT); /* its own limit: see share_ran_out */
}

/* Killed at its memory limit where that is the default share of the
 * host's over -j, and not on a run again already. */
static int
share_ran_out(const struct geak_cand *c, const struct rerun *rr, json_t *resp)
{
	return json_object_get(resp, GEAK_RESP_LIMIT) && !c->slot->cfg->memory_given &&
	    c->slot->cfg->memory_mib && !rr->memory_boost;
}

/* Room for what the peak leaves out: the runtime's context, the
 * compiler, memory outside torch's allocator. */
#define CONTEXT_MIB 1024

/* A peak in MiB with a quarter more, for a run that uses more, and the
 * room it leaves out. */
static long
with_room(long peak_mib)
{
	return peak_mib + peak_mib / 4 + CONTEXT_MIB;
}

/* The device memory a job of the candidate is expected to use, in MiB:
 * its task's reference's peak with room, or 0 (the queue guesses). */
static long
gpu_need_mib(const struct geak_cand *c)
{
	return c->gpu_peak_mib ? with_room(c->gpu_peak_mib) : 0;
}

/* The queue learns its device's memory from the first worker's greeting
 * (geak_gpuqueue_set_memory keeps the first it is told). */
static void
queue_memory(struct geak_slot *s)
{
	json_t *mem = geak_get(geak_slot_hello(s), "device.memory");
	long per_gpu;

	if (!json_is_integer(mem))
		return;
	per_gpu = (s->cfg->jobs + (long)s->cfg->ngpus - 1) / (long)s->cfg->ngpus;
	geak_gpuqueue_set_memory(s->queue, (long)(json_integer_value(mem) >> 20), per_gpu);
}

/* The GPU's queue entered in mode; rr: the job's runs again, NULL for
 * GEAK_GPU_ALONE (which asks for no memory). */
static int
queue_enter(struct geak_cand *c, int mode, struct geak_gpumember *me, const struct rerun *rr)
{
	struct geak_slot *s = c->slot;
	double t0 = geak_now();
	int paused;

	if (mode != GEAK_GPU_ALONE) {
		queue_memory(s);
		me->need_mib = gpu_need_mib(c);
		me->doublings = rr->doublings;
		me->floor_mib = rr->floor_mib;
	}
	paused = geak_gpuqueue_enter(s->queue, mode, me);

	if (paused < 0) {
		geak_warn("cannot lock GPU %s in %s: %s; running without the lock", s->gpu,
		    s->cfg->lockdir, strerror(errno));
		paused = 0;
	}
	c->lock_wait += geak_now() - t0;
	return paused;
}

/* A request the harness refused breaks the protocol: NULL, with err
 * saying why.  resp otherwise. */
static json_t *
accepted(json_t *resp, char *err, size_t errlen)
{
	const char *why;

	if (strcmp(geak_job_status(resp), GEAK_ENDED_BAD_REQUEST))
		return resp;
	why = geak_get_str(resp, GEAK_RESP_ERROR);
	snprintf(err, errlen, "the harness refused a request: %s", why ? why : "no reason given");
	json_decref(resp);
	return NULL;
}

static json_t *
call_worker(struct geak_cand *c, struct rerun *rr, int which, json_t *req, char *err,
    size_t errlen)
{
	struct geak_slot *s = c->slot;
	json_t *resp;

	limit_memory(c, rr, which);
	resp = geak_worker_call(&s->w[which], req, worker_wait_s(req), err, errlen);

	if (!resp)
		s->up[which] = 0;
	return accepted(resp, err, errlen);
}

static json_t *again_if_short(struct geak_cand *c, struct rerun *rr, int which, json_t *resp,
	const struct geak_jobreq *job);

/* One run of a job in mode. */
static json_t *
job_once(struct geak_cand *c, struct rerun *rr, int which, int mode, const struct geak_jobreq *job)
{
	struct geak_slot *s = c->slot;
	struct geak_gpumember me = { .pid = 0 };
	json_t *req, *resp;
	double t0 = geak_now(), t1;
	int paused = 0, gpu = mode != GEAK_USE_NONE && s->queue;
	const char *dir = job->dir;

	if (which == GEAK_W_JUDGE && !judge_apart(s))
		which = GEAK_W_RUN;
	if (geak_slot_up(s, which, job->err, job->errlen) < 0)
		return NULL;
	me.pid = s->w[which].proc.pid;
	if (gpu) {
		geak_trace(c, "%s: waiting for GPU %s (%s)", base_name(dir), s->gpu, mode_name[mode]);
		paused = queue_enter(c, mode, &me, rr);
	}
	t1 = geak_now();
	if (gpu)
		geak_trace(c, "%s: running after %.1f s waiting, %d correctness runs paused, "
		    "%ld MiB reserved", base_name(dir), t1 - t0, paused, me.held_mib);
	else
		geak_trace(c, "%s: running%s", base_name(dir),
		    mode == GEAK_USE_NONE ? " (no device)" : " on the CPU");
	req = request(c, rr, job);
	resp = call_worker(c, rr, which, req, job->err, job->errlen);
	json_decref(req);
	if (gpu)
		geak_gpuqueue_leave(s->queue, mode, &me);
	geak_trace(c, "%s: %s after %.1f s", base_name(dir), resp ? geak_job_status(resp) : "failed",
	    geak_now() - t1);
	return resp;
}

json_t *
geak_job(struct geak_cand *c, int which, int mode, const struct geak_jobreq *job)
{
	struct rerun rr = { .doublings = 0 };
	json_t *resp = job_once(c, &rr, which, mode, job);

	/* Only a correctness run can have lacked what the runs beside it held. */
	if (!resp || mode != GEAK_GPU_SHARED)
		return resp;
	return again_if_short(c, &rr, which, resp, job);
}

json_t *
geak_job_answer(struct geak_cand *c, int which, int mode, const struct geak_jobreq *job,
    const char *name, const char *what)
{
	json_t *resp = geak_job(c, which, mode, job), *answer;
	char why[256] = "", gist[768] = "";
	const char *st;

	if (!resp)
		return NULL;
	answer = geak_job_load(job->dir, name, why, sizeof why);
	if (!geak_job_nonce_ok(answer, job->nonce)) {
		json_decref(answer);
		answer = NULL;
		if (!*why)
			geak_job_gist(job->dir, gist, sizeof gist);
		st = geak_job_status(resp);
		snprintf(job->err, job->errlen, "%s (%s%s)%s%s", what, st,
		    strcmp(st, GEAK_ENDED_TIMEOUT) ? "" : ", see --timeout", *why || *gist ? ": " : "",
		    *why ? why : gist);
	}
	json_decref(resp);
	return answer;
}

/* How often a job that ran out of memory beside others runs again once
 * a run beside it has ended, before it runs on a drained GPU. */
#define ROOM_TRIES 3

/* Whether a job may run again after tries runs again: on a GPU, while
 * the tries last; in the CPU mode, once. */
static int
may_retry(const struct geak_slot *s, int tries)
{
	return tries <= ROOM_TRIES && (s->gpu || tries == 0);
}

/* Whether a job that ended with resp, after tries runs again, ran out of
 * memory (shown_mib, from short_mark, at least 0; or the host's killer)
 * beside other jobs, running or paused (paused ones keep their memory),
 * or at its default share of the host's memory: the mode to run it once
 * more in, or -1.  What the others held may be what it lacked, so it runs
 * again expecting twice the device memory it did, or what it showed it
 * needs with room where that is more (it waits until that is free), and
 * after ROOM_TRIES of those on a drained GPU (in the CPU mode, just once
 * more).  Waiting for memory holds new runs back only until enough
 * runs in flight end; draining, until the longest does.  One whose share
 * ran out runs beside them, allowed what the host has available then
 * (should the host run out after all, its killer's SIGKILL brings the
 * runs again). */
static int
retry_mode(struct geak_cand *c, struct rerun *rr, json_t *resp, const char *dir, long shown_mib,
    int tries)
{
	const struct geak_slot *s = c->slot;
	int gpu_short = shown_mib >= 0;
	int share = !gpu_short && share_ran_out(c, rr, resp);
	int mode = tries < ROOM_TRIES ? GEAK_GPU_ROOM : GEAK_GPU_DRAINED;

	if (!gpu_short && !share && !killed_from_outside(resp))
		return -1;
	if (!may_retry(s, tries))
		return -1;
	c->oom_retries++;
	if (share) {
		rr->memory_boost = 1;
		rr->boost_bytes = 0;
		geak_trace(c, "%s: killed at its share of the host's memory; once more, allowed "
		    "%lld MiB", base_name(dir), job_memory(c, rr) >> 20);
		return GEAK_GPU_SHARED;
	}
	rr->doublings++;
	if (shown_mib > 0 && with_room(shown_mib) > rr->floor_mib)
		rr->floor_mib = with_room(shown_mib);
	geak_trace(c, "%s: %s beside other jobs; %s", base_name(dir),
	    gpu_short ? (s->gpu ? "out of GPU memory" : "out of memory") :
	    "killed by SIGKILL (host memory?)", !s->gpu ? "once more" :
	    mode == GEAK_GPU_ROOM ? "again, expecting twice the memory" : "again on a drained GPU");
	if (s->gpu && shown_mib > 0)
		geak_trace(c, "%s: it showed it needs %ld MiB: %ld MiB at least", base_name(dir),
		    shown_mib, rr->floor_mib);
	return s->gpu ? mode : GEAK_GPU_SHARED;
}

/* resp, or the job run again where it ran out of memory. */
static json_t *
again_if_short(struct geak_cand *c, struct rerun *rr, int which, json_t *resp,
    const struct geak_jobreq *job)
{
	const char *dir = job->dir;
	int mode;

	for (int tries = 0; resp && (mode = retry_mode(c, rr, resp, dir, short_mark(dir), tries)) >= 0;
	    tries++) {
		json_decref(resp);
		resp = job_once(c, rr, which, mode, job);
	}
	return resp;
}

/* The run job started in mode, up to its first message: ready (to be
 * told to go) or its end. */
static json_t *
start_in(struct geak_cand *c, struct rerun *rr, int mode, const struct geak_jobreq *job)
{
	struct geak_slot *s = c->slot;
	json_t *req, *msg;
	double t0 = geak_now();
	const char *dir = job->dir;
	char *err = job->err;
	size_t errlen = job->errlen;

	if (geak_slot_up(s, GEAK_W_RUN, err, errlen) < 0)
		return NULL;
	s->member = (struct geak_gpumember){ .pid = s->w[GEAK_W_RUN].proc.pid };
	if (s->queue) {
		geak_trace(c, "%s: waiting for GPU %s (%s, to prepare)", base_name(dir), s->gpu,
		    mode_name[mode]);
		queue_enter(c, mode, &s->member, rr);
		geak_trace(c, "%s: running after %.1f s waiting, %ld MiB reserved", base_name(dir),
		    geak_now() - t0, s->member.held_mib);
	} else {
		geak_trace(c, "%s: running on the CPU", base_name(dir));
	}
	req = request(c, rr, job);
	json_object_set_new(req, GEAK_REQ_HANDSHAKE, json_true());
	limit_memory(c, rr, GEAK_W_RUN);
	msg = geak_worker_send(&s->w[GEAK_W_RUN], req, err, errlen) < 0 ? NULL :
	    geak_worker_read(&s->w[GEAK_W_RUN], worker_wait_s(req), err, errlen);
	if (!msg)
		s->up[GEAK_W_RUN] = 0;
	json_decref(req);
	s->pending = json_is_true(json_object_get(msg, GEAK_MSG_READY));
	/* A job that waits for its go keeps its memory, and its reservation. */
	s->member.keep = s->pending;
	if (s->queue)
		geak_gpuqueue_leave(s->queue, mode, &s->member);
	snprintf(s->pending_name, sizeof s->pending_name, "%s", base_name(dir));
	geak_trace(c, "%s: %s after %.1f s", base_name(dir),
	    !msg ? "failed" : s->pending ? "ready" : geak_job_status(msg), geak_now() - t0);
	return msg;
}

/* The mode to start a run job in once more, or -1: one that ended short
 * of memory, or that waits for its go after running short in a check it
 * survived (a performance case's, say), which it is told not to take.  A
 * ready job that cannot run again keeps its go, the mark dropped: its
 * checks' failures stand, and a later mark is its timing's. */
static int
start_again(struct geak_cand *c, struct rerun *rr, json_t *msg, const struct geak_jobreq *job,
    int tries)
{
	const char *dir = job->dir;
	long shown_mib = short_mark(dir);
	json_t *ended;
	int mode;

	if (!c->slot->pending)
		return retry_mode(c, rr, msg, dir, shown_mib, tries);
	if (shown_mib < 0 || !may_retry(c->slot, tries))
		return -1;
	ended = geak_job_go(c, 0, job->err, job->errlen);
	if (!ended)
		return -1;
	mode = retry_mode(c, rr, ended, dir, shown_mib, tries);
	json_decref(ended);
	return mode;
}

/* A run job run once more where it ran out of memory is started again
 * the same way, so that it is still timed on go. */
json_t *
geak_job_start(struct geak_cand *c, const struct geak_jobreq *job)
{
	struct rerun rr = { .doublings = 0 };
	json_t *msg = start_in(c, &rr, GEAK_GPU_SHARED, job);
	int mode;

	for (int tries = 0; msg && (mode = start_again(c, &rr, msg, job, tries)) >= 0;
	    tries++) {
		json_decref(msg);
		msg = start_in(c, &rr, mode, job);
	}
	return msg;
}

/* One message of a job told to go, within a whole run's allowance. */
static json_t *
go_read(const struct geak_cand *c, char *err, size_t errlen)
{
	struct geak_budget b = geak_budget(c);

	return geak_worker_read(&c->slot->w[GEAK_W_RUN], answer_wait_s(b.run_s, b.compile_s), err,
	    errlen);
}

json_t *
geak_job_go(struct geak_cand *c, int go, char *err, size_t errlen)
{
	struct geak_slot *s = c->slot;
	json_t *msg = json_pack("{s:b}", GEAK_MSG_GO, go), *resp;
	double t0 = geak_now();
	int paused = 0, alone = go && s->queue;

	if (!s->pending) {
		json_decref(msg);
		snprintf(err, errlen, "no job is waiting for its go");
		return NULL;
	}
	s->pending = 0;
	if (alone) {
		geak_trace(c, "%s: ready; waiting for GPU %s (alone)", s->pending_name, s->gpu);
		paused = queue_enter(c, GEAK_GPU_ALONE, &s->member, NULL);
		geak_trace(c, "%s: timing after %.1f s waiting, %d correctness runs paused",
		    s->pending_name, geak_now() - t0, paused);
	}
	resp = geak_worker_send(&s->w[GEAK_W_RUN], msg, err, errlen) < 0 ? NULL : go_read(c, err, errlen);
	/* The job says when it is done with the GPU, before it saves what
	 * it kept and ends: the correctness runs go on from there. */
	if (resp && json_is_true(json_object_get(resp, GEAK_MSG_TIMED))) {
		json_decref(resp);
		if (alone) {
			geak_gpuqueue_leave(s->queue, GEAK_GPU_ALONE, &s->member);
			geak_trace(c, "%s: timed; GPU %s shared again", s->pending_name, s->gpu);
			alone = 0;
		}
		resp = go_read(c, err, errlen);
	}
	if (!resp)
		s->up[GEAK_W_RUN] = 0;
	json_decref(msg);
	if (alone)
		geak_gpuqueue_leave(s->queue, GEAK_GPU_ALONE, &s->member);
	if (s->queue)
		geak_gpuqueue_unreserve(s->queue, &s->member);
	geak_trace(c, "%s: %s", s->pending_name, resp ? geak_job_status(resp) : "failed");
	return resp;
}

/* ---- directories and files ---- */

char *
geak_job_dir(const struct geak_evalcfg *cfg, const char *prefix)
{
	char *jobs = geak_xasprintf("%s/jobs", cfg->scratch);
	char *dir = geak_mkworkdir(jobs, prefix);

	if (!dir)
		geak_die(GEAK_EXIT_FATAL, "cannot make a directory in %s:", jobs);
	free(jobs);
	return dir;
}

void
geak_job_drop(const struct geak_evalcfg *cfg, char *dir)
{
	if (dir && !cfg->keep)
		geak_rmtree(dir);
	free(dir);
}

void
geak_nonce(char out[33])
{
	unsigned char b[16];

	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		geak_die(GEAK_EXIT_FATAL, "getrandom:");
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The largest JSON file of a job's that is read: a result, a timing, a
 * profile's figures (its tensors are in profile.pt, which only the
 * harness reads). */
#define JOB_JSON_CAP (64u << 20)

/* why, where given and still empty: that name is there but not read. */
static void
refused(char *why, size_t whylen, const char *name, int err)
{
	if (why && whylen && !*why)
		snprintf(why, whylen, "%s was not read: %s", name, err == EFBIG ?
		    "it is larger than geak-eval reads of a job's file" : geak_untrusted_why(err));
}

json_t *
geak_job_load(const char *dir, const char *name, char *why, size_t whylen)
{
	size_t len;
	char *s = geak_read_untrusted(dir, name, JOB_JSON_CAP, &len);
	json_t *v;

	if (!s) {
		if (errno != ENOENT)
			refused(why, whylen, name, errno);
		return NULL;
	}
	v = json_loadb(s, len, 0, NULL);
	free(s);
	return v;
}

int
geak_job_copy(const char *from, const char *name, const char *path, unsigned long long cap)
{
	struct stat st;
	int in = geak_open_untrusted(from, name, &st), out, saved;

	if (in < 0)
		return errno;
	if ((unsigned long long)st.st_size > cap) {
		close(in);
		return EFBIG;
	}
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	saved = out < 0 ? errno : geak_copy_capped(in, out, cap);
	if (out >= 0 && close(out) < 0 && !saved)
		saved = errno;
	close(in);
	if (saved && out >= 0)
		unlink(path);
	return saved;
}

/* Job files live in our own directories: failing to write one means the
 * disk is full or gone, and no evaluation can go on. */
void
geak_job_dump(json_t *v, const char *dir, const char *name)
{
	char *path = geak_xasprintf("%s/%s", dir, name);

	if (json_dump_file(v, path, JSON_COMPACT) < 0)
		geak_die(GEAK_EXIT_FATAL, "cannot write %s", path);
	free(path);
}

int
geak_job_nonce_ok(json_t *result, const char *nonce)
{
	const char *got = json_string_value(json_object_get(result, GEAK_NONCE));

	return got && !strcmp(got, nonce);
}

/* Bytes the worker cut from the front of a job's stream (NAME.cut: one
 * number). */
static unsigned long long
cut_before(const char *dir, const char *name, char *why, size_t whylen)
{
	char *cut = geak_xasprintf("%s.cut", name), *s = geak_read_untrusted(dir, cut, 64, NULL);
	unsigned long long n = s ? strtoull(s, NULL, 10) : 0;

	if (!s && errno != ENOENT)
		refused(why, whylen, cut, errno);
	free(cut), free(s);
	return n;
}

/* Of a job's file read from its end: the bytes read, and how many came
 * before them. */
struct file_end {
	size_t len;
	unsigned long long skipped;
};

/* The last max bytes of a job's file (it may be of any size),
 * NUL-terminated, with end.  NULL when it cannot be read. */
static char *
read_end(const char *dir, const char *name, size_t max, struct file_end *end, char *why,
    size_t whylen)
{
	struct stat st;
	int fd = geak_open_untrusted(dir, name, &st);
	char *buf;
	ssize_t n;
	size_t got = 0;
	unsigned long long *skipped = &end->skipped;

	*skipped = 0;
	if (fd < 0) {
		if (errno != ENOENT)
			refused(why, whylen, name, errno);
		return NULL;
	}
	if ((unsigned long long)st.st_size > max) {
		*skipped = (unsigned long long)st.st_size - max;
		if (lseek(fd, (off_t)*skipped, SEEK_SET) < 0) {
			close(fd);
			return NULL;
		}
	}
	buf = geak_xmalloc(max + 1);
	while (got < max && (n = read(fd, buf + got, max - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	end->len = got;
	return buf;
}

json_t *
geak_job_tail(const char *dir, const char *name, size_t bytes, char *why, size_t whylen)
{
	struct file_end end = { .len = 0 };
	unsigned long long cut = cut_before(dir, name, why, whylen);
	/* Far more than is kept, so that a secret split where the read
	 * begins is nowhere near what is kept. */
	char *data = read_end(dir, name, bytes + (1 << 20), &end, why, whylen);
	size_t len = end.len;
	json_t *s;

	if (!data)
		return json_null();
	cut += end.skipped;
	for (size_t i = 0; i < len; i++)
		if (!data[i])
			data[i] = '?'; /* a NUL would end the string early */
	/* Redacted whole, then cut: a secret split by the cut would leave
	 * its second half. */
	geak_redact(&data);
	len = strlen(data);
	if (len > bytes) {
		cut += len - bytes;
		memmove(data, data + len - bytes, bytes);
		data[bytes] = '\0';
	}
	geak_utf8_scrub(data);
	if (cut) {
		char *marked = geak_xasprintf("[%llu bytes cut]\n%s", cut, data);
		free(data);
		data = marked;
	}
	s = json_string(data);
	free(data);
	return s ? s : json_null();
}

void
geak_job_gist(const char *dir, char *buf, size_t n)
{
	json_t *tail = geak_job_tail(dir, GEAK_FILE_STDERR, 2000, NULL, 0);
	const char *t = json_string_value(tail), *last, *from, *nl;
	size_t tl = t ? strlen(t) : 0;

	buf[0] = '\0';
	while (tl && isspace((unsigned char)t[tl - 1]))
		tl--;
	if (tl) {
		for (last = t + tl; last > t && last[-1] != '\n'; last--)
			;
		from = t + (tl > 600 ? tl - 600 : 0);
		if (from > t && (nl = memchr(from, '\n', tl - (size_t)(from - t))) && nl < last)
			from = nl + 1;
		if (from >= last)
			snprintf(buf, n, "%.*s", (int)(t + tl - last), last);
		else /* the lines before the last, without the newline that ends them */
			snprintf(buf, n, "%.*s\n%.*s", (int)(t + tl - last), last,
			    (int)(last - from - 1), from);
	}
	json_decref(tail);
}
