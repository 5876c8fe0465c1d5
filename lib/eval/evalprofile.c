/* evalprofile.c: the tasks' reference profiles. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "eval/evalcache.h"
#include "eval/evalregen.h"
#include "eval/evalprofile.h"
#include "eval/harness.h"
#include "record.h"
#include "runner.h"
#include "util.h"


struct geak_profile {
	char key[65];
	char *dir;
	json_t *profile;          /* profile.json */
	char *error;              /* the reference cannot be calibrated: why */
	json_t *refspec;
	int busy;                 /* a slot is calibrating it */
	int ready;
	pthread_cond_t cv;
	struct geak_profile *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct geak_profile *profiles;

const char *
geak_profile_error(const struct geak_profile *p)
{
	return p->error;
}

const char *
geak_profile_dir(const struct geak_profile *p)
{
	return p->dir;
}

json_t *
geak_profile_json(const struct geak_profile *p)
{
	return p->profile;
}

json_t *
geak_profile_steps(const struct geak_profile *p)
{
	json_t *steps = json_object_get(p->profile, GEAK_PROF_STEPS);

	return json_is_object(steps) ? steps : NULL;
}

/* The steps of the calibration in dir in the trace, one line: each
 * process's seconds and the named steps of them that took any, then the
 * steps of its own. */
static void
trace_steps(const struct geak_cand *c, const char *dir, json_t *prof)
{
	static const char *const parts[] = { "mem_wait", "tests", "perf_checks", "search",
		"compile", "save", "load", "take", NULL };
	json_t *steps = json_object_get(prof, GEAK_PROF_STEPS), *v;
	const char *name;
	char line[2048] = "";
	size_t n = 0;

	if (!json_is_object(steps))
		return;
	json_object_foreach(steps, name, v) {
		if (n >= sizeof line - 1)
			break;
		if (json_is_number(v)) {
			n += (size_t)snprintf(line + n, sizeof line - n, " %s %.1f", name,
			    json_number_value(v));
			continue;
		}
		n += (size_t)snprintf(line + n, sizeof line - n, " %s %.1f (", name,
		    json_number_value(json_object_get(v, GEAK_STEP_WALL)));
		for (const char *const *p = parts; *p && n < sizeof line - 1; p++) {
			double x = json_number_value(json_object_get(v, *p));
			if (x >= 0.05)
				n += (size_t)snprintf(line + n, sizeof line - n, "%s %.1f, ", *p, x);
		}
		if (n < sizeof line - 1)
			n += (size_t)snprintf(line + n, sizeof line - n, "runs %lld)",
			    json_integer_value(json_object_get(v, GEAK_STEP_RUNS)));
	}
	geak_trace(c, "%s: steps (s):%s", strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir, line);
}

long
geak_profile_gpu_mib(const struct geak_profile *p)
{
	json_t *mib = json_object_get(p->profile, GEAK_PROF_GPU_MIB);

	return json_is_integer(mib) && json_integer_value(mib) > 0 ? (long)json_integer_value(mib) : 0;
}

json_t *
geak_profile_plan(const struct geak_profile *p)
{
	json_t *plan = json_object_get(p->profile, GEAK_PROF_CANDIDATE_PLAN);

	return plan ? geak_json_copy(plan) : json_object();
}

static struct geak_profile *
find_or_add(const char *key, json_t *refspec)
{
	struct geak_profile *p;

	for (p = profiles; p; p = p->next)
		if (!strcmp(p->key, key))
			return p;
	p = geak_xcalloc(1, sizeof *p);
	snprintf(p->key, sizeof p->key, "%s", key);
	p->refspec = json_incref(refspec);
	pthread_cond_init(&p->cv, NULL);
	p->next = profiles;
	profiles = p;
	return p;
}

/* The profile in dir: 0 when there is one (ok or failed), -1 when none. */
static int
read_profile(struct geak_profile *p, const char *dir)
{
	json_t *prof = geak_job_load(dir, GEAK_FILE_PROFILE, NULL, 0);

	if (!json_is_object(prof)) {
		json_decref(prof);
		return -1;
	}
	p->profile = prof;
	p->dir = geak_xstrdup(dir);
	if (!json_is_true(json_object_get(prof, GEAK_PROF_OK))) {
		const char *why = json_string_value(json_object_get(prof, GEAK_PROF_ERROR));
		p->error = geak_xstrdup(why ? why : "the reference could not be calibrated");
	}
	return 0;
}

/* A failed calibration is kept on disk only where the reference itself
 * fails: a timeout or a crash may not come again. */
static int
keepable(json_t *prof)
{
	const char *kind = json_string_value(json_object_get(prof, GEAK_PROF_KIND));

	return json_is_true(json_object_get(prof, GEAK_PROF_OK)) || (kind && !strcmp(kind, "reference"));
}

/* What of a calibration's folder makes the profile: its job wrote there,
 * and may have left anything else beside them. */
static const char *const profile_files[] = { GEAK_FILE_PROFILE, GEAK_FILE_PROFILE_PT,
	GEAK_FILE_MASKS, NULL };

/* name copied from the job's folder from to the folder to (ours), if it
 * is at most cap bytes; 0, or -1 with err set.  One the job did not leave
 * is not copied. */
static int
copy_out(const char *from, const char *name, const char *to, unsigned long long cap, char *err,
    size_t errlen)
{
	char *path = geak_xasprintf("%s/%s", to, name);
	int e = geak_job_copy(from, name, path, cap);

	free(path);
	if (e && e != ENOENT)
		snprintf(err, errlen, "the reference's %s cannot be kept: %s", name, geak_untrusted_why(e));
	return e && e != ENOENT ? -1 : 0;
}

/* The profile in the calibration's folder tmp, copied to base/KEY; 0, or
 * -1 with err set.  Two evaluators may calibrate one task at once:
 * either profile is good, and the one kept first is taken. */
static int
keep_profile(const struct geak_evalcfg *cfg, struct geak_profile *p, const char *tmp,
    const char *base, char *err, size_t errlen)
{
	unsigned long long cap = (unsigned long long)cfg->file_limit_mib << 20;
	char *out = geak_mkdirs(base, 0700) < 0 ? NULL : geak_mkworkdir(base, "profile-");
	char *dir = geak_xasprintf("%s/%s", base, p->key);
	int r = 0;

	if (!out) {
		snprintf(err, errlen, "cannot make a directory in %s: %s", base, strerror(errno));
		free(dir);
		return -1;
	}
	for (const char *const *f = profile_files; *f && r == 0; f++)
		r = copy_out(tmp, *f, out, cap, err, errlen);
	/* The spec beside it: what an exported profile is checked by. */
	if (r == 0)
		geak_job_dump(p->refspec, out, GEAK_FILE_SPEC);
	if (r == 0 && rename(out, dir) == 0)
		*out = '\0';
	if (*out)
		geak_rmtree(out);
	if (r == 0 && read_profile(p, dir) < 0) {
		snprintf(err, errlen, "the reference's profile in %s cannot be read", dir);
		r = -1;
	}
	free(out), free(dir);
	return r;
}

/* The reference calibrated in a folder of the run's own, thrown away
 * after: only the profile's files leave it. */
static int
calibrate(struct geak_cand *c, struct geak_profile *p, const char *base, char *err, size_t errlen)
{
	const struct geak_evalcfg *cfg = c->slot->cfg;
	char *tmp = geak_job_dir(cfg, "calibrate-"), nonce[33];
	struct geak_jobreq job = { .op = GEAK_OP_CALIBRATE, .dir = tmp, .nonce = nonce, .err = err,
		.errlen = errlen };
	json_t *prof;
	struct geak_budget b = geak_budget(c);
	int r = 0;

	geak_job_dump(p->refspec, tmp, GEAK_FILE_JOB);
	geak_nonce(nonce);
	job.extra = json_pack("{s:f, s:O, s:f, s:f}", GEAK_REQ_RUN_BUDGET, b.calib_run_s, GEAK_REQ_PERF,
	    json_object_get(p->refspec, GEAK_JOB_PERF_CHECKED), GEAK_REQ_TIMEOUT, b.calib_s,
	    GEAK_REQ_COMPILE, b.compile_s);
	prof = geak_job_answer(c, GEAK_W_RUN, GEAK_GPU_SHARED, &job, GEAK_FILE_PROFILE,
	    "the reference's calibration wrote no profile");
	json_decref(job.extra);
	if (!prof) {
		r = -1;
	} else if (keepable(prof)) {
		trace_steps(c, tmp, prof);
		r = keep_profile(cfg, p, tmp, base, err, errlen);
	} else {
		/* Not kept: a failure that may not come again, known to this run. */
		const char *msg = json_string_value(json_object_get(prof, GEAK_PROF_ERROR));
		p->error = geak_xstrdup(msg ? msg : "the reference could not be calibrated");
		p->profile = json_incref(prof);
	}
	json_decref(prof);
	geak_job_drop(cfg, tmp);
	return r;
}

/* The outputs of an imported profile made again (geak-eval
 * --import-calibration); 0, or -1 when they cannot be, and the profile
 * is put aside for a calibration of this machine's own. */
static int
regenerate(struct geak_cand *c, struct geak_profile *p, const char *base, const char *dir)
{
	char why[1024];
	double t0 = geak_now();

	geak_trace(c, "regenerating the reference's outputs (an imported profile)");
	if (geak_calib_regenerate(c, p->refspec, dir, why, sizeof why) == 0) {
		geak_trace(c, "regenerated the reference's outputs in %.1f s", geak_now() - t0);
		return 0;
	}
	geak_warn("%s: the imported profile of the reference does not hold here: %s; "
	    "calibrating it", c->where ? c->where : "geak-eval", why);
	geak_calib_discard(base, p->key);
	json_decref(p->profile);
	free(p->dir), free(p->error);
	p->profile = NULL, p->dir = NULL, p->error = NULL;
	return -1;
}

void
geak_profile_each(void (*fn)(void *arg, const char *key, json_t *refspec, const char *dir),
    void *arg)
{
	pthread_mutex_lock(&mu);
	for (struct geak_profile *p = profiles; p; p = p->next)
		if (p->ready && p->dir && p->profile)
			fn(arg, p->key, p->refspec, p->dir);
	pthread_mutex_unlock(&mu);
}

struct geak_profile *
geak_profile_get(struct geak_cand *c, json_t *refspec, double *seconds, char *err, size_t errlen)
{
	const struct geak_evalcfg *cfg = c->slot->cfg;
	char key[65], *base, *dir;
	struct geak_profile *p;
	int r = 0, worked = 0;
	double t0 = geak_now();

	geak_cache_key(refspec, key);
	pthread_mutex_lock(&mu);
	p = find_or_add(key, refspec);
	while (p->busy)
		pthread_cond_wait(&p->cv, &mu);
	if (p->ready) {
		pthread_mutex_unlock(&mu);
		return p;
	}
	p->busy = 1;
	pthread_mutex_unlock(&mu);
	base = cfg->no_cache ? geak_xasprintf("%s/profile", cfg->scratch)
	    : geak_xasprintf("%s/profile", cfg->cache_dir);
	dir = geak_xasprintf("%s/%s", base, key);
	if (read_profile(p, dir) == 0 && geak_calib_wants_outputs(p->profile, dir)) {
		regenerate(c, p, base, dir);
		worked = 1;
	}
	if (!p->profile) {
		geak_trace(c, "calibrating the reference");
		r = calibrate(c, p, base, err, errlen);
		worked = 1;
	}
	if (worked)
		*seconds += geak_now() - t0;
	free(dir);
	free(base);
	pthread_mutex_lock(&mu);
	p->busy = 0;
	p->ready = r == 0;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&mu);
	return r == 0 ? p : NULL;
}

/* ---- the reference's autotuner choices ---- */

json_t *
geak_profile_pins(const struct geak_profile *p)
{
	json_t *pins = p->dir ? geak_job_load(p->dir, "pins.json", NULL, 0) : NULL;

	if (!json_is_object(pins)) {
		json_decref(pins);
		return NULL;
	}
	return pins;
}

void
geak_profile_keep_pins(const struct geak_profile *p, json_t *timing)
{
	json_t *pins, *c, *x, *old = p->dir ? geak_profile_pins(p) : NULL;
	size_t i;
	char *tmp, *path;

	if (!p->dir || old) {
		json_decref(old);
		return;
	}
	pins = json_object();
	json_array_foreach(json_object_get(timing, GEAK_TIMING_CASES), i, c) {
		const char *key = geak_get_str(c, GEAK_CASE_KEY);
		x = json_object_get(c, GEAK_CASE_REF_CHOICES);
		if (key && json_is_array(x) && json_array_size(x))
			json_object_set(pins, key, x);
	}
	tmp = geak_xasprintf("%s/pins.json.%ld.tmp", p->dir, (long)getpid());
	path = geak_xasprintf("%s/pins.json", p->dir);
	if (json_object_size(pins) && json_dump_file(pins, tmp, JSON_COMPACT) == 0)
		rename(tmp, path);
	unlink(tmp);
	free(tmp), free(path);
	json_decref(pins);
}

void
geak_profiles_free(void)
{
	while (profiles) {
		struct geak_profile *p = profiles;
		profiles = p->next;
		free(p->dir);
		free(p->error);
		json_decref(p->profile);
		json_decref(p->refspec);
		pthread_cond_destroy(&p->cv);
		free(p);
	}
}
