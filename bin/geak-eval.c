/* geak-eval: evaluate candidate kernels: call, execution (correctness
 * against the reference's profile) and speed, in a sandbox, with a judge
 * that never imports the candidate's code.  See geak-eval(1).
 *
 * The record loop is lib/recpool.c, the jobs and workers lib/eval/evaljob.c,
 * the references' profiles lib/eval/evalprofile.c, one candidate's path
 * lib/eval/evalcascade.c; this file holds the options, the task's fields and
 * the evaluation cache. */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "eval/evalcache.h"
#include "eval/evalcalib.h"
#include "eval/evalcascade.h"
#include "eval/evalcheck.h"
#include "eval/evaljob.h"
#include "eval/evalprofile.h"
#include "gpu.h"
#include "eval/gpulock.h"
#include "eval/harness.h"
#include "progress.h"
#include "eval/pyenv.h"
#include "record.h"
#include "recpool.h"
#include "runner.h"
#include "eval/sandbox.h"
#include "secrets.h"

/* The options, as given and then settled by setup; the job layer gets
 * what it needs of them as a geak_evalcfg (job_config). */
struct evalopts {
	long jobs;
	char **gpus;              /* one per slot's device; NULL: the CPU mode */
	size_t ngpus;
	char *vendor;             /* of the GPUs, from the runtimes; NULL: unknown */
	double timeout_s, compile_s;
	int timeout_given;        /* --timeout was given: a task's own is not taken */
	double max_task_timeout_s;  /* the most a task's own timeout may be */
	long max_task_memory_mib;   /* the most a task's own memory may be */
	char *cache_dir;
	int no_cache, keep, cpu, gpus_given, no_perf, unordered, verbose;
	int profile;              /* --profile: a kernel breakdown of the largest case */
	char *ncu;                /* the profiler reading hardware counters, or NULL */
	char *counters_why;       /* with --profile and no ncu: why there are no counters */
	const char *static_mode;  /* strict, warn or off */
	long seeds, reps;
	long perf_cases;          /* a task's performance cases run, 0: all */
	long file_limit_mib;
	long memory_mib, proc_limit;  /* each job's; 0: none */
	int memory_given;         /* --memory-limit was given: never more */
	double speedup_limit;     /* flag speedups above it; 0: none */
	int allow_torch_ops;      /* --allow-torch-ops */
	const char *python;
	char *harness;            /* geak_worker.py */
	const char *tmp_parent;
	char *scratch;            /* this run's private directory */
	char *triton_cache;       /* per-code compile caches, shared by every job */
	char *lockdir;
	double started;           /* for -v */
	const char *export_path;  /* --export-calibration FILE, or NULL */
	const char *import_path;  /* --import-calibration FILE, or NULL */
};
static struct evalopts geak_eopt;

/* ---- the task ---- */

static const struct geak_field task_fields[] = {
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
	{ "task.timeout", GEAK_T_NUMBER, 0 },
	{ "task.memory_mib", GEAK_T_INT, 0 },
	{ "task.tolerance.rtol", GEAK_T_NUMBER, 0 },
	{ "task.tolerance.atol", GEAK_T_NUMBER, 0 },
	{ NULL, 0, 0 },
};

static json_t *
field_or_null(json_t *rec, const char *path)
{
	return geak_absent(rec, path) ? json_null() : geak_get(rec, path);
}

/* Everything that determines the reference's behaviour: with the
 * reference as code, the key of its profile; with the candidate's code
 * and the settings, of the evaluation cache.  NULL with msg set when a
 * field is bad. */
static json_t *
task_spec(json_t *rec, const char *gpu, json_t *hello, char *msg, size_t msglen)
{
	const char *suite, *name;
	json_t *spec, *seeds, *tol;

	if (geak_check_fields(rec, task_fields, msg, msglen) < 0)
		return NULL;
	suite = geak_get_str(rec, "task.suite");
	name = geak_get_str(rec, "task.name");
	if (strcmp(suite, "tbg") && strcmp(suite, "rocm") && strcmp(suite, "plain") &&
	    strcmp(suite, "kernelbench")) {
		snprintf(msg, msglen, "field 'task.suite': '%s' is not tbg, rocm, kernelbench or plain",
		    suite);
		return NULL;
	}
	if (geak_absent(rec, "task.reference")) {
		snprintf(msg, msglen, "field 'task.reference': missing");
		return NULL;
	}
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
	    != strlen(name) || (name[0] >= '0' && name[0] <= '9')) {
		snprintf(msg, msglen, "field 'task.name': '%s' is not a Python identifier", name);
		return NULL;
	}
	seeds = json_array();
	for (long i = 0; i < geak_eopt.seeds; i++)
		json_array_append_new(seeds, json_integer(42 + i));
	spec = json_pack("{s:s, s:s, s:O, s:o, s:b, s:O, s:O, s:O}",
	    GEAK_JOB_SUITE, suite, GEAK_JOB_NAME, name, GEAK_JOB_TEST, geak_get(rec, "task.test"),
	    GEAK_JOB_SEEDS, seeds, GEAK_JOB_CPU, gpu == NULL,
	    GEAK_JOB_REFERENCE, geak_get(rec, "task.reference"),
	    GEAK_JOB_PERF, field_or_null(rec, "task.perf"),
	    GEAK_JOB_ENTRY, field_or_null(rec, "task.entry"));
	if (!spec)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	if (geak_eopt.perf_cases > 0)
		json_object_set_new(spec, GEAK_JOB_PERF_CASES, json_integer(geak_eopt.perf_cases));
	/* As GEAK-eval does: a ROCm candidate that autotunes is tested with
	 * the variant that passes no launch meta-parameters (its reference
	 * keeps the original test). */
	if (!strcmp(suite, "rocm") && json_is_string(geak_get(rec, "task.test_autotune")) &&
	    strstr(geak_get_str(rec, "code"), "@triton.autotune"))
		json_object_set(spec, GEAK_JOB_CAND_TEST, geak_get(rec, "task.test_autotune"));
	/* Torch operations outside the candidate's kernels: allowed for a
	 * task that wants a partial port (geak-harness(7), Where the
	 * arithmetic ran). */
	if (geak_eopt.allow_torch_ops || json_is_true(geak_get(rec, "task.allow_torch_ops")))
		json_object_set_new(spec, GEAK_JOB_ALLOW_TORCH_OPS, json_true());
	tol = geak_get(rec, "task.tolerance");
	if (json_is_object(tol))
		json_object_set(spec, GEAK_JOB_TOLERANCE, tol);
	json_object_set(spec, GEAK_JOB_HARNESS, json_object_get(hello, GEAK_HELLO_HARNESS));
	json_object_set(spec, GEAK_JOB_VERSIONS, json_object_get(hello, GEAK_HELLO_VERSIONS));
	json_object_set(spec, GEAK_JOB_DEVICE, json_object_get(hello, GEAK_HELLO_DEVICE));
	return spec;
}

/* ---- the evaluation cache ---- */

static int
cacheable(const struct geak_eval *ev)
{
	const char *r = ev->reason;

	return !r || (strcmp(r, "harness") && strcmp(r, "timeout") && strcmp(r, "crash"));
}

/* The evaluation's key: the task's, the code, and the settings that
 * change the timing or the flags. */
static void
eval_key(json_t *spec, const char *sha, char key[65])
{
	json_t *k = geak_json_copy(spec);

	json_object_set_new(k, "code_sha", json_string(sha));
	json_object_set_new(k, "reps", json_integer(geak_eopt.reps));
	json_object_set_new(k, "speedup_limit", json_real(geak_eopt.speedup_limit));
	if (geak_eopt.no_perf)
		json_object_set_new(k, "no_perf", json_true());
	if (geak_eopt.profile)
		json_object_set_new(k, "profile", geak_eopt.ncu ? json_string(geak_eopt.ncu) : json_true());
	if (strcmp(geak_eopt.static_mode, "strict"))
		json_object_set_new(k, "static", json_string(geak_eopt.static_mode));
	geak_cache_key(k, key);
	json_decref(k);
}

/* ---- one record ---- */

static int
fail_record(json_t *rec, const char *where, const char *kind, const char *msg)
{
	char *clean = geak_xstrdup(msg); /* it may quote a job's output */

	geak_redact(&clean);
	geak_warn("%s: %s", where, clean);
	geak_set_error(rec, "eval", kind, "%s", clean);
	free(clean);
	return GEAK_FAILED;
}

/* ---- a harness that cannot start ---- */

static struct geak_pyenv pyenv;

/* Said once, however many slots find it. */
static void
cannot_start(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
cannot_start(const char *fmt, ...)
{
	static atomic_int told;
	va_list ap;

	if (atomic_exchange(&told, 1))
		return;
	va_start(ap, fmt);
	geak_vwarn(fmt, ap);
	va_end(ap);
}

/* Start the slot's workers; -1, said once in the user's terms, when the
 * harness cannot start or cannot use the slot's GPU: then no candidate
 * can be evaluated, and the run stops rather than fail every one. */
static int
up_or_abort(struct geak_slot *s)
{
	char msg[2048], why[3072];

	if (geak_slot_up(s, GEAK_W_RUN, msg, sizeof msg) < 0) {
		geak_pyenv_explain(&pyenv, msg, 0, why, sizeof why);
		cannot_start("%s", why);
		return -1;
	}
	if (geak_eval_gpu_unusable(&pyenv, s, why, sizeof why)) {
		cannot_start("%s", why);
		return -1;
	}
	return 0;
}

/* The record's evaluation from the cache, where it is there: 1, else 0. */
static int
from_cache(json_t *rec, const char *sha, const char *key)
{
	json_t *cached = geak_eopt.no_cache ? NULL : geak_cache_get(geak_eopt.cache_dir, "eval", key);

	if (!json_is_object(cached)) {
		json_decref(cached);
		return 0;
	}
	json_object_set_new(cached, "cached", json_true());
	json_object_set_new(rec, "eval", cached);
	if (geak_absent(rec, "code_sha"))
		json_object_set_new(rec, "code_sha", json_string(sha));
	return 1;
}

/* The candidate evaluated by its slot's running worker, into its record
 * and the cache. */
static int
evaluate(struct geak_cand *c, json_t *rec, json_t *spec, const char *sha, const char *key)
{
	struct geak_slot *s = c->slot;
	json_t *hello = s->w[GEAK_W_RUN].hello, *evj;
	char msg[2048];
	struct geak_eval ev;
	double t0 = geak_now(); /* the worker's start-up is not this candidate's time */
	int r;

	geak_trace(c, "started");
	geak_eval_init(&ev, sha, geak_get_str(hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_NAME), geak_get_str(hello, GEAK_HELLO_HARNESS));
	r = geak_evaluate(c, rec, spec, &ev, msg, sizeof msg);
	geak_trace(c, "%s", r < 0 ? "failed" : "finished");
	if (r < 0) {
		geak_eval_free(&ev);
		return fail_record(rec, c->where, "harness", msg);
	}
	ev.seconds = geak_now() - t0;
	ev.sandbox_more = geak_worker_sandbox(&s->w[GEAK_W_RUN]);
	geak_eval_sandbox_notes(&ev);
	/* A candidate whose output held a credential of ours tried to steal
	 * it: what it said is redacted, and it is flagged. */
	if (geak_eval_redact(&ev))
		geak_eval_flag(&ev, GEAK_FLAG_SECRETS_IN_ENV);
	evj = geak_eval_json(&ev);
	if (!geak_eopt.no_cache && cacheable(&ev) &&
	    geak_cache_put(geak_eopt.cache_dir, "eval", key, evj) < 0)
		geak_warn("cannot write to the cache %s: %s", geak_eopt.cache_dir, strerror(errno));
	geak_eval_free(&ev);
	json_object_set_new(rec, "eval", evj);
	if (geak_absent(rec, "code_sha"))
		json_object_set_new(rec, "code_sha", json_string(sha));
	return GEAK_DONE;
}

static int
process(void *arg, json_t *rec, const char *where)
{
	struct geak_slot *s = arg;
	char msg[2048], sha[65], key[65];
	const char *code = json_string_value(json_object_get(rec, "code"));
	json_t *spec, *hello, *id = json_object_get(rec, "id");
	int r;

	if (!code)
		return GEAK_PASS; /* a task without a candidate: nothing to do */
	geak_sha256_hex(code, strlen(code), sha);
	if (json_is_string(geak_get(rec, "eval.code_sha")) && !strcmp(geak_get_str(rec, "eval.code_sha"), sha))
		return GEAK_PASS; /* evaluated already */
	struct geak_cand cand = {
		.slot = s, .where = where, .id = json_is_string(id) ? json_string_value(id) : "",
		.task_timeout_s = json_number_value(geak_get(rec, "task.timeout")),
		.task_memory_mib = json_is_integer(geak_get(rec, "task.memory_mib")) ?
		    (long)json_integer_value(geak_get(rec, "task.memory_mib")) : 0,
	};
	if (!(hello = geak_slot_hello(s)) && up_or_abort(s) < 0)
		return GEAK_ABORT;
	hello = geak_slot_hello(s);
	if (!(spec = task_spec(rec, s->gpu, hello, msg, sizeof msg)))
		return geak_bad_field(rec, where, "%s", msg);
	eval_key(spec, sha, key);
	if (from_cache(rec, sha, key)) {
		json_decref(spec);
		return GEAK_DONE;
	}
	if (!s->up[GEAK_W_RUN]) {
		/* A miss under a stored greeting: start the worker, and key the
		 * result by what it says. */
		json_decref(spec);
		if (up_or_abort(s) < 0)
			return GEAK_ABORT;
		if (!(spec = task_spec(rec, s->gpu, s->w[GEAK_W_RUN].hello, msg, sizeof msg)))
			return geak_bad_field(rec, where, "%s", msg);
		eval_key(spec, sha, key);
	}
	r = evaluate(&cand, rec, spec, sha, key);
	json_decref(spec);
	return r;
}

/* ---- counts, for the progress line and the summary ---- */

static atomic_size_t n_pass, n_cached, n_no_code, n_already;

static int
process_counted(void *arg, json_t *rec, const char *where)
{
	int v = process(arg, rec, where);
	json_t *ev = json_object_get(rec, "eval");

	if (v == GEAK_DONE && json_is_true(json_object_get(ev, "exec")) &&
	    json_array_size(json_object_get(ev, "flags")) == 0)
		atomic_fetch_add(&n_pass, 1);
	if (v == GEAK_DONE && json_is_true(json_object_get(ev, "cached")))
		atomic_fetch_add(&n_cached, 1);
	if (v == GEAK_PASS)
		atomic_fetch_add(json_is_string(json_object_get(rec, "code")) ? &n_already : &n_no_code, 1);
	return v;
}

static void
tally(void *arg, const struct geak_pool_stats *st, struct geak_buf *b, int final)
{
	size_t none = atomic_load(&n_no_code), old = atomic_load(&n_already);

	(void)arg, (void)st;
	geak_buf_printf(b, ", %zu pass, %zu cached", atomic_load(&n_pass), atomic_load(&n_cached));
	if (final && none)
		geak_buf_printf(b, ", %zu passed through (no code)", none);
	if (final && old)
		geak_buf_printf(b, ", %zu passed through (evaluated already)", old);
}

static void
slot_end(void *arg)
{
	struct geak_slot *s = arg;

	for (int i = 0; i < GEAK_NWORKERS; i++)
		if (s->up[i]) {
			geak_worker_stop(&s->w[i]);
			s->up[i] = 0;
		}
}

/* ---- GPUs ---- */

static int check_mode; /* --check: say it there, not as a warning */
static char cpu_why[320] = "--cpu"; /* why the CPU mode, for --check */

/* Where the candidates would be evaluated, for --check. */
static char *
mode_line(void)
{
	struct geak_buf b = { 0 };

	if (!geak_eopt.ngpus) {
		geak_buf_printf(&b, "evaluating on: the CPU, under Triton's interpreter (%s): call "
		    "and exec only, no speedup", cpu_why);
		return geak_buf_steal(&b);
	}
	geak_buf_printf(&b, "evaluating on: GPU%s", geak_eopt.ngpus > 1 ? "s" : "");
	for (size_t i = 0; i < geak_eopt.ngpus; i++)
		geak_buf_printf(&b, "%s %s", i ? "," : "", geak_eopt.gpus[i]);
	geak_buf_printf(&b, " (%s)", geak_eopt.gpus_given ? "--gpus" : "found");
	return geak_buf_steal(&b);
}

static void
add_gpu(const char *g)
{
	geak_eopt.gpus = geak_xrealloc(geak_eopt.gpus, (geak_eopt.ngpus + 2) * sizeof *geak_eopt.gpus);
	geak_eopt.gpus[geak_eopt.ngpus++] = geak_xstrdup(g);
	geak_eopt.gpus[geak_eopt.ngpus] = NULL;
}

static void
gpus_auto(void)
{
	char err[256];
	json_t *list, *g;
	size_t i;

	if (geak_gpu_list(&list, err, sizeof err) < 0) {
		snprintf(cpu_why, sizeof cpu_why, "the GPUs cannot be listed: %s", err);
		if (!check_mode)
			geak_warn("cannot list GPUs: %s; evaluating on the CPU under Triton's "
			    "interpreter, call and exec only, no speedup", err);
		return;
	}
	if (json_array_size(list) == 0)
		snprintf(cpu_why, sizeof cpu_why, "no GPU found");
	if (json_array_size(list) == 0 && !check_mode)
		geak_warn("no GPU found (geak-eval --list-gpus): evaluating on the CPU under "
		    "Triton's interpreter, call and exec only, no speedup");
	/* The worker's environment replaces ours, so it is told physical
	 * numbers: index is the device behind our own *_VISIBLE_DEVICES. */
	json_array_foreach(list, i, g) {
		char num[32];
		json_t *idx = json_object_get(g, "index");
		if (!json_is_integer(idx))
			idx = json_object_get(g, "visible_index");
		snprintf(num, sizeof num, "%lld", (long long)(json_is_integer(idx) ? json_integer_value(idx) : (json_int_t)i));
		add_gpu(num);
		if (!geak_eopt.vendor && json_is_string(json_object_get(g, "vendor")))
			geak_eopt.vendor = geak_xstrdup(json_string_value(json_object_get(g, "vendor")));
	}
	json_decref(list);
}

/* The vendor of the machine's GPUs, for the right visibility mask. */
static void
gpu_vendor(void)
{
	char err[256];
	json_t *list;

	if (geak_eopt.vendor || geak_gpu_list(&list, err, sizeof err) < 0)
		return;
	if (json_is_string(geak_get(json_array_get(list, 0), "vendor")))
		geak_eopt.vendor = geak_xstrdup(geak_get_str(json_array_get(list, 0), "vendor"));
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
	    "usage: %s [-j N] [-g LIST|auto | --cpu] [--cache DIR | --no-cache] [--timeout S]\n"
	    "       [--compile-timeout S] [--seeds N] [--reps N] [--perf-cases N]\n"
	    "       [--speedup-limit X] [--allow-torch-ops] [--no-perf]\n"
	    "       [--profile] [--ncu PATH|off] [--static strict|warn|off] [--python PATH]\n"
	    "       [--harness DIR] [--tmpdir DIR]\n"
	    "       [--file-limit MIB] [--memory-limit MIB] [--max-task-timeout S]\n"
	    "       [--max-task-memory MIB] [--proc-limit N] [--shard K/N] [--keep]\n"
	    "       [--export-calibration FILE] [--import-calibration FILE]\n"
	    "       [-u] [-v] [file ...]\n"
	    "       %s --check [-g LIST | --cpu] [--python PATH]\n"
	    "       %s --list-gpus\n"
	    "Evaluate candidate records: call, correctness against the reference, speedup.\n"
	    "  -j, --jobs N            candidates at once (default: one per GPU, or 1)\n"
	    "  -g, --gpus LIST|auto    the GPUs, by index or UUID (default auto: all found;\n"
	    "                          none found: the CPU)\n"
	    "      --cpu               Triton's interpreter on the CPU: call and exec only\n"
	    "      --cache DIR         the evaluation cache (default ~/.cache/geak)\n"
	    "      --no-cache          neither read nor write the cache\n"
	    "      --timeout S         seconds a job may run after its first call (default\n"
	    "                          120, or the task's own timeout when not given)\n"
	    "      --max-task-timeout S  the most a task's own timeout may be (default 900)\n"
	    "      --compile-timeout S seconds until the first call returns (default 300)\n"
	    "      --seeds N           seeds per correctness check (default 3)\n"
	    "      --reps N            timed calls per case and side, at most (default 20)\n"
	    "      --perf-cases N      of a task's performance cases, check and time N spread\n"
	    "                          over them, 0: all (default 64)\n"
	    "      --speedup-limit X   flag speedups above X (default: none)\n"
	    "      --allow-torch-ops   allow torch operations outside the candidate's kernels\n"
	    "      --no-perf           correctness only: no performance cases, no speedup\n"
	    "      --profile           break the largest timed case down by kernel (torch's\n"
	    "                          profiler, after it is timed), with hardware counters\n"
	    "                          where ncu is found\n"
	    "      --ncu PATH|off      the ncu that reads them (default: ncu in PATH, else\n"
	    "                          /usr/local/cuda/bin/ncu); off: none\n"
	    "      --static MODE       strict (reject cheats, default), warn or off\n"
	    "      --python PATH       the harness's Python (default $GEAK_PYTHON, the build\n"
	    "                          tree's .venv, the one make install found, python3)\n"
	    "      --harness DIR       the harness to use instead of the installed one\n"
	    "      --tmpdir DIR        where the run's folder goes (default $TMPDIR or /tmp)\n"
	    "      --file-limit MIB    the largest file a job may write (default 32768)\n"
	    "      --memory-limit MIB  the memory a job may use, 0: no limit (default three\n"
	    "                          quarters of the host's over -j, at least 2048; a job\n"
	    "                          killed there runs once more with what the host has;\n"
	    "                          when not given, the task's own memory_mib)\n"
	    "      --max-task-memory MIB  the most a task's own memory may be (default half\n"
	    "                          the host's)\n"
	    "      --proc-limit N      processes and threads a job may have, 0: no limit\n"
	    "                          (default 256)\n"
	    "      --shard K/N         only the input's records numbered K modulo N (from 0)\n"
	    "      --keep              keep the run's folder (jobs, outputs, logs)\n"
	    "      --export-calibration FILE  after the run, write the calibrations of the\n"
	    "                          tasks read to FILE (a tar.gz; needs libarchive)\n"
	    "      --import-calibration FILE  first load the calibrations in FILE into the\n"
	    "                          cache (those of another device or harness refused);\n"
	    "                          with no file operand, import only\n"
	    "  -u, --unordered         write each record when it is done, not in input order\n"
	    "  -v, --verbose           trace every job on stderr\n"
	    "      --check             say which Python, torch, Triton and GPUs the harness\n"
	    "                          would use, start it, and exit: 0 works, 1 does not\n"
	    "      --list-gpus         print the GPUs as JSON and exit\n"
	    "  -h, --help              this help\n"
	    "      --version           print the version\n",
	    geak_prog, geak_prog, geak_prog);
}

/* --shard K/N: of the input's records, those numbered K modulo N. */
static long shard_k, shard_n;

static void
parse_shard(const char *arg)
{
	char *end, *nend;
	long k, n;

	errno = 0;
	k = strtol(arg, &end, 10);
	if (end == arg || *end != '/' || errno)
		geak_die(GEAK_EXIT_USAGE, "--shard: '%s' is not K/N", arg);
	n = strtol(end + 1, &nend, 10);
	if (nend == end + 1 || *nend || errno || n < 1 || n > 1000000 || k < 0 || k >= n)
		geak_die(GEAK_EXIT_USAGE, "--shard: want K/N with 0 <= K < N <= 1000000, not '%s'", arg);
	shard_k = k;
	shard_n = n;
}

/* --ncu: off, or the program found for it (NULL: look for one). */
static int ncu_off;
static char *ncu_given;

enum { O_CACHE = 256, O_NOCACHE, O_TIMEOUT, O_COMPILE, O_SEEDS, O_REPS, O_CASES, O_LIMIT,
	O_PYTHON, O_HARNESS, O_TMP, O_KEEP, O_LIST, O_VERSION, O_CPU, O_NOPERF, O_STATIC, O_FILES,
	O_CHECK, O_MEMORY, O_PROCS, O_PROFILE, O_NCU, O_SHARD, O_MAXTIME, O_MAXMEM, O_TORCHOPS,
	O_EXPORT, O_IMPORT };

static void
parse_args(int argc, char **argv, const char **harness_dir)
{
	const char *gpus_arg = NULL, *ncu_arg = NULL;
	static const struct option longs[] = {
		{ "jobs", required_argument, NULL, 'j' }, { "gpus", required_argument, NULL, 'g' },
		{ "cache", required_argument, NULL, O_CACHE }, { "no-cache", no_argument, NULL, O_NOCACHE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "compile-timeout", required_argument, NULL, O_COMPILE },
		{ "seeds", required_argument, NULL, O_SEEDS }, { "reps", required_argument, NULL, O_REPS },
		{ "perf-cases", required_argument, NULL, O_CASES },
		{ "speedup-limit", required_argument, NULL, O_LIMIT },
		{ "allow-torch-ops", no_argument, NULL, O_TORCHOPS },
		{ "no-perf", no_argument, NULL, O_NOPERF }, { "unordered", no_argument, NULL, 'u' },
		{ "profile", no_argument, NULL, O_PROFILE }, { "ncu", required_argument, NULL, O_NCU },
		{ "verbose", no_argument, NULL, 'v' },
		{ "static", required_argument, NULL, O_STATIC },
		{ "python", required_argument, NULL, O_PYTHON }, { "harness", required_argument, NULL, O_HARNESS },
		{ "tmpdir", required_argument, NULL, O_TMP }, { "keep", no_argument, NULL, O_KEEP },
		{ "check", no_argument, NULL, O_CHECK },
		{ "file-limit", required_argument, NULL, O_FILES },
		{ "memory-limit", required_argument, NULL, O_MEMORY },
		{ "max-task-timeout", required_argument, NULL, O_MAXTIME },
		{ "max-task-memory", required_argument, NULL, O_MAXMEM },
		{ "proc-limit", required_argument, NULL, O_PROCS },
		{ "shard", required_argument, NULL, O_SHARD },
		{ "export-calibration", required_argument, NULL, O_EXPORT },
		{ "import-calibration", required_argument, NULL, O_IMPORT },
		{ "list-gpus", no_argument, NULL, O_LIST }, { "cpu", no_argument, NULL, O_CPU }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION }, { NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "hj:g:uv", longs, NULL)) != -1) {
		switch (c) {
		case 'j': geak_eopt.jobs = geak_parse_long(optarg, "-j", 1, 256); break;
		case 'g': gpus_arg = optarg; break;
		case O_CPU: geak_eopt.cpu = 1; break;
		case O_CACHE: free(geak_eopt.cache_dir); geak_eopt.cache_dir = geak_xstrdup(optarg); break;
		case O_NOCACHE: geak_eopt.no_cache = 1; break;
		case O_TIMEOUT:
			geak_eopt.timeout_s = geak_parse_double(optarg, "--timeout", 1, 86400);
			geak_eopt.timeout_given = 1;
			break;
		case O_MAXTIME:
			geak_eopt.max_task_timeout_s = geak_parse_double(optarg, "--max-task-timeout", 1, 86400);
			break;
		case O_MAXMEM:
			geak_eopt.max_task_memory_mib = geak_parse_long(optarg, "--max-task-memory", 1, 1L << 30);
			break;
		case O_COMPILE: geak_eopt.compile_s = geak_parse_double(optarg, "--compile-timeout", 1, 86400); break;
		case O_SEEDS: geak_eopt.seeds = geak_parse_long(optarg, "--seeds", 1, 100); break;
		case O_REPS: geak_eopt.reps = geak_parse_long(optarg, "--reps", 3, 100000); break;
		case O_CASES: geak_eopt.perf_cases = geak_parse_long(optarg, "--perf-cases", 0, 1000000); break;
		case O_NOPERF: geak_eopt.no_perf = 1; break;
		case O_PROFILE: geak_eopt.profile = 1; break;
		case O_NCU: ncu_arg = optarg; break;
		case 'u': geak_eopt.unordered = 1; break;
		case 'v': geak_eopt.verbose = 1; break;
		case O_STATIC:
			if (strcmp(optarg, "strict") && strcmp(optarg, "warn") && strcmp(optarg, "off"))
				geak_die(GEAK_EXIT_USAGE, "--static: '%s' is not strict, warn or off", optarg);
			geak_eopt.static_mode = optarg;
			break;
		case O_LIMIT: geak_eopt.speedup_limit = geak_parse_double(optarg, "--speedup-limit", 1, 1e9); break;
		case O_TORCHOPS: geak_eopt.allow_torch_ops = 1; break;
		case O_PYTHON: geak_eopt.python = optarg; break;
		case O_HARNESS: *harness_dir = optarg; break;
		case O_TMP: geak_eopt.tmp_parent = optarg; break;
		case O_FILES: geak_eopt.file_limit_mib = geak_parse_long(optarg, "--file-limit", 1, 1L << 24); break;
		case O_MEMORY:
			geak_eopt.memory_mib = geak_parse_long(optarg, "--memory-limit", 0, 1L << 30);
			geak_eopt.memory_given = 1;
			break;
		case O_PROCS: geak_eopt.proc_limit = geak_parse_long(optarg, "--proc-limit", 0, 1L << 22); break;
		case O_KEEP: geak_eopt.keep = 1; break;
		case O_SHARD: parse_shard(optarg); break;
		case O_EXPORT: geak_eopt.export_path = optarg; break;
		case O_IMPORT: geak_eopt.import_path = optarg; break;
		case O_CHECK: check_mode = 1; break;
		case O_LIST: exit(list_gpus());
		case 'h': usage(stdout); exit(geak_fshut(stdout, "stdout") < 0 ? GEAK_EXIT_FATAL : 0);
		case O_VERSION: geak_print_version(); exit(0);
		default: usage(stderr); exit(GEAK_EXIT_USAGE);
		}
	}
	if (ncu_arg && !strcmp(ncu_arg, "off"))
		ncu_off = 1;
	else if (ncu_arg && !(ncu_given = geak_which(ncu_arg)))
		geak_die(GEAK_EXIT_USAGE, "--ncu: %s is not an executable", ncu_arg);
	/* After the loop: --check changes what finding GPUs says. */
	if (gpus_arg) {
		parse_gpus(gpus_arg);
		geak_eopt.gpus_given = 1;
	}
}

/* A job's memory by default: an even share of three quarters of the
 * host's, at least 2 GiB: enough for any honest job, not enough for one
 * to take the host. */
static long
default_memory_mib(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	long long mib = pages > 0 && page > 0 ? (long long)pages * page / 4 * 3 / geak_eopt.jobs >> 20 : 0;

	return mib > 2048 ? (long)mib : 2048;
}

/* The most a task may ask for by default: half the host's memory, what
 * a job run again with the host's headroom may take at most. */
static long
default_max_task_memory_mib(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	long long mib = pages > 0 && page > 0 ? (long long)pages * page / 2 >> 20 : 0;

	return mib > 2048 ? (long)mib : 2048;
}

static char *
absolute(const char *path)
{
	char *abs = realpath(path, NULL);

	if (!abs)
		geak_die(GEAK_EXIT_FATAL, "%s:", path);
	return abs;
}

/* --profile on a GPU: the profiler of hardware counters, or why none. */
static void
find_ncu(void)
{
	char *found;

	if (ncu_off) {
		geak_eopt.counters_why = geak_xstrdup("no hardware counters: --ncu off");
		return;
	}
	if (geak_eopt.vendor && !strcmp(geak_eopt.vendor, "amd")) {
		geak_eopt.counters_why = geak_xstrdup("no hardware counters: reading AMD's "
		    "(rocprofv3) is not built");
		return;
	}
	found = ncu_given ? geak_xstrdup(ncu_given) : geak_which("ncu");
	if (!found && access("/usr/local/cuda/bin/ncu", X_OK) == 0)
		found = geak_xstrdup("/usr/local/cuda/bin/ncu");
	if (!found) {
		geak_eopt.counters_why = geak_xstrdup("no hardware counters: no ncu in PATH or "
		    "/usr/local/cuda/bin (--ncu PATH)");
		return;
	}
	/* The jobs run it from elsewhere, and see its files through a view. */
	geak_eopt.ncu = absolute(found);
	free(found);
}

/* --check: what --profile would read the hardware counters with. */
static void
say_counters(void)
{
	if (!geak_eopt.ncu && !geak_eopt.counters_why)
		find_ncu();
	if (geak_eopt.ncu)
		printf("counters (--profile): ncu %s\n", geak_eopt.ncu);
	else
		printf("counters (--profile): none (%s)\n", geak_eopt.counters_why);
}

/* A run that ends by an error leaves no run directory either; only this
 * process removes it, not a child that exits. */
static pid_t scratch_owner;

static void
remove_scratch(void)
{
	if (getpid() == scratch_owner && geak_eopt.scratch && !geak_eopt.keep)
		geak_rmtree(geak_eopt.scratch);
}

static void
setup(const char *harness_dir)
{
	char *jobs;

	geak_pyenv_find(&pyenv, geak_eopt.python);
	geak_eopt.python = pyenv.python;
	if (!harness_dir)
		harness_dir = getenv("GEAK_HARNESS");
	geak_eopt.harness = harness_dir && *harness_dir ? geak_xasprintf("%s/geak_worker.py", harness_dir)
	    : geak_share_path(NULL, "harness", "geak_worker.py");
	if (access(geak_eopt.harness, R_OK) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s:", geak_eopt.harness);
	/* The worker runs in a folder of its own: its script's path is
	 * absolute, and said without detours. */
	char *script = absolute(geak_eopt.harness);
	free(geak_eopt.harness);
	geak_eopt.harness = script;
	if (!geak_eopt.cache_dir)
		geak_eopt.cache_dir = geak_cache_default_dir();
	if (geak_eopt.cpu) {
		for (size_t i = 0; i < geak_eopt.ngpus; i++)
			free(geak_eopt.gpus[i]);
		geak_eopt.ngpus = 0;
	} else if (!geak_eopt.gpus_given) {
		gpus_auto();
	}
	if (!geak_eopt.jobs)
		geak_eopt.jobs = geak_eopt.ngpus ? (long)geak_eopt.ngpus : 1;
	if (geak_eopt.memory_mib < 0)
		geak_eopt.memory_mib = default_memory_mib();
	if (geak_eopt.max_task_memory_mib <= 0)
		geak_eopt.max_task_memory_mib = default_max_task_memory_mib();
	if (!(geak_eopt.scratch = geak_mkworkdir(geak_eopt.tmp_parent, "geak-eval-")))
		geak_die(GEAK_EXIT_FATAL, "cannot make a work directory:");
	char *abs = absolute(geak_eopt.scratch);
	free(geak_eopt.scratch);
	geak_eopt.scratch = abs;
	scratch_owner = getpid();
	if (atexit(remove_scratch) != 0)
		geak_die(GEAK_EXIT_FATAL, "atexit: cannot register the run directory's removal");
	/* Named ours, so that a later run removes it if we are killed;
	 * then the folders of runs killed before go. */
	if (geak_workdir_claim(geak_eopt.scratch) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s: cannot mark it as this run's:", geak_eopt.scratch);
	geak_workdir_sweep(geak_eopt.tmp_parent, "geak-eval-");
	jobs = geak_xasprintf("%s/jobs", geak_eopt.scratch);
	if (mkdir(jobs, 0700) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s:", jobs);
	free(jobs);
	if (geak_eopt.no_cache) {
		free(geak_eopt.cache_dir);
		geak_eopt.cache_dir = geak_xasprintf("%s/cache", geak_eopt.scratch);
	}
	if (geak_mkdirs(geak_eopt.cache_dir, 0700) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s:", geak_eopt.cache_dir);
	/* The worker runs elsewhere: every path it sees is absolute. */
	abs = absolute(geak_eopt.cache_dir);
	free(geak_eopt.cache_dir);
	geak_eopt.cache_dir = abs;
	geak_eopt.triton_cache = geak_xasprintf("%s/triton", geak_eopt.cache_dir);
	geak_eopt.lockdir = geak_gpulock_dir();
	/* --check says what --profile would read the counters with, and
	 * starts the worker as --profile would. */
	if ((geak_eopt.profile || check_mode) && geak_eopt.ngpus)
		find_ncu();
}

/* Seconds a run that waits for GPU memory holds new runs back. */
#define HOLD_S 60

/* What the job layer is told of the options, once setup has settled
 * them: the same for every slot, and read only there. */
static struct geak_evalcfg
job_config(const char *const *write_dirs)
{
	const struct evalopts *o = &geak_eopt;

	return (struct geak_evalcfg){
		.jobs = o->jobs, .ngpus = o->ngpus, .vendor = o->vendor, .timeout_s = o->timeout_s,
		.compile_s = o->compile_s, .timeout_given = o->timeout_given,
		.max_task_timeout_s = o->max_task_timeout_s,
		.max_task_memory_mib = o->max_task_memory_mib, .cache_dir = o->cache_dir,
		.no_cache = o->no_cache, .keep = o->keep, .no_perf = o->no_perf, .verbose = o->verbose,
		.profile = o->profile, .ncu = o->ncu, .counters_why = o->counters_why,
		.static_mode = o->static_mode, .reps = o->reps, .file_limit_mib = o->file_limit_mib,
		.memory_mib = o->memory_mib, .proc_limit = o->proc_limit,
		.memory_given = o->memory_given, .speedup_limit = o->speedup_limit,
		.python = o->python, .harness = o->harness, .scratch = o->scratch,
		.triton_cache = o->triton_cache, .lockdir = o->lockdir, .write_dirs = write_dirs,
		.started = o->started,
	};
}

/* One queue per GPU (at least one, unused in the CPU mode). */
static struct geak_gpuqueue *
make_queues(void)
{
	struct geak_gpuqueue *queues = geak_xcalloc(geak_eopt.ngpus ? geak_eopt.ngpus : 1,
	    sizeof *queues);

	for (size_t i = 0; i < geak_eopt.ngpus; i++) {
		geak_gpuqueue_init(&queues[i], geak_eopt.lockdir, geak_eopt.gpus[i]);
		/* Most runs end within a minute: a run that waits for memory
		 * holds new ones back that long, not until a calibration of
		 * minutes ends; after that it runs when there is room. */
		queues[i].drain_hold_s = HOLD_S;
	}
	return queues;
}

/* The slots, each with a home of its own, taking the GPUs in turn; slotp
 * gets a pointer to each. */
static struct geak_slot *
make_slots(const struct geak_evalcfg *cfg, struct geak_gpuqueue *queues, void **slotp)
{
	struct geak_slot *slots = geak_xcalloc((size_t)geak_eopt.jobs, sizeof *slots);

	for (long i = 0; i < geak_eopt.jobs; i++) {
		char *home = geak_xasprintf("%s/home%ld", geak_eopt.scratch, i);
		if (mkdir(home, 0700) < 0)
			geak_die(GEAK_EXIT_FATAL, "%s:", home);
		geak_slot_init(&slots[i], cfg, (int)i,
		    geak_eopt.ngpus ? geak_eopt.gpus[i % (long)geak_eopt.ngpus] : NULL,
		    geak_eopt.ngpus ? &queues[i % (long)geak_eopt.ngpus] : NULL, home);
		free(home);
		slotp[i] = &slots[i];
	}
	return slots;
}

int
main(int argc, char **argv)
{
	const char *harness_dir = NULL;
	struct geak_gpuqueue *queues;
	struct geak_slot *slots;
	void **slotp;
	int status;

	/* Before anything can read them: the credentials we were started with
	 * leave the environment (and what /proc/PID/environ shows), and our
	 * memory is closed to processes of our uid. */
	geak_secrets_take();
	prctl(PR_SET_DUMPABLE, 0);
	geak_setprog(argv[0]);
	/* GPU discovery below starts the runtime's threads. */
	geak_cleanup_block();
	geak_eopt = (struct evalopts){
		.timeout_s = 120, .compile_s = 300, .seeds = 3, .reps = 20, .perf_cases = 64, .file_limit_mib = 32768,
		.memory_mib = -1, .max_task_timeout_s = 900, .proc_limit = 256, .speedup_limit = 0,
		.static_mode = "strict",
		.started = geak_now(),
	};
	/* Jobs run as a uid of their own and must reach the folders made for
	 * them: their modes are geak-eval's to set, not the caller's umask.
	 * What is private stays so by its parent folder's mode. */
	umask(022);
	parse_args(argc, argv, &harness_dir);
	setup(harness_dir);
	geak_cgroup_init();
	geak_cleanup_on_signals(geak_eopt.keep ? NULL : geak_eopt.scratch);
	const char *mps = getenv("CUDA_MPS_PIPE_DIRECTORY");
	const char *write_dirs[] = { geak_eopt.scratch, geak_eopt.cache_dir, "/dev",
		mps && *mps ? mps : NULL, NULL };
	const struct geak_evalcfg cfg = job_config(write_dirs);
	queues = make_queues();
	slotp = geak_xcalloc((size_t)geak_eopt.jobs, sizeof *slotp);
	slots = make_slots(&cfg, queues, slotp);
	struct geak_pool pool = {
		.paths = argv + optind, .npaths = argc - optind, .nslots = geak_eopt.jobs,
		.unordered = geak_eopt.unordered, .slots = slotp, .fn = process_counted,
		.slot_end = slot_end, .noun = "evaluated", .tally = tally,
		.shard = shard_k, .shards = shard_n,
	};
	if (check_mode) {
		char *mode = mode_line();
		status = geak_eval_check(&slots[0], &pyenv, mode, say_counters);
		free(mode);
		if (geak_fshut(stdout, "stdout") < 0)
			status = GEAK_EXIT_FATAL;
	} else {
		status = geak_calib_run(&slots[0], &pool, geak_eopt.export_path, geak_eopt.import_path);
	}
	geak_cleanup_begin();
	for (long i = 0; i < geak_eopt.jobs; i++)
		geak_slot_fini(&slots[i]);
	geak_profiles_free();
	geak_cgroup_fini();
	if (!geak_eopt.keep)
		geak_rmtree(geak_eopt.scratch);
	geak_cleanup_end();
	free(slots), free(slotp), free(queues);
	free(geak_eopt.scratch), free(geak_eopt.lockdir), free(geak_eopt.triton_cache);
	geak_eopt.scratch = NULL;
	free(geak_eopt.ncu), free(geak_eopt.counters_why), free(ncu_given);
	geak_pyenv_free(&pyenv);
	return status;
}
