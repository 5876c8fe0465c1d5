/* geak-eval: evaluate candidate kernels: call, execution (correctness
 * against the reference) and speed, in a sandbox, with a trusted judge
 * that never imports the candidate's code.  See geak-eval(1).
 *
 * Threads: one reads records, one per slot (-j) evaluates them through
 * its own warm harness worker, and the main thread writes the results in
 * input order as they become ready (or, with -u, as each is ready). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "evalcache.h"
#include "evalworker.h"
#include "gpu.h"
#include "gpulock.h"
#include "metrics.h"
#include "record.h"
#include "runner.h"

#define TAIL_BYTES 2000
#define REF_RESAMPLES 12 /* more runs per seed of a reference that disagrees with itself */

struct opts {
	long jobs;
	char **gpus;              /* one per slot's device; NULL: CPU mode */
	size_t ngpus;
	char *vendor;             /* of the GPUs, from the runtimes; NULL: unknown */
	double timeout_s, compile_s;
	char *cache_dir;
	int no_cache, keep, cpu, gpus_given;
	int no_perf;              /* correctness only: no timing on the GPU */
	int unordered;            /* write each result when it is ready */
	int verbose;              /* each step of each candidate on stderr */
	const char *static_mode;  /* strict, warn or off: see geakh/static.py */
	long seeds, reps;
	long file_limit_mib;      /* the largest file a job may write (outputs are one) */
	double speedup_limit;
	const char *python;
	char *harness;            /* geak_worker.py */
	const char *tmp_parent;
};

struct item {
	json_t *rec;
	char *where;
	int state;                /* 0 queued, 1 taken, 2 done */
	int verdict;              /* GEAK_DONE, GEAK_PASS, GEAK_FAILED */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct item *items;
	size_t n, cap, next;
	size_t *ready;            /* indices done, in the order they were done */
	size_t nready, ready_cap;
	int eof, read_failed;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 0, 0, NULL, 0, 0, 0, 0 };

/* Under q.mu: item i is done. */
static void
mark_done(size_t i, int verdict)
{
	q.items[i].verdict = verdict;
	q.items[i].state = 2;
	if (q.nready == q.ready_cap) {
		q.ready_cap = q.ready_cap ? 2 * q.ready_cap : 64;
		q.ready = geak_xrealloc(q.ready, q.ready_cap * sizeof *q.ready);
	}
	q.ready[q.nready++] = i;
	pthread_cond_broadcast(&q.cv);
}

struct slot {
	int idx;
	const char *gpu;
	struct geak_gpuqueue *queue;
	struct geak_worker w;
	int up;
	json_t *hello;            /* a stored greeting still valid, or NULL */
	size_t layer;             /* index of the sandbox layers in use */
	char *home;
	char *refs;               /* reference outputs kept by this run */
	const char *const *write_dirs;
	double lock_wait;         /* seconds waited for the GPU, this candidate */
	const char *where;        /* the candidate's input line, for -v */
	const char *id;           /* and its id, or "" */
	int oom_retries;          /* jobs run again on a drained GPU, this candidate */
};

static struct opts opt = {
	.jobs = 0, .timeout_s = 120, .compile_s = 300, .seeds = 3, .reps = 20, .file_limit_mib = 32768,
	.speedup_limit = 10, .static_mode = "strict",
};
static char *scratch;         /* this run's private directory */
/* Triton's compile caches, one per code text (see geak_worker.py): a job
 * may write only the cache of the code it runs, so no candidate can plant
 * a compiled kernel for another's; and the reference, the candidate and
 * its timing run each compile once, not once per job. */
static char *triton_cache;
static char *lockdir;
static double started;        /* when this run began, for -v */
/* Seconds a job may spend paused by timing runs (in all the rounds it
 * sits through) before geak-eval gives up on its worker.  The worker
 * enforces the job's own limits; this only catches a worker that hangs
 * itself, which has never been seen, so it can be generous. */
#define PAUSE_ROOM_S 3600

/* ---- small helpers ---- */

/* With -v: one line on stderr per step of a candidate, so that a long run
 * shows what each slot is doing and what it waits for. */
static void
trace(const struct slot *s, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!opt.verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %7.1f s: slot %d: %s%s%s%s: %s\n", geak_prog, geak_now() - started,
	    s->idx, s->where ? s->where : "-", *s->id ? " (" : "", s->id, *s->id ? ")" : "", line);
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Seconds as a JSON number to the millisecond. */
static json_t *
json_seconds(double secs)
{
	return json_real((double)(long)(secs * 1000) / 1000);
}

/* A job's result file carries this run's nonce: it was written by the
 * job just run, not left over or forged. */
static int
nonce_matches(json_t *result, const char *nonce)
{
	const char *got = json_string_value(json_object_get(result, "nonce"));

	return got && !strcmp(got, nonce);
}

static void
nonce_hex(char out[33])
{
	unsigned char b[16];

	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		geak_die(GEAK_EXIT_FATAL, "getrandom:");
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The last bytes of a file as a JSON string (valid UTF-8), or null. */
static json_t *
file_tail(const char *dir, const char *name)
{
	char *path = geak_xasprintf("%s/%s", dir, name);
	size_t len;
	char *data = geak_read_file(path, &len);
	json_t *s;

	free(path);
	if (!data)
		return json_null();
	if (len > TAIL_BYTES) {
		memmove(data, data + len - TAIL_BYTES, TAIL_BYTES);
		data[TAIL_BYTES] = '\0';
	}
	geak_utf8_scrub(data);
	s = json_string(data);
	free(data);
	return s ? s : json_null();
}

/* What a job's stderr in dir says, into buf: its last line first (a
 * Python error's message), then its last lines whole, up to 600 bytes;
 * "" when it is empty. */
static void
stderr_gist(const char *dir, char *buf, size_t n)
{
	json_t *tail = file_tail(dir, "stderr.txt");
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

static json_t *
load_json(const char *dir, const char *name)
{
	char *path = geak_xasprintf("%s/%s", dir, name);
	json_t *v = json_load_file(path, 0, NULL);

	free(path);
	return v;
}

/* Job files live in our own directories: failing to write one means the
 * disk is full or gone, and no evaluation can go on. */
static void
dump_json(json_t *v, const char *dir, const char *name)
{
	char *path = geak_xasprintf("%s/%s", dir, name);

	if (json_dump_file(v, path, JSON_COMPACT) < 0)
		geak_die(GEAK_EXIT_FATAL, "cannot write %s", path);
	free(path);
}

static void
drop_dir(char *dir)
{
	if (dir && !opt.keep)
		geak_rmtree(dir);
	free(dir);
}

/* ---- the task ---- */

static const struct geak_field common_fields[] = {
	{ "code", GEAK_T_STRING, 1 },
	{ "task", GEAK_T_OBJECT, 1 },
	{ "task.suite", GEAK_T_STRING, 1 },
	{ "task.name", GEAK_T_STRING, 1 },
	{ "task.test", GEAK_T_STRING, 1 },
	{ "task.reference", GEAK_T_STRING, 0 },
	{ "task.perf", GEAK_T_STRING, 0 },
	{ "task.entry", GEAK_T_STRING, 0 },
	{ "task.tolerance", GEAK_T_OBJECT, 0 },
	{ "task.test_autotune", GEAK_T_STRING, 0 },
	{ "task.tolerance.rtol", GEAK_T_NUMBER, 0 },
	{ "task.tolerance.atol", GEAK_T_NUMBER, 0 },
	{ NULL, 0, 0 },
};

/* Everything that determines the reference's outputs: the key of the
 * reference cache and, with the code added, of the evaluation cache. */
static json_t *
task_spec(json_t *rec, struct slot *s, json_t *hello, char *msg, size_t msglen)
{
	const char *suite, *name;
	json_t *spec, *seeds, *tol;

	if (geak_check_fields(rec, common_fields, msg, msglen) < 0)
		return NULL;
	suite = geak_get_str(rec, "task.suite");
	name = geak_get_str(rec, "task.name");
	if (strcmp(suite, "tbg") && strcmp(suite, "rocm") && strcmp(suite, "plain")) {
		snprintf(msg, msglen, "field 'task.suite': '%s' is not tbg, rocm or plain", suite);
		return NULL;
	}
	if (strcmp(suite, "rocm") && geak_absent(rec, "task.reference")) {
		snprintf(msg, msglen, "field 'task.reference': missing");
		return NULL;
	}
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
	    != strlen(name) || (name[0] >= '0' && name[0] <= '9')) {
		snprintf(msg, msglen, "field 'task.name': '%s' is not a Python identifier", name);
		return NULL;
	}
	seeds = json_array();
	for (long i = 0; i < opt.seeds; i++)
		json_array_append_new(seeds, json_integer(42 + i));
	spec = json_pack("{s:s, s:s, s:O, s:o, s:b, s:O, s:O, s:O}",
	    "suite", suite, "name", name, "test", geak_get(rec, "task.test"),
	    "seeds", seeds, "cpu", s->gpu == NULL,
	    "reference", geak_absent(rec, "task.reference") ? json_null() : geak_get(rec, "task.reference"),
	    "perf", geak_absent(rec, "task.perf") ? json_null() : geak_get(rec, "task.perf"),
	    "entry", geak_absent(rec, "task.entry") ? json_null() : geak_get(rec, "task.entry"));
	if (!spec)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	/* As GEAK-eval does: a ROCm candidate that autotunes is tested with
	 * the variant that passes no launch meta-parameters (its reference
	 * keeps the original test). */
	if (!strcmp(suite, "rocm") && json_is_string(geak_get(rec, "task.test_autotune")) &&
	    strstr(geak_get_str(rec, "code"), "@triton.autotune"))
		json_object_set(spec, "cand_test", geak_get(rec, "task.test_autotune"));
	tol = geak_get(rec, "task.tolerance");
	if (json_is_object(tol))
		json_object_set(spec, "tolerance", tol);
	json_object_set(spec, "harness", json_object_get(hello, "harness"));
	json_object_set(spec, "versions", json_object_get(hello, "versions"));
	json_object_set(spec, "device", json_object_get(hello, "device"));
	return spec;
}

/* ---- talking to the worker ---- */

/* ---- the worker's greeting, stored ----
 *
 * The cache key needs the harness version, the library versions and the
 * device, which the worker's greeting gives; a greeting stored with the
 * fingerprint of what it depends on lets a run whose every candidate is
 * cached finish without starting Python. */

static char *
hello_path(const struct slot *s)
{
	char key[65];
	json_t *k = json_pack("{s:s, s:s, s:s?, s:s?}", "python", opt.python, "script", opt.harness,
	    "gpu", s->gpu, "vendor", opt.vendor);

	geak_cache_key(k, key);
	json_decref(k);
	return geak_xasprintf("%s/worker/%s.json", opt.cache_dir, key);
}

static int
fingerprint_ok(json_t *hello)
{
	json_t *fp = json_object_get(hello, "fingerprint"), *e;
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

/* The greeting for cache keys: the running worker's, else a stored one
 * whose fingerprint still holds, else NULL. */
static json_t *
known_hello(struct slot *s)
{
	char *path;

	if (s->up)
		return s->w.hello;
	if (!s->hello && !opt.no_cache) {
		path = hello_path(s);
		s->hello = json_load_file(path, 0, NULL);
		free(path);
		if (s->hello && (!json_is_string(geak_get(s->hello, "device.name")) ||
		    !fingerprint_ok(s->hello))) {
			json_decref(s->hello);
			s->hello = NULL;
		}
	}
	return s->hello;
}

static void
store_hello(struct slot *s)
{
	char *path = hello_path(s), *dir = geak_xasprintf("%s/worker", opt.cache_dir);
	char *tmp = geak_xasprintf("%s.%ld.tmp", path, (long)getpid());

	if (!opt.no_cache && json_is_string(geak_get(s->w.hello, "device.name")) &&
	    geak_mkdirs(dir, 0700) == 0 && json_dump_file(s->w.hello, tmp, JSON_COMPACT) == 0)
		rename(tmp, path);
	unlink(tmp);
	free(path), free(dir), free(tmp);
}

/* The cores shared out among the slots, at least one each. */
static int
cpu_threads(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	return ncpu > opt.jobs ? (int)(ncpu / opt.jobs) : 1;
}

static int
slot_up(struct slot *s, char *err, size_t errlen)
{
	struct geak_worker_opts o = {
		.python = opt.python, .script = opt.harness, .gpu = s->gpu, .vendor = opt.vendor,
		.home = s->home, .write_dirs = s->write_dirs, .start_timeout_s = 300,
		.triton_cache = triton_cache, .cpu_threads = cpu_threads(),
		.file_limit = (long long)opt.file_limit_mib << 20,
	};

	/* Some GPU runtimes do not start inside a network namespace or under
	 * Landlock: then the worker starts again with fewer layers, and each
	 * evaluation records the layers it ran under. */
	static const int layers[] = { GEAK_SB_NONET | GEAK_SB_FSWRITE, GEAK_SB_NONET, 0 };

	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static size_t learned;    /* what one slot learned, the others reuse */

	if (s->up)
		return 0;
	pthread_mutex_lock(&mu);
	if (learned > s->layer)
		s->layer = learned;
	pthread_mutex_unlock(&mu);
	for (size_t i = s->layer; i < sizeof layers / sizeof *layers; i++) {
		o.sandbox = layers[i];
		if (geak_worker_start(&s->w, &o, err, errlen) < 0)
			return -1;
		if (!s->gpu || json_is_string(geak_get(s->w.hello, "device.name")) ||
		    i + 1 == sizeof layers / sizeof *layers)
			break;
		geak_warn("GPU %s: %s inside the sandbox (%s); starting the worker with fewer layers",
		    s->gpu, "no device", geak_get_str(s->w.hello, "device.error") ?
		    geak_get_str(s->w.hello, "device.error") : "unknown error");
		geak_worker_stop(&s->w);
		s->layer = i + 1;
		pthread_mutex_lock(&mu);
		if (learned < s->layer)
			learned = s->layer;
		pthread_mutex_unlock(&mu);
	}
	s->up = 1;
	store_hello(s);
	return 0;
}

static json_t *
job_request(const char *op, const char *dir, const char *nonce, json_t *extra)
{
	json_t *req = json_pack("{s:s, s:s, s:s, s:f, s:f}", "op", op, "dir", dir,
	    "nonce", nonce, "timeout", opt.timeout_s, "compile_timeout", opt.compile_s);

	if (extra)
		json_object_update(req, extra);
	return req;
}

/* The net under a worker that hangs itself: the worker enforces the job's
 * limits, and stops their clock while the job is paused or waits for its
 * GPU, so this leaves room for that. */
static double
worker_wait_s(void)
{
	return opt.timeout_s + opt.compile_s + 60 + PAUSE_ROOM_S;
}

/* One job in a fresh directory; the response, or NULL with err set. */
static json_t *
job(struct slot *s, const char *op, const char *dir, const char *nonce,
	json_t *extra, char *err, size_t errlen)
{
	json_t *req, *resp;

	if (slot_up(s, err, errlen) < 0)
		return NULL;
	req = job_request(op, dir, nonce, extra);
	resp = geak_worker_call(&s->w, req, worker_wait_s(), err, errlen);
	json_decref(req);
	if (!resp)
		s->up = 0;
	return resp;
}

static const char *resp_status(json_t *resp);

/* The harness left its out-of-memory mark (geakh/run.py: OOM_MARK) in dir;
 * the mark is removed. */
static int
ran_out_of_memory(const char *dir)
{
	char *mark = geak_xasprintf("%s/oom", dir);
	int found = unlink(mark) == 0;

	free(mark);
	return found;
}

/* Into the slot's GPU queue in a mode, the wait counted as lock_wait:
 * how many correctness runs a timing run paused.  A lock that cannot be
 * taken is said once per job and the job runs without it. */
static int
queue_enter(struct slot *s, int mode, struct geak_gpumember *me)
{
	double t0 = geak_now();
	int paused = geak_gpuqueue_enter(s->queue, mode, me);

	if (paused < 0) {
		geak_warn("cannot lock GPU %s in %s: %s; running without the lock", s->gpu,
		    lockdir, strerror(errno));
		paused = 0;
	}
	s->lock_wait += geak_now() - t0;
	return paused;
}

static json_t *gpu_job(struct slot *s, int mode, const char *op, const char *dir,
	const char *nonce, json_t *extra, char *err, size_t errlen);

/* Killed by SIGKILL that neither the worker (its timeouts say "timeout")
 * nor geak-eval sent: the kernel's out-of-memory killer, most likely, on
 * a host that the jobs beside it had filled. */
static int
killed_from_outside(json_t *resp)
{
	return !strcmp(resp_status(resp), "signal") &&
	    json_integer_value(json_object_get(resp, "signal")) == SIGKILL;
}

/* A job that ran out of memory (the harness's mark in dir, or the host's
 * killer) beside other jobs, running or paused (paused ones keep their
 * memory): what they held may be what it lacked, so it runs once more on
 * a drained GPU (in the CPU mode, just once more).  Otherwise resp as it
 * is. */
static json_t *
again_if_short(struct slot *s, json_t *resp, const char *op, const char *dir,
	const char *nonce, json_t *extra, char *err, size_t errlen)
{
	int gpu_short;

	if (!resp)
		return resp;
	gpu_short = ran_out_of_memory(dir);
	if (!gpu_short && !killed_from_outside(resp))
		return resp;
	trace(s, "%s: %s beside other jobs; again on a drained GPU", base_name(dir),
	    gpu_short ? "out of GPU memory" : "killed by SIGKILL (host memory?)");
	s->oom_retries++;
	json_decref(resp);
	return gpu_job(s, GEAK_GPU_DRAINED, op, dir, nonce, extra, err, errlen);
}

/* A job that uses the GPU, through its queue (lib/gpulock.h): shared for
 * correctness runs, alone for timing (pausing the correctness runs in
 * flight), or alone on a drained GPU.  Without a GPU, just the job. */
static json_t *
gpu_job(struct slot *s, int mode, const char *op, const char *dir, const char *nonce,
	json_t *extra, char *err, size_t errlen)
{
	static const char *const mode_name[] = { "shared", "alone", "drained" };
	struct geak_gpumember me = { 0, NULL };
	json_t *resp;
	double t0 = geak_now(), t1;
	const char *job_name = base_name(dir);
	int paused = 0;

	if (slot_up(s, err, errlen) < 0)
		return NULL;
	me.pid = s->w.proc.pid;
	trace(s, "%s: waiting for GPU %s (%s)", job_name, s->gpu ? s->gpu : "-", mode_name[mode]);
	if (s->queue)
		paused = queue_enter(s, mode, &me);
	t1 = geak_now();
	trace(s, "%s: running after %.1f s waiting, %d correctness runs paused", job_name,
	    t1 - t0, paused);
	resp = job(s, op, dir, nonce, extra, err, errlen);
	if (s->queue)
		geak_gpuqueue_leave(s->queue, mode, &me);
	trace(s, "%s: %s after %.1f s", job_name, resp ? resp_status(resp) : "failed",
	    geak_now() - t1);
	if (mode == GEAK_GPU_SHARED || paused)
		return again_if_short(s, resp, op, dir, nonce, extra, err, errlen);
	return resp;
}

/* A timing run on a GPU: it loads the code and makes its inputs as a
 * correctness run does (paused like one if another timing run comes),
 * says when it is ready, and only then waits for the GPU alone and is
 * told to go; the setup (6 to 9 s of a 10 to 13 s timing run on the
 * H200) no longer holds the other runs up.  A run that says nothing
 * before its answer failed before timing anything. */
static json_t *
timing_job(struct slot *s, const char *dir, const char *nonce, json_t *extra,
	char *err, size_t errlen)
{
	struct geak_gpumember me = { 0, NULL };
	json_t *req, *msg, *go;
	const char *job_name = base_name(dir);
	double t1;
	int paused = 0, mode = GEAK_GPU_SHARED;

	if (!s->queue)
		return gpu_job(s, GEAK_GPU_ALONE, "time", dir, nonce, extra, err, errlen);
	if (slot_up(s, err, errlen) < 0)
		return NULL;
	me.pid = s->w.proc.pid;
	trace(s, "%s: waiting for GPU %s (shared, to prepare)", job_name, s->gpu);
	queue_enter(s, GEAK_GPU_SHARED, &me);
	req = job_request("time", dir, nonce, extra);
	json_object_set_new(req, "handshake", json_true());
	msg = geak_worker_send(&s->w, req, err, errlen) < 0 ? NULL :
	    geak_worker_read(&s->w, worker_wait_s(), err, errlen);
	json_decref(req);
	if (json_is_true(json_object_get(msg, "ready"))) {
		json_decref(msg);
		geak_gpuqueue_leave(s->queue, GEAK_GPU_SHARED, &me);
		trace(s, "%s: ready; waiting for GPU %s (alone)", job_name, s->gpu);
		t1 = geak_now();
		mode = GEAK_GPU_ALONE;
		paused = queue_enter(s, GEAK_GPU_ALONE, &me);
		trace(s, "%s: timing after %.1f s waiting, %d correctness runs paused", job_name,
		    geak_now() - t1, paused);
		go = json_pack("{s:b}", "go", 1);
		msg = geak_worker_send(&s->w, go, err, errlen) < 0 ? NULL :
		    geak_worker_read(&s->w, worker_wait_s(), err, errlen);
		json_decref(go);
	}
	geak_gpuqueue_leave(s->queue, mode, &me);
	if (!msg)
		s->up = 0;
	trace(s, "%s: %s", job_name, msg ? resp_status(msg) : "failed");
	return paused ? again_if_short(s, msg, "time", dir, nonce, extra, err, errlen) : msg;
}

static const char *
resp_status(json_t *resp)
{
	const char *st = json_string_value(json_object_get(resp, "status"));

	return st ? st : "";
}

static char *
new_jobdir(const char *prefix)
{
	char *jobs = geak_xasprintf("%s/jobs", scratch);
	char *dir = geak_mkworkdir(jobs, prefix);

	if (!dir)
		geak_die(GEAK_EXIT_FATAL, "cannot make a directory in %s:", jobs);
	free(jobs);
	return dir;
}

static int all_runs_ok(json_t *result);

/* One run of the reference in dir (its job.json written), its autotuners
 * taking other configurations than the first run's (avoid: its
 * "tunings") or their own; its result (with others, only if every run in
 * it passed). */
static json_t *
run_again(struct slot *s, const char *dir, const char *nonce, json_t *extra, int runners_up,
    json_t *avoid)
{
	json_t *req = extra ? geak_json_copy(extra) : json_object(), *resp, *res = NULL;
	char err[256];

	if (!req || json_object_set_new(req, "runners_up", json_boolean(runners_up)) < 0 ||
	    (runners_up && json_is_array(avoid) && json_object_set(req, "avoid", avoid) < 0))
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	resp = gpu_job(s, GEAK_GPU_SHARED, "run", dir, nonce, req, err, sizeof err);
	if (resp && !strcmp(resp_status(resp), "exit"))
		res = load_json(dir, "result.json");
	if (res && runners_up && !all_runs_ok(res)) {
		json_decref(res);
		res = NULL;
	}
	json_decref(resp);
	json_decref(req);
	return res;
}

/* The reference once more, in another process (tmp/again), its
 * autotuners taking other configurations than the first process's
 * (tunings: the choices in its result) where their searches timed one:
 * elements where the two processes disagree (memory the reference reads
 * but never wrote, which holds the same garbage for every run of one
 * process; outputs that depend on the tuning) are not compared.  Another
 * configuration that fails (one that does not fit a shape its search did
 * not see) leaves the tuning alone for a second try.  Its nonce goes into
 * meta as "again"; a second run that fails is left out. */
static void
second_run(struct slot *s, json_t *jobspec, const char *tmp, json_t *meta, json_t *extra,
    json_t *tunings)
{
	char *dir = geak_xasprintf("%s/again", tmp), nonce[33];
	json_t *res;

	if (mkdir(dir, 0700) < 0) {
		free(dir);
		return;
	}
	dump_json(jobspec, dir, "job.json");
	nonce_hex(nonce);
	res = run_again(s, dir, nonce, extra, 1, tunings);
	if (!res) {
		nonce_hex(nonce);
		res = run_again(s, dir, nonce, extra, 0, NULL);
	}
	if (res)
		json_object_set_new(meta, "again", json_string(nonce));
	json_decref(res);
	free(dir);
}

/* Every run of a result.json passed (and there was one). */
static int
all_runs_ok(json_t *result)
{
	json_t *runs = json_object_get(result, "runs"), *r;
	size_t i;

	if (!json_array_size(runs))
		return 0;
	json_array_foreach(runs, i, r)
		if (!json_is_true(json_object_get(r, "ok")))
			return 0;
	return 1;
}

/* How a task's runs go, as its reference showed: without the poison (it
 * uses memory it never wrote, or reads past an input's end, as indices)
 * and one call per process (it faults on its second call in a process). */
struct refmode {
	int no_poison, one_call;
};

/* The extra request of a run as mode says: NULL, or without the poison. */
static json_t *
run_request(const struct refmode *mode)
{
	return mode->no_poison ? json_pack("{s:b}", "poison", 0) : NULL;
}

/* The first run of a result passed and a later one failed. */
static int
later_run_failed(json_t *result)
{
	json_t *runs = json_object_get(result, "runs"), *r;
	size_t i;

	if (!json_is_true(json_object_get(json_array_get(runs, 0), "ok")))
		return 0;
	json_array_foreach(runs, i, r)
		if (!json_is_true(json_object_get(r, "ok")))
			return 1;
	return 0;
}

/* The reference's job once more in tmp, as mode says (its job.json
 * rewritten); its response, with *result loaded. */
static json_t *
rerun_reference(struct slot *s, json_t *jobspec, const char *tmp, char nonce[33],
    const struct refmode *mode, json_t **result, char *err, size_t errlen)
{
	json_t *extra = run_request(mode), *resp;

	json_decref(*result);
	if (mode->one_call)
		json_object_set_new(jobspec, "one_call", json_true());
	else
		json_object_del(jobspec, "one_call");
	dump_json(jobspec, tmp, "job.json");
	nonce_hex(nonce);
	resp = gpu_job(s, GEAK_GPU_SHARED, "run", tmp, nonce, extra, err, errlen);
	*result = resp ? load_json(tmp, "result.json") : NULL;
	json_decref(extra);
	return resp;
}

/* The reference's outputs kept in dir by an earlier run: its nonce and
 * the mode it ran in; 0 if there are none. */
static int
cached_reference(const char *dir, char nonce[33], struct refmode *mode)
{
	json_t *meta = load_json(dir, "ref.json");
	int found = json_is_string(json_object_get(meta, "nonce"));

	if (found) {
		snprintf(nonce, 33, "%s", json_string_value(json_object_get(meta, "nonce")));
		mode->no_poison = json_is_false(json_object_get(meta, "poison"));
		mode->one_call = json_is_true(json_object_get(meta, "one_call"));
	}
	json_decref(meta);
	return found;
}

/* The reference's correctness run in tmp, again in the next mode for as
 * long as some of its runs fail and a mode is left.  Some references use
 * memory they never wrote (or read past an input's end) as indices: on
 * poisoned memory they fault where plain memory happens to pass; some
 * pass their first call and fault on a later one in the same process,
 * and GEAK-eval calls them once.  They run again without the poison, or
 * each call in a process of its own, or both, and the candidate then
 * runs so too.  (A ROCm file is one pytest session.)  Returns the
 * worker's response, *meta the run's result. */
static json_t *
run_reference(struct slot *s, json_t *jobspec, const char *tmp, char nonce[33],
    struct refmode *mode, json_t **meta, char *err, size_t errlen)
{
	int is_rocm = !strcmp(json_string_value(json_object_get(jobspec, "suite")), "rocm");
	json_t *resp;

	dump_json(jobspec, tmp, "job.json");
	nonce_hex(nonce);
	resp = gpu_job(s, GEAK_GPU_SHARED, "run", tmp, nonce, NULL, err, errlen);
	*meta = resp ? load_json(tmp, "result.json") : NULL;
	while (resp && !strcmp(resp_status(resp), "exit") && *meta && !all_runs_ok(*meta)) {
		if (!mode->one_call && later_run_failed(*meta) && !is_rocm)
			mode->one_call = 1;
		else if (!mode->no_poison) {
			mode->no_poison = 1;
			mode->one_call = 0;
		} else
			break;
		json_decref(resp);
		resp = rerun_reference(s, jobspec, tmp, nonce, mode, meta, err, errlen);
	}
	return resp;
}

/* tmp renamed to dir.  Two evaluators may race to the same reference:
 * either result is good, the loser's copy goes and its nonce and mode
 * become the winner's, whose outputs it is judged by.  0, or -1 with err
 * set. */
static int
keep_reference(const char *tmp, const char *dir, char nonce[33], struct refmode *mode,
    char *err, size_t errlen)
{
	if (rename(tmp, dir) == 0)
		return 0;
	geak_rmtree(tmp);
	if (!cached_reference(dir, nonce, mode)) {
		snprintf(err, errlen, "cannot keep the reference outputs in %s", dir);
		return -1;
	}
	return 0;
}

/* Run the reference once per task and device; its outputs stay in the
 * cache (or in this run's directory with --no-cache).  Returns the
 * directory and its nonce, or NULL with err set. */
static char *
reference(struct slot *s, json_t *spec, json_t *rec, char nonce[33], struct refmode *mode,
	char *err, size_t errlen)
{
	char key[65], *dir, *tmp, *base;
	json_t *meta, *jobspec, *resp, *plain, *tunings;

	/* The reference runs the task's own test, whatever the candidate's. */
	jobspec = geak_json_copy(spec);
	json_object_del(jobspec, "cand_test");
	geak_cache_key(jobspec, key);
	base = opt.no_cache ? geak_xstrdup(s->refs) : geak_xasprintf("%s/ref", opt.cache_dir);
	dir = geak_xasprintf("%s/%s", base, key);
	if (cached_reference(dir, nonce, mode)) {
		json_decref(jobspec);
		free(base);
		return dir;
	}
	tmp = NULL;
	if (geak_mkdirs(base, 0700) < 0)
		snprintf(err, errlen, "cannot make %s: %s", base, strerror(errno));
	else if (!(tmp = geak_mkworkdir(base, "ref-")))
		snprintf(err, errlen, "cannot make a directory for the reference: %s", strerror(errno));
	free(base);
	if (!tmp) {
		json_decref(jobspec);
		free(dir);
		return NULL;
	}
	json_object_set_new(jobspec, "code", json_string(geak_get_str(rec, "task.reference")
	    ? geak_get_str(rec, "task.reference") : ""));
	/* A reference whose runs disagree runs each seed this many times
	 * more, to show more of what races (geakh/run.py: Job.resample). */
	json_object_set_new(jobspec, "resample", json_integer(REF_RESAMPLES));
	resp = run_reference(s, jobspec, tmp, nonce, mode, &meta, err, errlen);
	if (!resp || strcmp(resp_status(resp), "exit") || !meta) {
		if (resp) {
			char gist[1024];

			stderr_gist(tmp, gist, sizeof gist);
			snprintf(err, errlen, "the reference run ended with %s%s%s%s", resp_status(resp),
			    strcmp(resp_status(resp), "timeout") ? "" : " (see --timeout)",
			    *gist ? ": " : "", gist);
		}
		json_decref(meta);
		json_decref(resp);
		json_decref(jobspec);
		geak_rmtree(tmp);
		free(tmp), free(dir);
		return NULL;
	}
	json_decref(resp);
	tunings = json_incref(json_object_get(meta, "tunings"));
	json_decref(meta);
	meta = json_pack("{s:s}", "nonce", nonce);
	plain = run_request(mode);
	if (plain)
		json_object_set_new(meta, "poison", json_false());
	if (mode->one_call)
		json_object_set_new(meta, "one_call", json_true());
	second_run(s, jobspec, tmp, meta, plain, tunings);
	json_decref(tunings);
	json_decref(plain);
	json_decref(jobspec);
	dump_json(meta, tmp, "ref.json");
	json_decref(meta);
	if (keep_reference(tmp, dir, nonce, mode, err, errlen) < 0) {
		free(tmp), free(dir);
		return NULL;
	}
	free(tmp);
	return dir;
}

/* ---- the evaluation ---- */

static json_t *
new_eval(const char *code_sha, struct slot *s)
{
	json_t *dev = json_object_get(json_object_get(s->w.hello, "device"), "name");

	return json_pack("{s:s, s:b, s:b, s:n, s:s, s:n, s:n, s:[], s:[], s:[], s:n, s:n, s:O, s:O, s:f, s:{}, s:b}",
	    "code_sha", code_sha, "call", 0, "exec", 0, "speedup", "stage", "call",
	    "reason", "message", "shapes", "flags", "notes", "stdout_tail", "stderr_tail",
	    "device", dev ? dev : json_null(),
	    "harness", json_object_get(s->w.hello, "harness"), "seconds", 0.0, "phases", "cached", 0);
}

static void
set_message(json_t *ev, const char *msg)
{
	char *m;

	if (!msg)
		return;
	m = geak_xstrdup(msg);
	geak_utf8_scrub(m);
	json_object_set_new(ev, "message", json_string(m));
	free(m);
}

static void
fail(json_t *ev, const char *stage, const char *reason, const char *msg)
{
	json_object_set_new(ev, "stage", json_string(stage));
	json_object_set_new(ev, "reason", json_string(reason));
	set_message(ev, msg);
}

/* flags: integrity findings (a flagged candidate is never selected as
 * correct); notes: facts about the evaluation that say nothing against
 * the candidate. */
static void
add_flag(json_t *ev, const char *flag)
{
	json_array_append_new(json_object_get(ev, "flags"), json_string(flag));
}

static void
add_note(json_t *ev, const char *note)
{
	json_array_append_new(json_object_get(ev, "notes"), json_string(note));
}

static int
has_note(json_t *ev, const char *note)
{
	json_t *n;
	size_t i;

	json_array_foreach(json_object_get(ev, "notes"), i, n)
		if (json_is_string(n) && !strcmp(json_string_value(n), note))
			return 1;
	return 0;
}

static void
sandbox_info(json_t *ev, struct slot *s, json_t *resp)
{
	json_t *sb = json_pack("{s:b, s:b, s:b}",
	    "netns", (s->w.sandbox & GEAK_SB_NONET) != 0,
	    "landlock_worker", (s->w.sandbox & GEAK_SB_FSWRITE) != 0,
	    "landlock_job", json_is_true(json_object_get(resp, "landlock")));

	json_object_set_new(ev, "sandbox", sb);
	if (!json_is_true(json_object_get(resp, "landlock")))
		add_note(ev, "no_landlock");
}

/* A run that did not exit by itself: timeout or crash. */
static int
run_ended_badly(json_t *ev, json_t *resp, const char *stage)
{
	const char *st = resp_status(resp);
	char msg[200];

	if (!strcmp(st, "timeout")) {
		const char *phase = json_string_value(json_object_get(resp, "phase"));
		snprintf(msg, sizeof msg, "killed after %.0f s %s", json_number_value(json_object_get(resp, "wall")),
		    !strcmp(stage, "perf") ? "(--compile-timeout and --timeout)"
		    : phase && !strcmp(phase, "compile") ? "before the first call returned (--compile-timeout)"
		    : "(--timeout)");
		fail(ev, stage, "timeout", msg);
		return 1;
	}
	if (!strcmp(st, "signal")) {
		snprintf(msg, sizeof msg, "killed by signal %lld",
		    (long long)json_integer_value(json_object_get(resp, "signal")));
		fail(ev, stage, "crash", msg);
		return 1;
	}
	return 0;
}

static void
copy_verdict(json_t *ev, json_t *v)
{
	static const char *keys[] = { "call", "exec", "stage", "reason", "message", NULL };
	size_t i;
	json_t *f;

	for (const char **k = keys; *k; k++)
		if (json_object_get(v, *k))
			json_object_set(ev, *k, json_object_get(v, *k));
	json_array_foreach(json_object_get(v, "flags"), i, f)
		json_array_append(json_object_get(ev, "flags"), f);
	json_array_foreach(json_object_get(v, "notes"), i, f)
		json_array_append(json_object_get(ev, "notes"), f);
	if (json_object_get(v, "runs"))
		json_object_set(ev, "runs", json_object_get(v, "runs"));
}

/* The judge's verdict on the candidate in canddir against the reference
 * in refdir (and, where tuneddir is given, its run tuned as the candidate
 * was), or NULL with err set. */
static json_t *
verdict(struct slot *s, const char *refdir, const char *ref_nonce, const char *canddir,
    const char *cand_nonce, const char *tuneddir, const char *tuned_nonce, json_t *spec,
    char *err, size_t errlen)
{
	char *jdir = new_jobdir("judge-");
	char nonce[33];
	json_t *tol = json_object_get(spec, "tolerance");
	json_t *extra = json_pack("{s:s, s:s, s:s, s:s, s:O}", "ref", refdir, "cand", canddir,
	    "ref_nonce", ref_nonce, "cand_nonce", cand_nonce, "suite", json_object_get(spec, "suite"));
	json_t *resp, *v;

	if (!extra)
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	if (json_is_number(json_object_get(tol, "rtol")))
		json_object_set(extra, "rtol", json_object_get(tol, "rtol"));
	if (json_is_number(json_object_get(tol, "atol")))
		json_object_set(extra, "atol", json_object_get(tol, "atol"));
	if (tuneddir && (json_object_set_new(extra, "tuned", json_string(tuneddir)) < 0 ||
	    json_object_set_new(extra, "tuned_nonce", json_string(tuned_nonce)) < 0))
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	nonce_hex(nonce);
	resp = job(s, "judge", jdir, nonce, extra, err, errlen);
	json_decref(extra);
	v = resp ? load_json(jdir, "verdict.json") : NULL;
	if (!v && resp) {
		/* Say why, or the failure cannot be looked into afterwards: the
		 * judge's directory goes. */
		char gist[768];

		stderr_gist(jdir, gist, sizeof gist);
		snprintf(err, errlen, "the judge wrote no verdict (%s)%s%s", resp_status(resp),
		    *gist ? ": " : "", gist);
	}
	json_decref(resp);
	drop_dir(jdir);
	return v;
}

/* The same string at index i of two arrays. */
static int
same_at(json_t *a, json_t *b, size_t i)
{
	const char *x = json_string_value(json_array_get(a, i));
	const char *y = json_string_value(json_array_get(b, i));

	return x && y && !strcmp(x, y);
}

/* The candidate's autotuner choices ([kernel, key, configuration], from
 * its result) for a kernel and key on which the reference's first run
 * chose another configuration; NULL where there is none.  Only those go
 * to the reference, so what the candidate's process wrote there cannot
 * make it do more than run its own configurations. */
static json_t *
other_choices(const char *refdir, const char *canddir)
{
	json_t *ref = load_json(refdir, "result.json"), *cand = load_json(canddir, "result.json");
	json_t *out = json_array(), *c, *r;
	size_t i, j;

	if (!out)
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	json_array_foreach(json_object_get(cand, "tunings"), i, c) {
		json_array_foreach(json_object_get(ref, "tunings"), j, r) {
			if (same_at(c, r, 0) && same_at(c, r, 1) && !same_at(c, r, 2) &&
			    json_string_value(json_array_get(c, 2))) {
				if (json_array_append(out, c) < 0)
					geak_die(GEAK_EXIT_FATAL, "json: out of memory");
				break;
			}
		}
	}
	json_decref(ref);
	json_decref(cand);
	if (!json_array_size(out)) {
		json_decref(out);
		out = NULL;
	}
	return out;
}

/* After a mismatch: the reference once more (in canddir/tuned), every
 * autotuner taking the candidate's choice where that is one of its own
 * configurations, and then the verdict with that run as one more of the
 * reference's; NULL where the candidate chose as the reference did, or
 * that run failed.  A test that launches a tuned kernel on a grid of its
 * own (dequantize_matmul) writes elements that depend on the
 * configuration, and the reference's two processes need not have drawn
 * the candidate's. */
static json_t *
verdict_tuned_as_candidate(struct slot *s, const char *refdir, const char *ref_nonce,
    const char *canddir, const char *cand_nonce, json_t *spec, const struct refmode *mode,
    char *err, size_t errlen)
{
	json_t *choices = other_choices(refdir, canddir), *jobspec, *extra, *resp, *res = NULL, *v = NULL;
	char *dir, nonce[33];

	if (!choices)
		return NULL;
	dir = geak_xasprintf("%s/tuned", canddir);
	jobspec = load_json(refdir, "job.json");
	if (!jobspec || mkdir(dir, 0700) < 0)
		goto out;
	json_object_del(jobspec, "resample");
	dump_json(jobspec, dir, "job.json");
	extra = run_request(mode);
	if (!extra)
		extra = json_object();
	if (!extra || json_object_set(extra, "tune_as", choices) < 0)
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	nonce_hex(nonce);
	resp = gpu_job(s, GEAK_GPU_SHARED, "run", dir, nonce, extra, err, errlen);
	if (resp && !strcmp(resp_status(resp), "exit"))
		res = load_json(dir, "result.json");
	if (!res || !all_runs_ok(res))
		trace(s, "tuned: the reference tuned as the candidate failed (%s); the first verdict stands",
		    !resp ? err : res ? "a run failed" : resp_status(resp));
	else if (!(v = verdict(s, refdir, ref_nonce, canddir, cand_nonce, dir, nonce, spec, err, errlen)))
		trace(s, "tuned: %s; the first verdict stands", err);
	json_decref(res);
	json_decref(resp);
	json_decref(extra);
out:
	json_decref(jobspec);
	json_decref(choices);
	free(dir);
	return v;
}

static void
judge(struct slot *s, json_t *ev, const char *refdir, const char *ref_nonce,
	const char *canddir, const char *cand_nonce, json_t *spec, const struct refmode *mode)
{
	char err[1024];
	json_t *v = verdict(s, refdir, ref_nonce, canddir, cand_nonce, NULL, NULL, spec, err, sizeof err);
	const char *reason = v ? json_string_value(json_object_get(v, "reason")) : NULL;

	if (reason && !strcmp(reason, "mismatch")) {
		char again_err[1024];
		json_t *tuned = verdict_tuned_as_candidate(s, refdir, ref_nonce, canddir, cand_nonce,
		    spec, mode, again_err, sizeof again_err);

		if (tuned) {
			json_decref(v);
			v = tuned;
			add_note(ev, "reference_tuned_as_candidate");
		}
	}
	if (!v)
		fail(ev, "call", "harness", err);
	else
		copy_verdict(ev, v);
	json_decref(v);
}

static double
sum_field(json_t *rows, const char *key)
{
	double t = 0;
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r)
		t += json_number_value(json_object_get(r, key));
	return t;
}

static void
apply_timing(json_t *ev, json_t *t)
{
	json_t *rows = json_object_get(t, "shapes"), *out = json_array(), *r;
	const char *dev = json_string_value(json_object_get(ev, "device"));
	double ms, ms_ref, peak_gbps, peak_tflops;
	int above = 0, unreliable = 0;
	size_t i;

	if (json_array_size(json_object_get(t, "patched"))) {
		json_decref(out);
		json_object_set_new(ev, "exec", json_false());
		fail(ev, "perf", "cheat", "the candidate replaced the timing functions");
		return;
	}
	geak_device_peaks(dev, &peak_gbps, &peak_tflops);
	json_array_foreach(rows, i, r) {
		double case_ms = json_number_value(json_object_get(r, "ms"));
		double case_ref = json_number_value(json_object_get(r, "ms_ref"));
		enum geak_roof bw = geak_roofline_case(json_number_value(json_object_get(r, "gbps")),
		    peak_gbps, case_ms, case_ref);
		enum geak_roof fl = geak_roofline_case(json_number_value(json_object_get(r, "tflops")),
		    peak_tflops, case_ms, case_ref);

		json_array_append_new(out, json_pack("{s:O, s:O, s:O}", "shape", json_object_get(r, "shape"),
		    "ms", json_object_get(r, "ms"), "ms_ref", json_object_get(r, "ms_ref")));
		above |= bw == GEAK_ROOF_ABOVE || fl == GEAK_ROOF_ABOVE;
		unreliable |= bw == GEAK_ROOF_UNRELIABLE || fl == GEAK_ROOF_UNRELIABLE;
	}
	json_object_set_new(ev, "shapes", out);
	ms = sum_field(rows, "ms");
	ms_ref = sum_field(rows, "ms_ref");
	if (ms > 0 && ms_ref > 0) {
		double sp = ms_ref / ms;
		json_object_set_new(ev, "speedup", json_real(sp));
		if (sp > opt.speedup_limit)
			add_flag(ev, "excessive_speedup");
	}
	if (above)
		add_flag(ev, "above_roofline");
	if (unreliable)
		add_note(ev, "roofline_unreliable");
}

/* Seconds spent in one step of the evaluation since a time and a total
 * of the slot's waits for the GPU, the waits left out (they go to
 * lock_wait), to the millisecond. */
static void
add_phase(json_t *ev, const char *name, double since, const struct slot *s, double waited_before)
{
	json_t *phases = json_object_get(ev, "phases");
	double secs = json_number_value(json_object_get(phases, name)) + geak_now() - since -
	    (s->lock_wait - waited_before);

	json_object_set_new(phases, name, json_seconds(secs));
}

/* The timing run's own split of its time (setup: loading and making the
 * inputs; warmup: compiles, autotuning and untimed calls; timed) goes to
 * eval.phases as perf_setup, perf_warmup and perf_timed. */
static void
add_spent(json_t *ev, json_t *spent)
{
	const char *key;
	json_t *v;

	json_object_foreach(spent, key, v) {
		if (!json_is_number(v) || strlen(key) > 16 || strspn(key, "abcdefghijklmnopqrstuvwxyz") != strlen(key))
			continue;
		char *name = geak_xasprintf("perf_%s", key);
		json_object_set_new(json_object_get(ev, "phases"), name, json_seconds(json_number_value(v)));
		free(name);
	}
}

/* The performance checks passed only as a racing reference's own run
 * would (geakh/judge.py unlike_races).  The only note taken from a run
 * that imported the candidate, and once. */
static void
add_spread_note(json_t *ev, json_t *t)
{
	static const char spread[] = "within_reference_spread";
	json_t *n;
	size_t i;

	json_array_foreach(json_object_get(t, "notes"), i, n)
		if (json_is_string(n) && !strcmp(json_string_value(n), spread) && !has_note(ev, spread))
			add_note(ev, spread);
}

/* One stage of the performance run: "check" (the outputs on the
 * performance inputs, beside other jobs, compiling what the timing needs)
 * or "time" (alone on the GPU).  0 when the next stage may follow, 1 when
 * a call of the reference with other autotuner choices faulted (retuned:
 * such calls were made) and the stage is to run again without them. */
static int
perf_stage(struct slot *s, json_t *ev, json_t *spec, json_t *rec, const char *stage, int no_poison,
    int retuned)
{
	int timing = !strcmp(stage, "time"), ok = -1;
	char *dir = new_jobdir(timing ? "time-" : "check-");
	char nonce[33], err[1024];
	json_t *jobspec = geak_json_copy(spec), *resp, *t, *extra;
	const char *kind, *why;
	double t0 = geak_now(), w0 = s->lock_wait;

	json_object_set(jobspec, "code", json_object_get(rec, "code"));
	/* A ROCm candidate that could not launch under the autotune variant
	 * of the test passed under the original: it is timed under that too. */
	if (has_note(ev, "original_test"))
		json_object_del(jobspec, "cand_test");
	dump_json(jobspec, dir, "job.json");
	json_decref(jobspec);
	nonce_hex(nonce);
	extra = json_pack("{s:I, s:s}", "reps", (json_int_t)opt.reps, "stage", stage);
	if (no_poison)
		json_object_set_new(extra, "poison", json_false());
	if (!retuned)
		json_object_set_new(extra, "retuned", json_false());
	resp = timing ? timing_job(s, dir, nonce, extra, err, sizeof err) :
	    gpu_job(s, GEAK_GPU_SHARED, "time", dir, nonce, extra, err, sizeof err);
	json_decref(extra);
	json_object_set_new(ev, "stage", json_string("perf"));
	if (!resp) {
		fail(ev, "perf", "harness", err);
	} else if (!run_ended_badly(ev, resp, "perf")) {
		t = load_json(dir, "timing.json");
		kind = json_string_value(json_object_get(json_object_get(t, "error"), "kind"));
		why = json_string_value(json_object_get(json_object_get(t, "error"), "message"));
		if (!nonce_matches(t, nonce)) {
			add_note(ev, "perf_failed");
			fail(ev, "perf", "no_output", "the timing run wrote no result with this run's nonce");
		} else if (kind && !strcmp(kind, "retuned_fault") && retuned) {
			ok = 1;
		} else if (kind && !strcmp(kind, "reference")) {
			/* The task's perf script fails for its own reference: no
			 * speedup for any candidate, and nothing against this one. */
			add_note(ev, "perf_failed");
			add_note(ev, "reference_perf_failed");
			set_message(ev, why);
		} else if (kind && (!strcmp(kind, "mismatch") || !strcmp(kind, "cheat"))) {
			json_object_set_new(ev, "exec", json_false());
			fail(ev, "perf", kind, why);
		} else if (kind) {
			add_note(ev, "perf_failed");
			fail(ev, "perf", kind, why);
		} else {
			if (timing) {
				apply_timing(ev, t);
				add_spent(ev, json_object_get(t, "spent"));
			}
			add_spread_note(ev, t);
			ok = 0;
		}
		json_decref(t);
	}
	json_decref(resp);
	drop_dir(dir);
	add_phase(ev, timing ? "perf" : "perf_check", t0, s, w0);
	return ok;
}

/* A stage whose reference faulted with other autotuner choices runs
 * again without such calls: the fault ended the process's CUDA context,
 * and says nothing of the candidate. */
static int
perf_stage_once_more(struct slot *s, json_t *ev, json_t *spec, json_t *rec, const char *stage,
    int no_poison)
{
	int r = perf_stage(s, ev, spec, rec, stage, no_poison, !has_note(ev, "retuned_fault"));

	if (r == 1) {
		add_note(ev, "retuned_fault");
		r = perf_stage(s, ev, spec, rec, stage, no_poison, 0);
	}
	return r;
}

static void
perf(struct slot *s, json_t *ev, json_t *spec, json_t *rec, int no_poison)
{
	if (perf_stage_once_more(s, ev, spec, rec, "check", no_poison) == 0 &&
	    perf_stage_once_more(s, ev, spec, rec, "time", no_poison) == 0 &&
	    !json_is_string(json_object_get(ev, "reason")) && !has_note(ev, "reference_perf_failed"))
		json_object_set_new(ev, "stage", json_string("done"));
}

/* The static checks of the candidate's source (read, never run, by
 * geakh/static.py in a child of the worker): the findings, or NULL with
 * msg set when the check could not be made. */
static json_t *
static_findings(struct slot *s, json_t *rec, char *msg, size_t msglen)
{
	char *dir = new_jobdir("static-");
	char nonce[33];
	json_t *job_spec = json_pack("{s:O}", "code", json_object_get(rec, "code"));
	json_t *resp, *out = NULL, *found;

	dump_json(job_spec, dir, "job.json");
	json_decref(job_spec);
	nonce_hex(nonce);
	resp = job(s, "static", dir, nonce, NULL, msg, msglen);
	found = resp ? load_json(dir, "static.json") : NULL;
	if (resp && (!nonce_matches(found, nonce) || !json_is_array(json_object_get(found, "findings"))))
		snprintf(msg, msglen, "the static check wrote no result (%s)", resp_status(resp));
	else if (resp)
		out = json_incref(json_object_get(found, "findings"));
	json_decref(found);
	json_decref(resp);
	drop_dir(dir);
	return out;
}

/* Findings into the eval object: warnings (and, unless strict, strict
 * rules) become notes "static:RULE"; under strict, the first strict
 * finding rejects the candidate.  1 when it was rejected. */
static int
apply_static(json_t *ev, json_t *findings)
{
	json_t *f;
	size_t i;
	int strict = !strcmp(opt.static_mode, "strict");

	json_object_set(ev, "static", findings);
	json_array_foreach(findings, i, f) {
		const char *rule = json_string_value(json_object_get(f, "rule"));
		char note[96];
		if (strict && json_is_true(json_object_get(f, "strict"))) {
			char msg[512];
			snprintf(msg, sizeof msg, "static check %s, line %lld: %s", rule ? rule : "?",
			    (long long)json_integer_value(json_object_get(f, "line")),
			    json_string_value(json_object_get(f, "text")) ?
			    json_string_value(json_object_get(f, "text")) : "");
			fail(ev, "static", "cheat", msg);
			return 1;
		}
		snprintf(note, sizeof note, "static:%s", rule ? rule : "?");
		add_note(ev, note);
	}
	return 0;
}

/* Evaluate the candidate; returns the eval object, or NULL with msg set
 * when the harness itself could not be used. */
static json_t *
evaluate(struct slot *s, json_t *rec, json_t *spec, const char *code_sha, char *msg, size_t msglen)
{
	char ref_nonce[33], nonce[33];
	char *refdir, *dir;
	json_t *ev, *resp, *jobspec, *extra = NULL;
	double t0 = geak_now(), w0;
	json_t *findings;
	struct refmode mode = { 0, 0 };

	s->lock_wait = 0;
	s->oom_retries = 0;
	ev = new_eval(code_sha, s);
	if (strcmp(opt.static_mode, "off")) {
		findings = static_findings(s, rec, msg, msglen);
		if (!findings) {
			json_decref(ev);
			return NULL;
		}
		add_phase(ev, "static", t0, s, 0);
		int rejected = apply_static(ev, findings);
		json_decref(findings);
		if (rejected)
			return ev;
		t0 = geak_now();
	}
	refdir = reference(s, spec, rec, ref_nonce, &mode, msg, msglen);
	if (!refdir) {
		json_decref(ev);
		return NULL;
	}
	add_phase(ev, "reference", t0, s, 0);
	t0 = geak_now(), w0 = s->lock_wait;
	dir = new_jobdir("cand-");
	jobspec = geak_json_copy(spec);
	json_object_set(jobspec, "code", json_object_get(rec, "code"));
	if (mode.one_call) {
		add_note(ev, "one_call_per_process");
		json_object_set_new(jobspec, "one_call", json_true());
	}
	dump_json(jobspec, dir, "job.json");
	json_decref(jobspec);
	nonce_hex(nonce);
	if (mode.no_poison)
		add_note(ev, "no_poison");
	extra = run_request(&mode);
	resp = gpu_job(s, GEAK_GPU_SHARED, "run", dir, nonce, extra, msg, msglen);
	json_decref(extra);
	if (!resp) {
		json_decref(ev);
		free(refdir);
		drop_dir(dir);
		return NULL;
	}
	sandbox_info(ev, s, resp);
	json_object_set_new(ev, "stdout_tail", file_tail(dir, "stdout.txt"));
	json_object_set_new(ev, "stderr_tail", file_tail(dir, "stderr.txt"));
	add_phase(ev, "call", t0, s, w0);
	t0 = geak_now(), w0 = s->lock_wait;
	if (!run_ended_badly(ev, resp, "call"))
		judge(s, ev, refdir, ref_nonce, dir, nonce, spec, &mode);
	add_phase(ev, "judge", t0, s, w0);
	json_decref(resp);
	/* A reference that fails or a judge that cannot judge says nothing
	 * about the candidate: the record gets an error, not a verdict. */
	if (json_is_string(json_object_get(ev, "reason")) &&
	    !strcmp(json_string_value(json_object_get(ev, "reason")), "harness")) {
		snprintf(msg, msglen, "%s", json_string_value(json_object_get(ev, "message"))
		    ? json_string_value(json_object_get(ev, "message")) : "the judge failed");
		json_decref(ev);
		free(refdir);
		drop_dir(dir);
		return NULL;
	}
	/* TritonBench and plain tasks bring performance cases in task.perf;
	 * ROCm files carry theirs in test_performance. */
	if (json_is_true(json_object_get(ev, "exec")) && s->gpu && opt.no_perf)
		add_note(ev, "perf_skipped");
	else if (json_is_true(json_object_get(ev, "exec")) && s->gpu &&
	    (json_is_string(json_object_get(spec, "perf")) ||
	    !strcmp(json_string_value(json_object_get(spec, "suite")), "rocm")))
		perf(s, ev, spec, rec, mode.no_poison);
	json_object_set_new(json_object_get(ev, "phases"), "lock_wait", json_seconds(s->lock_wait));
	if (s->oom_retries)
		add_note(ev, "oom_retry");
	free(refdir);
	drop_dir(dir);
	return ev;
}

static int
cacheable(json_t *ev)
{
	const char *r = json_string_value(json_object_get(ev, "reason"));

	return !r || (strcmp(r, "harness") && strcmp(r, "timeout") && strcmp(r, "crash"));
}

/* The evaluation's key: the reference's, the code, and the settings that
 * change the timing or the flags. */
static void
eval_key(json_t *spec, const char *sha, char key[65])
{
	json_object_set_new(spec, "code_sha", json_string(sha));
	json_object_set_new(spec, "reps", json_integer(opt.reps));
	json_object_set_new(spec, "speedup_limit", json_real(opt.speedup_limit));
	if (opt.no_perf)
		json_object_set_new(spec, "no_perf", json_true());
	if (strcmp(opt.static_mode, "strict"))
		json_object_set_new(spec, "static", json_string(opt.static_mode));
	geak_cache_key(spec, key);
	json_object_del(spec, "code_sha");
	json_object_del(spec, "reps");
	json_object_del(spec, "speedup_limit");
	json_object_del(spec, "no_perf");
	json_object_del(spec, "static");
}

static int
up_or_fail(struct slot *s, json_t *rec, const char *where)
{
	char msg[2048];

	if (slot_up(s, msg, sizeof msg) == 0)
		return 0;
	geak_warn("%s: %s", where, msg);
	geak_set_error(rec, "eval", "harness", "%s", msg);
	return -1;
}

static int
process(struct slot *s, json_t *rec, const char *where)
{
	char msg[2048], sha[65], key[65];
	const char *code = json_string_value(json_object_get(rec, "code"));
	json_t *spec, *ev, *cached;
	double t0 = geak_now();

	if (!code)
		return GEAK_PASS; /* a task without a candidate: nothing to do */
	geak_sha256_hex(code, strlen(code), sha);
	if (json_is_string(geak_get(rec, "eval.code_sha")) && !strcmp(geak_get_str(rec, "eval.code_sha"), sha))
		return GEAK_PASS; /* evaluated already */
	if (!known_hello(s) && up_or_fail(s, rec, where) < 0)
		return GEAK_FAILED;
	t0 = geak_now(); /* the worker's start-up is not this candidate's time */
	spec = task_spec(rec, s, known_hello(s), msg, sizeof msg);
	if (!spec) {
		geak_warn("%s: %s", where, msg);
		geak_set_error(rec, "eval", "input", "%s", msg);
		return GEAK_FAILED;
	}
	eval_key(spec, sha, key);
	cached = opt.no_cache ? NULL : geak_cache_get(opt.cache_dir, "eval", key);
	if (json_is_object(cached)) {
		json_object_set_new(cached, "cached", json_true());
		json_object_set_new(rec, "eval", cached);
		if (geak_absent(rec, "code_sha"))
			json_object_set_new(rec, "code_sha", json_string(sha));
		json_decref(spec);
		return GEAK_DONE;
	}
	json_decref(cached);
	if (!s->up) {
		/* A miss under a stored greeting: start the worker, and key the
		 * result by what it says. */
		json_decref(spec);
		if (up_or_fail(s, rec, where) < 0)
			return GEAK_FAILED;
		t0 = geak_now();
		spec = task_spec(rec, s, s->w.hello, msg, sizeof msg);
		if (!spec) {
			geak_set_error(rec, "eval", "input", "%s", msg);
			return GEAK_FAILED;
		}
		eval_key(spec, sha, key);
	}
	ev = evaluate(s, rec, spec, sha, msg, sizeof msg);
	json_decref(spec);
	if (!ev) {
		geak_warn("%s: %s", where, msg);
		geak_set_error(rec, "eval", "harness", "%s", msg);
		return GEAK_FAILED;
	}
	json_object_set_new(ev, "seconds", json_seconds(geak_now() - t0));
	if (!opt.no_cache && cacheable(ev) && geak_cache_put(opt.cache_dir, "eval", key, ev) < 0)
		geak_warn("cannot write to the cache %s: %s", opt.cache_dir, strerror(errno));
	json_object_set_new(rec, "eval", ev);
	if (geak_absent(rec, "code_sha"))
		json_object_set_new(rec, "code_sha", json_string(sha));
	return GEAK_DONE;
}

/* ---- threads ---- */

static void *
reader(void *arg)
{
	char **paths = arg;
	int npaths = 0;
	struct geak_input *in;
	json_t *rec;
	int r;

	while (paths[npaths])
		npaths++;
	in = geak_input_open(paths, npaths);
	while ((r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		pthread_mutex_lock(&q.mu);
		if (r == GEAK_READ_FAIL) {
			q.read_failed = 1;
			pthread_mutex_unlock(&q.mu);
			continue;
		}
		if (q.n == q.cap) {
			q.cap = q.cap ? 2 * q.cap : 64;
			q.items = geak_xrealloc(q.items, q.cap * sizeof *q.items);
		}
		struct item *it = &q.items[q.n++];
		it->rec = rec;
		it->where = geak_xstrdup(geak_input_where(in));
		it->state = 0;
		it->verdict = GEAK_DONE;
		if (r == GEAK_READ_BAD || geak_has_error(rec))
			mark_done(q.n - 1, r == GEAK_READ_BAD ? GEAK_FAILED : GEAK_PASS);
		pthread_cond_broadcast(&q.cv);
		pthread_mutex_unlock(&q.mu);
	}
	geak_input_close(in);
	pthread_mutex_lock(&q.mu);
	q.eof = 1;
	pthread_cond_broadcast(&q.cv);
	pthread_mutex_unlock(&q.mu);
	return NULL;
}

static void *
slot_main(void *arg)
{
	struct slot *s = arg;

	for (;;) {
		size_t i;
		pthread_mutex_lock(&q.mu);
		while (q.next < q.n && q.items[q.next].state != 0)
			q.next++;
		while (q.next >= q.n && !q.eof) {
			pthread_cond_wait(&q.cv, &q.mu);
			while (q.next < q.n && q.items[q.next].state != 0)
				q.next++;
		}
		if (q.next >= q.n) {
			pthread_mutex_unlock(&q.mu);
			break;
		}
		i = q.next++;
		q.items[i].state = 1;
		json_t *rec = q.items[i].rec;
		char *where = q.items[i].where;
		pthread_mutex_unlock(&q.mu);

		s->where = where;
		s->id = json_is_string(json_object_get(rec, "id")) ? json_string_value(json_object_get(rec, "id")) : "";
		trace(s, "started");
		int v = process(s, rec, where);
		trace(s, "%s", v == GEAK_FAILED ? "failed" : "finished");
		s->where = NULL;
		s->id = "";

		pthread_mutex_lock(&q.mu);
		mark_done(i, v);
		pthread_mutex_unlock(&q.mu);
	}
	if (s->up)
		geak_worker_stop(&s->w);
	json_decref(s->hello);
	s->hello = NULL;
	return NULL;
}

/* The next result to write, waiting for it; -1 when all are written. */
static long
next_result(size_t written)
{
	long i = -1;

	pthread_mutex_lock(&q.mu);
	if (opt.unordered) {
		while (written >= q.nready && !(q.eof && written >= q.n))
			pthread_cond_wait(&q.cv, &q.mu);
		if (written < q.nready)
			i = (long)q.ready[written];
	} else {
		while (!(written < q.n && q.items[written].state == 2) && !(q.eof && written >= q.n))
			pthread_cond_wait(&q.cv, &q.mu);
		if (written < q.n)
			i = (long)written;
	}
	pthread_mutex_unlock(&q.mu);
	return i;
}

/* Write results in input order as they complete, or with -u as each
 * completes (a run cut short then keeps every result it finished). */
static int
writer(void)
{
	struct geak_output out;
	int status = GEAK_EXIT_OK;
	long i;

	geak_output_init(&out, stdout, "stdout");
	for (size_t written = 0; (i = next_result(written)) >= 0; written++) {
		pthread_mutex_lock(&q.mu);
		json_t *rec = q.items[i].rec;
		int v = q.items[i].verdict;
		q.items[i].rec = NULL;
		free(q.items[i].where);
		pthread_mutex_unlock(&q.mu);
		if (v == GEAK_FAILED && !status)
			status = GEAK_EXIT_RECORDS;
		if (geak_output_write(&out, rec) < 0)
			status = GEAK_EXIT_FATAL;
		else if (opt.unordered && fflush(stdout) == EOF)
			status = GEAK_EXIT_FATAL;
		json_decref(rec);
	}
	if (q.read_failed)
		status = GEAK_EXIT_FATAL;
	if (geak_output_close(&out) < 0)
		status = GEAK_EXIT_FATAL;
	return status;
}

/* ---- GPUs ---- */

static void
add_gpu(const char *g)
{
	opt.gpus = geak_xrealloc(opt.gpus, (opt.ngpus + 2) * sizeof *opt.gpus);
	opt.gpus[opt.ngpus++] = geak_xstrdup(g);
	opt.gpus[opt.ngpus] = NULL;
}

static void
gpus_auto(void)
{
	char err[256];
	json_t *list, *g;
	size_t i;

	if (geak_gpu_list(&list, err, sizeof err) < 0) {
		geak_warn("cannot list GPUs: %s; evaluating on the CPU", err);
		return;
	}
	/* The worker's environment replaces ours, so it is told physical
	 * numbers: index is the device behind our own *_VISIBLE_DEVICES. */
	json_array_foreach(list, i, g) {
		char num[32];
		json_t *idx = json_object_get(g, "index");
		if (!json_is_integer(idx))
			idx = json_object_get(g, "visible_index");
		snprintf(num, sizeof num, "%lld", (long long)(json_is_integer(idx) ? json_integer_value(idx) : (json_int_t)i));
		add_gpu(num);
		if (!opt.vendor && json_is_string(json_object_get(g, "vendor")))
			opt.vendor = geak_xstrdup(json_string_value(json_object_get(g, "vendor")));
	}
	json_decref(list);
}

/* The vendor of the machine's GPUs, for the right visibility mask. */
static void
gpu_vendor(void)
{
	char err[256];
	json_t *list;

	if (opt.vendor || geak_gpu_list(&list, err, sizeof err) < 0)
		return;
	if (json_is_string(geak_get(json_array_get(list, 0), "vendor")))
		opt.vendor = geak_xstrdup(geak_get_str(json_array_get(list, 0), "vendor"));
	json_decref(list);
}

static void
parse_gpus(const char *arg)
{
	char *copy = geak_xstrdup(arg), *save = NULL;

	if (!strcmp(arg, "auto")) {
		gpus_auto();
		free(copy);
		return;
	}
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!*t || strspn(t, "0123456789abcdefABCDEF-GPU") != strlen(t)) {
			free(copy);
			geak_die(GEAK_EXIT_USAGE, "--gpus: '%s' is not a device index or UUID", t);
		}
		add_gpu(t);
	}
	free(copy);
	gpu_vendor();
}

static int
list_gpus(void)
{
	char err[256];
	json_t *list;

	if (geak_gpu_list(&list, err, sizeof err) < 0)
		geak_die(GEAK_EXIT_FATAL, "cannot list GPUs: %s", err);
	if (json_dumpf(list, stdout, JSON_INDENT(2)) < 0 || putchar('\n') == EOF) {
		json_decref(list);
		geak_die(GEAK_EXIT_FATAL, "stdout:");
	}
	json_decref(list);
	return geak_fshut(stdout, "stdout") < 0 ? GEAK_EXIT_FATAL : GEAK_EXIT_OK;
}

/* ---- main ---- */

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: %s [-j N] [--gpus LIST|auto | --cpu] [--cache DIR | --no-cache] [--timeout S]\n"
	    "       [--compile-timeout S] [--seeds N] [--reps N] [--speedup-limit X] [--no-perf]\n"
	    "       [--static strict|warn|off] [--python PATH] [--harness DIR] [--tmpdir DIR]\n"
	    "       [--file-limit MIB] [--keep] [-u] [-v] [file ...]\n"
	    "       %s --list-gpus\n"
	    "Evaluate candidate records: call, correctness against the reference, speedup.\n",
	    geak_prog, geak_prog);
}

enum { O_GPUS = 256, O_CACHE, O_NOCACHE, O_TIMEOUT, O_COMPILE, O_SEEDS, O_REPS, O_LIMIT,
	O_PYTHON, O_HARNESS, O_TMP, O_KEEP, O_LIST, O_VERSION, O_CPU, O_NOPERF, O_STATIC, O_FILES };

static void
parse_args(int argc, char **argv, const char **harness_dir)
{
	static const struct option longs[] = {
		{ "jobs", required_argument, NULL, 'j' }, { "gpus", required_argument, NULL, O_GPUS },
		{ "cache", required_argument, NULL, O_CACHE }, { "no-cache", no_argument, NULL, O_NOCACHE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "compile-timeout", required_argument, NULL, O_COMPILE },
		{ "seeds", required_argument, NULL, O_SEEDS }, { "reps", required_argument, NULL, O_REPS },
		{ "speedup-limit", required_argument, NULL, O_LIMIT },
		{ "no-perf", no_argument, NULL, O_NOPERF }, { "unordered", no_argument, NULL, 'u' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "static", required_argument, NULL, O_STATIC },
		{ "python", required_argument, NULL, O_PYTHON }, { "harness", required_argument, NULL, O_HARNESS },
		{ "tmpdir", required_argument, NULL, O_TMP }, { "keep", no_argument, NULL, O_KEEP },
		{ "file-limit", required_argument, NULL, O_FILES },
		{ "list-gpus", no_argument, NULL, O_LIST }, { "cpu", no_argument, NULL, O_CPU }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION }, { NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "hj:uv", longs, NULL)) != -1) {
		switch (c) {
		case 'j': opt.jobs = geak_parse_long(optarg, "-j", 1, 256); break;
		case O_GPUS: parse_gpus(optarg); opt.gpus_given = 1; break;
		case O_CPU: opt.cpu = 1; break;
		case O_CACHE: free(opt.cache_dir); opt.cache_dir = geak_xstrdup(optarg); break;
		case O_NOCACHE: opt.no_cache = 1; break;
		case O_TIMEOUT: opt.timeout_s = geak_parse_double(optarg, "--timeout", 1, 86400); break;
		case O_COMPILE: opt.compile_s = geak_parse_double(optarg, "--compile-timeout", 1, 86400); break;
		case O_SEEDS: opt.seeds = geak_parse_long(optarg, "--seeds", 1, 100); break;
		case O_REPS: opt.reps = geak_parse_long(optarg, "--reps", 3, 100000); break;
		case O_NOPERF: opt.no_perf = 1; break;
		case 'u': opt.unordered = 1; break;
		case 'v': opt.verbose = 1; break;
		case O_STATIC:
			if (strcmp(optarg, "strict") && strcmp(optarg, "warn") && strcmp(optarg, "off"))
				geak_die(GEAK_EXIT_USAGE, "--static: '%s' is not strict, warn or off", optarg);
			opt.static_mode = optarg;
			break;
		case O_LIMIT: opt.speedup_limit = geak_parse_double(optarg, "--speedup-limit", 1, 1e9); break;
		case O_PYTHON: opt.python = optarg; break;
		case O_HARNESS: *harness_dir = optarg; break;
		case O_TMP: opt.tmp_parent = optarg; break;
		case O_FILES: opt.file_limit_mib = geak_parse_long(optarg, "--file-limit", 1, 1L << 24); break;
		case O_KEEP: opt.keep = 1; break;
		case O_LIST: exit(list_gpus());
		case 'h': usage(stdout); exit(geak_fshut(stdout, "stdout") < 0 ? GEAK_EXIT_FATAL : 0);
		case O_VERSION: geak_print_version(); exit(0);
		default: usage(stderr); exit(GEAK_EXIT_USAGE);
		}
	}
}

static void
setup(const char *harness_dir)
{
	char *py_default = NULL;

	if (!opt.python)
		opt.python = getenv("GEAK_PYTHON");
	if (!opt.python || !*opt.python) {
		py_default = geak_xasprintf("%s/../.venv/bin/python", geak_sharedir());
		opt.python = access(py_default, X_OK) == 0 ? py_default : "python3";
	}
	if (!harness_dir)
		harness_dir = getenv("GEAK_HARNESS");
	opt.harness = harness_dir && *harness_dir ? geak_xasprintf("%s/geak_worker.py", harness_dir)
	    : geak_share_path(NULL, "harness", "geak_worker.py");
	if (access(opt.harness, R_OK) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s:", opt.harness);
	if (!opt.cache_dir)
		opt.cache_dir = geak_cache_default_dir();
	if (opt.cpu) {
		for (size_t i = 0; i < opt.ngpus; i++)
			free(opt.gpus[i]);
		opt.ngpus = 0;
	} else if (!opt.gpus_given) {
		gpus_auto();
	}
	if (!opt.jobs)
		opt.jobs = opt.ngpus ? (long)opt.ngpus : 1;
	scratch = geak_mkworkdir(opt.tmp_parent, "geak-eval-");
	if (!scratch)
		geak_die(GEAK_EXIT_FATAL, "cannot make a work directory:");
	char *abs_scratch = realpath(scratch, NULL);
	if (!abs_scratch)
		geak_die(GEAK_EXIT_FATAL, "%s:", scratch);
	free(scratch);
	scratch = abs_scratch;
	char *jobs = geak_xasprintf("%s/jobs", scratch);
	if (mkdir(jobs, 0700) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s:", jobs);
	free(jobs);
	if (opt.no_cache) {
		free(opt.cache_dir);
		opt.cache_dir = geak_xasprintf("%s/cache", scratch);
	}
	if (geak_mkdirs(opt.cache_dir, 0700) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s:", opt.cache_dir);
	/* The worker runs elsewhere: every path it sees is absolute. */
	char *abs = realpath(opt.cache_dir, NULL);
	if (!abs)
		geak_die(GEAK_EXIT_FATAL, "%s:", opt.cache_dir);
	free(opt.cache_dir);
	opt.cache_dir = abs;
	triton_cache = geak_xasprintf("%s/triton", opt.cache_dir);
	lockdir = geak_gpulock_dir();
}

int
main(int argc, char **argv)
{
	const char *harness_dir = NULL;
	pthread_t rt, *st;
	struct slot *slots;
	struct geak_gpuqueue *queues;
	int status;

	geak_setprog(argv[0]);
	started = geak_now();
	parse_args(argc, argv, &harness_dir);
	setup(harness_dir);
	const char *mps = getenv("CUDA_MPS_PIPE_DIRECTORY");
	const char *write_dirs[] = { scratch, opt.cache_dir, "/dev", mps && *mps ? mps : NULL, NULL };
	slots = geak_xcalloc((size_t)opt.jobs, sizeof *slots);
	queues = geak_xcalloc(opt.ngpus ? opt.ngpus : 1, sizeof *queues);
	for (size_t i = 0; i < opt.ngpus; i++) {
		geak_gpuqueue_init(&queues[i], lockdir, opt.gpus[i]);
		/* The runs in flight end within their limits, so a run that
		 * waits for them to drain holds new ones back for as long: with
		 * 30 s, five slots of minutes-long runs started new ones
		 * without end, and it waited for the input to run out. */
		queues[i].drain_hold_s = opt.timeout_s + opt.compile_s;
	}
	st = geak_xcalloc((size_t)opt.jobs, sizeof *st);
	if (pthread_create(&rt, NULL, reader, argv + optind))
		geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	for (long i = 0; i < opt.jobs; i++) {
		struct slot *s = &slots[i];
		s->idx = (int)i;
		s->id = "";
		s->gpu = opt.ngpus ? opt.gpus[i % (long)opt.ngpus] : NULL;
		s->queue = opt.ngpus ? &queues[i % (long)opt.ngpus] : NULL;
		s->home = geak_xasprintf("%s/home%ld", scratch, i);
		s->refs = geak_xasprintf("%s/ref", opt.cache_dir);
		s->write_dirs = write_dirs;
		if (mkdir(s->home, 0700) < 0)
			geak_die(GEAK_EXIT_FATAL, "%s:", s->home);
		if (pthread_create(&st[i], NULL, slot_main, s))
			geak_die(GEAK_EXIT_FATAL, "cannot start a thread");
	}
	status = writer();
	pthread_join(rt, NULL);
	for (long i = 0; i < opt.jobs; i++) {
		pthread_join(st[i], NULL);
		free(slots[i].home);
		free(slots[i].refs);
	}
	if (!opt.keep)
		geak_rmtree(scratch);
	free(slots), free(st), free(queues), free(scratch), free(lockdir), free(q.items), free(q.ready), free(triton_cache);
	return status;
}
