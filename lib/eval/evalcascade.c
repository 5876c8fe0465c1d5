/* evalcascade.c: the path every candidate takes (see geak-eval(1)). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/evalcascade.h"
#include "eval/evalprofile.h"
#include "eval/harness.h"
#include "report/metrics.h"
#include "roofline.h"
#include "record.h"
#include "util.h"

#define TAIL_BYTES 2000

/* Seconds since a time, less the candidate's waits for the GPU since
 * then (they are lock_wait's). */
static void
add_phase(struct geak_eval *ev, enum geak_phase ph, double since, const struct geak_cand *c,
    double waited_before)
{
	ev->phases[ph] += geak_now() - since - (c->lock_wait - waited_before);
}

/* ---- static checks ---- */

/* The findings of geakh/static.py on the source, or NULL with err set. */
static json_t *
static_findings(struct geak_cand *c, json_t *rec, char *err, size_t errlen)
{
	char *dir = geak_job_dir(c->slot->cfg, "static-"), nonce[33];
	const struct geak_jobreq job = { .op = GEAK_OP_STATIC, .dir = dir, .nonce = nonce,
		.err = err, .errlen = errlen };
	json_t *spec = json_pack("{s:O}", GEAK_JOB_CODE, json_object_get(rec, "code"));
	json_t *found, *out = NULL;

	geak_job_dump(spec, dir, GEAK_FILE_JOB);
	json_decref(spec);
	geak_nonce(nonce);
	found = geak_job_answer(c, GEAK_W_JUDGE, GEAK_USE_NONE, &job, GEAK_FILE_STATIC,
	    "the static check wrote no result");
	if (found && !json_is_array(json_object_get(found, GEAK_STATIC_FINDINGS)))
		snprintf(err, errlen, "the static check's result holds no findings");
	else if (found)
		out = json_incref(json_object_get(found, GEAK_STATIC_FINDINGS));
	json_decref(found);
	geak_job_drop(c->slot->cfg, dir);
	return out;
}

/* Findings into ev: notes "static:RULE", or under strict the first strict
 * finding rejects the candidate.  1 when it was rejected. */
static int
apply_static(const struct geak_evalcfg *cfg, struct geak_eval *ev, json_t *findings)
{
	int strict = !strcmp(cfg->static_mode, "strict");
	json_t *f;
	size_t i;

	ev->static_findings = json_incref(findings);
	json_array_foreach(findings, i, f) {
		const char *rule = json_string_value(json_object_get(f, GEAK_FINDING_RULE));
		if (strict && json_is_true(json_object_get(f, GEAK_FINDING_STRICT))) {
			char msg[512];
			snprintf(msg, sizeof msg, "static check %s, line %lld: %s", rule ? rule : "?",
			    (long long)json_integer_value(json_object_get(f, GEAK_FINDING_LINE)),
			    geak_get_str(f, GEAK_FINDING_TEXT) ? geak_get_str(f, GEAK_FINDING_TEXT) : "");
			geak_eval_fail(ev, GEAK_STAGE_STATIC, "cheat", msg);
			return 1;
		}
		geak_eval_static_note(ev, rule ? rule : "?");
	}
	return 0;
}

/* ---- the run ---- */

json_t *
geak_reference_spec(const struct geak_evalcfg *cfg, json_t *spec, json_t *rec)
{
	json_t *ref = geak_json_copy(spec);
	const char *code = geak_get_str(rec, "task.reference");

	json_object_del(ref, GEAK_JOB_CAND_TEST);
	json_object_set_new(ref, GEAK_JOB_CODE, json_string(code ? code : ""));
	/* Calibrated with the performance cases or without them. */
	json_object_set_new(ref, GEAK_JOB_PERF_CHECKED,
	    json_boolean(!json_is_true(json_object_get(spec, GEAK_JOB_CPU)) && !cfg->no_perf));
	return ref;
}

/* A run that did not exit by itself: a timeout or a crash, into ev. */
static int
ended_badly(struct geak_eval *ev, json_t *resp, enum geak_stage stage)
{
	const char *st = geak_job_status(resp);
	char msg[200];

	if (!strcmp(st, GEAK_ENDED_TIMEOUT)) {
		const char *phase = json_string_value(json_object_get(resp, GEAK_RESP_PHASE));
		snprintf(msg, sizeof msg, "killed after %.0f s %s",
		    json_number_value(json_object_get(resp, GEAK_RESP_WALL)),
		    stage == GEAK_STAGE_PERF ? "while timed (--compile-timeout and --timeout)"
		    : phase && !strcmp(phase, GEAK_INPHASE_COMPILE) ?
		    "before the first call returned (--compile-timeout)"
		    : "(--timeout)");
		geak_eval_fail(ev, stage, "timeout", msg);
		return 1;
	}
	if (!strcmp(st, GEAK_ENDED_SIGNAL)) {
		snprintf(msg, sizeof msg, "killed by signal %lld",
		    (long long)json_integer_value(json_object_get(resp, GEAK_RESP_SIGNAL)));
		geak_eval_fail(ev, stage, "crash", msg);
		return 1;
	}
	return 0;
}

/* The last of what the run wrote so far, in place of what was taken
 * before: the timing writes on after the checks. */
static void
take_tails(struct geak_eval *ev, const char *dir)
{
	json_decref(ev->stdout_tail);
	json_decref(ev->stderr_tail);
	ev->stdout_tail = geak_job_tail(dir, GEAK_FILE_STDOUT, TAIL_BYTES, ev->refused,
	    sizeof ev->refused);
	ev->stderr_tail = geak_job_tail(dir, GEAK_FILE_STDERR, TAIL_BYTES, ev->refused,
	    sizeof ev->refused);
}

/* A candidate whose job left, where geak-eval reads, a file it does not
 * read (a link, a FIFO, a file past the size read) is rejected: the
 * harness never makes one.  1 when it was. */
static int
tampered(struct geak_eval *ev, enum geak_stage stage)
{
	char msg[320];

	if (!ev->refused[0])
		return 0;
	snprintf(msg, sizeof msg, "its job folder's %s", ev->refused);
	geak_eval_fail(ev, stage, "cheat", msg);
	ev->exec = 0;
	return 1;
}

/* The run's own split of its time: its tests and its performance checks. */
static void
run_split(struct geak_eval *ev, const char *dir)
{
	json_t *res = geak_job_load(dir, GEAK_FILE_RESULT, ev->refused, sizeof ev->refused);
	json_t *spent = json_object_get(res, GEAK_RESULT_SPENT);

	ev->phases[GEAK_PHASE_TESTS] = json_number_value(json_object_get(spent, GEAK_SPENT_TESTS));
	ev->phases[GEAK_PHASE_PERF_CHECKS] =
	    json_number_value(json_object_get(spent, GEAK_SPENT_PERF_CHECKS));
	json_decref(res);
}

/* The timing's own split of its time. */
static void
timing_split(struct geak_eval *ev, json_t *timing)
{
	ev->phases[GEAK_PHASE_PREPARE] = json_number_value(geak_get(timing, GEAK_RESULT_SPENT "." GEAK_SPENT_PREPARE));
	ev->phases[GEAK_PHASE_PERF_ALONE] = json_number_value(geak_get(timing, GEAK_RESULT_SPENT "." GEAK_SPENT_ALONE));
	ev->phases[GEAK_PHASE_PERF_TUNING] = json_number_value(geak_get(timing, GEAK_RESULT_SPENT "." GEAK_SPENT_TUNING));
	ev->phases[GEAK_PHASE_PERF_TIMED] = json_number_value(geak_get(timing, GEAK_RESULT_SPENT "." GEAK_SPENT_TIMED));
	ev->phases[GEAK_PHASE_PERF_PROFILE] = json_number_value(geak_get(timing, GEAK_RESULT_SPENT "." GEAK_SPENT_PROFILE));
}

static void
sandbox_info(struct geak_eval *ev, const struct geak_slot *s, json_t *resp)
{
	ev->sandbox_known = 1;
	ev->netns = (s->w[GEAK_W_RUN].sandbox & GEAK_SB_NONET) != 0;
	ev->landlock_worker = (s->w[GEAK_W_RUN].sandbox & GEAK_SB_FSWRITE) != 0;
	ev->landlock_job = json_is_true(json_object_get(resp, GEAK_RESP_LANDLOCK));
	if (!ev->landlock_job)
		geak_eval_note(ev, GEAK_NOTE_NO_LANDLOCK);
}

/* The judge's verdict on the candidate's run, part "run" or "timed":
 * into ev; -1 with the run's err set when the judge wrote none. */
static int
judge(struct geak_cand *c, struct geak_profile *p, const struct geak_jobreq *run,
    const char *part, struct geak_eval *ev)
{
	char *dir = geak_job_dir(c->slot->cfg, "judge-"), nonce[33], *err = run->err;
	size_t errlen = run->errlen;
	json_t *extra = json_pack("{s:s, s:s, s:s, s:s}", GEAK_REQ_PROFILE, geak_profile_dir(p),
	    GEAK_REQ_CAND, run->dir, GEAK_REQ_CAND_NONCE, run->nonce, GEAK_REQ_PART, part);
	const struct geak_jobreq job = { .op = GEAK_OP_JUDGE, .dir = dir, .nonce = nonce,
		.extra = extra, .err = err, .errlen = errlen };
	json_t *v;

	geak_nonce(nonce);
	v = geak_job_answer(c, GEAK_W_JUDGE, GEAK_USE_NONE, &job, GEAK_FILE_VERDICT,
	    "the judge wrote no verdict");
	json_decref(extra);
	if (v)
		geak_eval_take_verdict(ev, v);
	json_decref(v);
	geak_job_drop(c->slot->cfg, dir);
	return v ? 0 : -1;
}

/* ---- timing ---- */

static json_t *
find_case(json_t *cases, const char *key)
{
	json_t *c;
	size_t i;

	json_array_foreach(cases, i, c)
		if (json_is_string(json_object_get(c, GEAK_CASE_KEY)) &&
		    !strcmp(geak_get_str(c, GEAK_CASE_KEY), key))
			return c;
	return NULL;
}

/* The speedup and each case's figures, from the candidate's timing (the
 * reference timed beside it), into ev; the roofline flags. */
static void
apply_timing(struct geak_eval *ev, struct geak_profile *p, json_t *timing, double speedup_limit)
{
	json_t *c, *prof_cases = json_object_get(geak_profile_json(p), GEAK_PROF_CASES);
	double sum = 0, sum_ref = 0, peak_gbps, peak_tflops;
	int above = 0, unreliable = 0;
	const struct geak_peaks *peaks = geak_peaks_find(ev->device);
	size_t i;

	geak_device_peaks(ev->device, &peak_gbps, &peak_tflops);
	json_array_foreach(json_object_get(timing, GEAK_TIMING_CASES), i, c) {
		const char *key = geak_get_str(c, GEAK_CASE_KEY);
		json_t *counts = key ? json_object_get(find_case(prof_cases, key), GEAK_CASE_COUNTS) : NULL;
		double ms = json_number_value(json_object_get(c, GEAK_CASE_MS));
		double ms_ref = json_number_value(json_object_get(c, GEAK_CASE_MS_REF));
		struct geak_case *gc;
		if (!key || !(ms > 0))
			continue;
		gc = geak_eval_add_case(ev, key);
		gc->ms = ms;
		if (ms_ref > 0) {
			gc->ms_ref = ms_ref;
			sum += ms;
			sum_ref += ms_ref;
		}
		/* The counts are the perf script's rates at 1 ms. */
		gc->gbps = json_number_value(json_object_get(counts, GEAK_CASE_GBPS)) / ms;
		gc->tflops = json_number_value(json_object_get(counts, GEAK_CASE_TFLOPS)) / ms;
		gc->roofline = geak_roof_case_json(peaks, geak_get_str(find_case(prof_cases, key),
		    GEAK_CASE_DTYPE), ms, gc->ms_ref, gc->gbps, gc->tflops);
		if (gc->roofline && !ev->peaks)
			ev->peaks = geak_peaks_json(peaks);
		enum geak_roof bw = geak_roofline_case(gc->gbps, peak_gbps, ms, gc->ms_ref);
		enum geak_roof fl = geak_roofline_case(gc->tflops, peak_tflops, ms, gc->ms_ref);
		above |= bw == GEAK_ROOF_ABOVE || fl == GEAK_ROOF_ABOVE;
		unreliable |= bw == GEAK_ROOF_UNRELIABLE || fl == GEAK_ROOF_UNRELIABLE;
	}
	if (json_is_integer(json_object_get(timing, GEAK_TIMING_CASES_TOTAL)))
		ev->cases_total = (long)json_integer_value(json_object_get(timing, GEAK_TIMING_CASES_TOTAL));
	ev->speedup = sum > 0 && sum_ref > 0 ? sum_ref / sum : 0;
	/* A fixed limit has no physical basis: off unless asked for; the
	 * roofline and the timing's re-verification judge large speedups. */
	if (speedup_limit > 0 && ev->speedup > speedup_limit)
		geak_eval_flag(ev, GEAK_FLAG_EXCESSIVE_SPEEDUP);
	if (above)
		geak_eval_flag(ev, GEAK_FLAG_ABOVE_ROOFLINE);
	if (unreliable)
		geak_eval_note(ev, GEAK_NOTE_ROOFLINE_UNRELIABLE);
	if (!(ev->speedup > 0))
		geak_eval_note(ev, GEAK_NOTE_PERF_FAILED);
}

static json_t *
profile_absent(const char *why)
{
	return json_pack("{s:b, s:s}", "available", 0, "message", why);
}

/* The timing's kernel profile, as the harness made it (eval.profile). */
static void
take_kernel_profile(struct geak_eval *ev, json_t *timing)
{
	json_t *kp = json_object_get(timing, GEAK_TIMING_KERNEL_PROFILE);

	json_decref(ev->profile);
	ev->profile = json_is_object(kp) ? json_incref(kp) :
	    profile_absent("not profiled: the case to profile was not timed");
}

/* The candidate waits in its run to be timed: alone on the GPU, beside
 * the reference, then the judge of its timed outputs and the speedup.
 * -1 with err set when a harness job failed. */
static int
timing(struct geak_cand *c, struct geak_profile *p, const struct geak_jobreq *run,
    struct geak_eval *ev)
{
	const char *dir = run->dir;
	json_t *resp, *cand;
	double t0 = geak_now(), w0 = c->lock_wait;

	resp = geak_job_go(c, 1, run->err, run->errlen);
	add_phase(ev, GEAK_PHASE_PERF, t0, c, w0);
	if (!resp)
		return -1;
	take_tails(ev, dir);
	if (tampered(ev, GEAK_STAGE_PERF)) {
		json_decref(resp);
		return 0;
	}
	/* The runs it paused keep their memory: a timing short of it says
	 * nothing of the candidate, whose correctness stands, untimed. */
	if (geak_job_ran_short(dir, NULL)) {
		geak_trace(c, "the timing ran out of GPU memory; the candidate stays untimed");
		geak_eval_note(ev, GEAK_NOTE_PERF_FAILED);
		json_decref(resp);
		return 0;
	}
	if (ended_badly(ev, resp, GEAK_STAGE_PERF)) {
		ev->exec = 0;
		json_decref(resp);
		return 0;
	}
	json_decref(resp);
	t0 = geak_now(), w0 = c->lock_wait;
	if (judge(c, p, run, GEAK_PART_TIMED, ev) < 0)
		return -1;
	add_phase(ev, GEAK_PHASE_JUDGE, t0, c, w0);
	if (!ev->exec)
		return 0;
	cand = geak_job_load(dir, GEAK_FILE_TIMING, ev->refused, sizeof ev->refused);
	if (tampered(ev, GEAK_STAGE_PERF)) {
		json_decref(cand);
		return 0;
	}
	timing_split(ev, cand);
	apply_timing(ev, p, cand, c->slot->cfg->speedup_limit);
	if (c->slot->cfg->profile)
		take_kernel_profile(ev, cand);
	geak_profile_keep_pins(p, cand);
	ev->stage = GEAK_STAGE_DONE;
	json_decref(cand);
	return 0;
}

/* ---- the cascade ---- */

static int
wants_timing(const struct geak_slot *s, json_t *plan)
{
	return s->gpu && !s->cfg->no_perf && json_is_object(json_object_get(plan, GEAK_PLAN_PERF));
}

static int
skipped(json_t *skip, const char *key)
{
	json_t *k;
	size_t i;

	json_array_foreach(skip, i, k)
		if (json_is_string(k) && !strcmp(json_string_value(k), key))
			return 1;
	return 0;
}

/* How large a case is: the bytes it moves by its perf script's count,
 * then its operations, then the bytes of its inputs. */
static double
case_size(json_t *c, int by)
{
	json_t *counts = json_object_get(c, GEAK_CASE_COUNTS);

	switch (by) {
	case 0: return json_number_value(json_object_get(counts, GEAK_CASE_GBPS));
	case 1: return json_number_value(json_object_get(counts, GEAK_CASE_TFLOPS));
	default: return json_number_value(json_object_get(c, GEAK_CASE_BYTES));
	}
}

/* The largest case the reference passed and the candidate is timed on,
 * for --profile; NULL when there is none. */
static const char *
profile_case(json_t *prof, json_t *skip)
{
	json_t *cases = json_object_get(prof, GEAK_PROF_CASES), *c;
	size_t i;

	for (int by = 0; by < 3; by++) {
		const char *best = NULL;
		double size = 0;
		json_array_foreach(cases, i, c) {
			const char *key = geak_get_str(c, GEAK_CASE_KEY);
			if (!key || !json_is_true(json_object_get(c, GEAK_CASE_OK)) || skipped(skip, key))
				continue;
			if (case_size(c, by) > size)
				size = case_size(c, by), best = key;
		}
		if (best)
			return best;
	}
	const char *last = NULL;
	json_array_foreach(cases, i, c) { /* no sizes at all: the last, as suites grow them */
		const char *key = geak_get_str(c, GEAK_CASE_KEY);
		if (key && json_is_true(json_object_get(c, GEAK_CASE_OK)) && !skipped(skip, key))
			last = key;
	}
	return last;
}

static void
plan_timing(json_t *plan, struct geak_profile *p, const struct geak_cand *c)
{
	const struct geak_evalcfg *cfg = c->slot->cfg;
	json_t *skip = geak_get(plan, GEAK_PLAN_PERF "." GEAK_PLAN_SKIP);
	struct geak_budget b = geak_budget(c);
	json_t *t = json_pack("{s:I, s:I, s:O, s:b}", GEAK_PLAN_REPS, (json_int_t)cfg->reps,
	    GEAK_PLAN_WARMUP, (json_int_t)b.warmup, GEAK_PLAN_SKIP, skip ? skip : json_array(),
	    GEAK_PLAN_REFERENCE, 1);
	json_t *pins = geak_profile_pins(p);

	if (pins)
		json_object_set_new(t, GEAK_PLAN_PINS, pins);
	if (cfg->profile && profile_case(geak_profile_json(p), skip)) {
		json_t *kp = json_pack("{s:s}", GEAK_PLAN_CASE, profile_case(geak_profile_json(p), skip));
		json_object_set_new(kp, GEAK_PLAN_COUNTERS, cfg->ncu ? json_pack("{s:s, s:f}",
		    GEAK_PLAN_NCU_PATH, cfg->ncu, GEAK_PLAN_NCU_TIMEOUT, b.counters_s)
		    : json_pack("{s:s}", GEAK_PLAN_NCU_MESSAGE, cfg->counters_why ? cfg->counters_why
		    : "no hardware counters"));
		json_object_set_new(t, GEAK_PLAN_KERNEL_PROFILE, kp);
	}
	json_object_set_new(plan, GEAK_PLAN_TIMING, t);
}

static void
mode_notes(struct geak_eval *ev, json_t *prof)
{
	json_t *c;
	size_t i;

	if (json_is_false(json_object_get(prof, GEAK_PROF_POISON)))
		geak_eval_note(ev, GEAK_NOTE_NO_POISON);
	if (json_is_true(json_object_get(prof, GEAK_PROF_ONE_CALL)))
		geak_eval_note(ev, GEAK_NOTE_ONE_CALL);
	if (json_is_string(json_object_get(prof, GEAK_PROF_PERF_ERROR)))
		geak_eval_note(ev, GEAK_NOTE_REFERENCE_PERF_FAILED);
	json_array_foreach(json_object_get(prof, GEAK_PROF_CASES), i, c)
		if (!json_is_true(json_object_get(c, GEAK_CASE_OK)))
			geak_eval_note(ev, GEAK_NOTE_REFERENCE_PERF_FAILED);
}

/* The static checks, unless they are off: 1 when they rejected the
 * candidate, 0, or -1 with err set. */
static int
static_checks(struct geak_cand *c, json_t *rec, struct geak_eval *ev, char *err, size_t errlen)
{
	double t0 = geak_now();
	json_t *findings;
	int rejected;

	if (!strcmp(c->slot->cfg->static_mode, "off"))
		return 0;
	if (!(findings = static_findings(c, rec, err, errlen)))
		return -1;
	rejected = apply_static(c->slot->cfg, ev, findings);
	json_decref(findings);
	add_phase(ev, GEAK_PHASE_STATIC, t0, c, 0);
	return rejected;
}

/* The profile of the candidate's task's reference, calibrated where it is
 * not yet, with the notes it gives; NULL with err set when the harness
 * could not be used or the reference cannot be calibrated. */
static struct geak_profile *
reference(struct geak_cand *c, json_t *rec, json_t *spec, struct geak_eval *ev, char *err,
    size_t errlen)
{
	json_t *refspec = geak_reference_spec(c->slot->cfg, spec, rec);
	struct geak_profile *p = geak_profile_get(c, refspec, &ev->phases[GEAK_PHASE_REFERENCE],
	    err, errlen);

	json_decref(refspec);
	if (!p)
		return NULL;
	c->gpu_peak_mib = geak_profile_gpu_mib(p);
	if (ev->phases[GEAK_PHASE_REFERENCE] > 0 && geak_profile_steps(p))
		ev->calibration = json_incref(geak_profile_steps(p));
	if (geak_profile_error(p)) {
		snprintf(err, errlen, "%s", geak_profile_error(p));
		return NULL;
	}
	mode_notes(ev, geak_profile_json(p));
	return p;
}

/* A fresh folder of the candidate's run, with its job: the task and the
 * candidate's code.  Caller drops it. */
static char *
run_dir(const struct geak_evalcfg *cfg, json_t *rec, json_t *spec)
{
	char *dir = geak_job_dir(cfg, "cand-");
	json_t *jobspec = geak_json_copy(spec);

	json_object_set(jobspec, GEAK_JOB_CODE, json_object_get(rec, "code"));
	geak_job_dump(jobspec, dir, GEAK_FILE_JOB);
	json_decref(jobspec);
	return dir;
}

/* The candidate's run (started only, where it is to be timed) and the
 * judge's verdict on it, into ev: 1 when judged, 0 when its run ended
 * with a verdict, -1 with the run's err set when a harness job failed. */
static int
run_and_judge(struct geak_cand *c, struct geak_profile *p, const struct geak_jobreq *run,
    int timed, struct geak_eval *ev)
{
	struct geak_slot *s = c->slot;
	double t0 = geak_now(), w0 = c->lock_wait;
	json_t *resp = timed ? geak_job_start(c, run) : geak_job(c, GEAK_W_RUN, GEAK_GPU_SHARED, run);
	int ended;

	if (!resp)
		return -1;
	add_phase(ev, GEAK_PHASE_CALL, t0, c, w0);
	run_split(ev, run->dir);
	sandbox_info(ev, s, resp);
	take_tails(ev, run->dir);
	ended = tampered(ev, GEAK_STAGE_CALL) || (!s->pending && ended_badly(ev, resp, GEAK_STAGE_CALL));
	json_decref(resp);
	if (ended)
		return 0;
	t0 = geak_now(), w0 = c->lock_wait;
	if (judge(c, p, run, GEAK_PART_RUN, ev) < 0)
		return -1;
	add_phase(ev, GEAK_PHASE_JUDGE, t0, c, w0);
	if (ev->reason && !strcmp(ev->reason, "harness")) {
		snprintf(run->err, run->errlen, "%s", ev->message ? ev->message : "the judge failed");
		return -1;
	}
	return 1;
}

/* The candidate's run, its verdict, and its timing where it waits for
 * one, into ev: 0, or -1 with the run's err set. */
static int
run_cand(struct geak_cand *c, struct geak_profile *p, const struct geak_jobreq *run, int timed,
    struct geak_eval *ev)
{
	const struct geak_slot *s = c->slot;
	const struct geak_evalcfg *cfg = s->cfg;
	int r = run_and_judge(c, p, run, timed, ev);

	if (r <= 0)
		return r;
	r = 0;
	if (s->pending && ev->exec)
		r = timing(c, p, run, ev);
	else if (ev->exec && s->gpu && cfg->no_perf)
		geak_eval_note(ev, GEAK_NOTE_PERF_SKIPPED);
	if (ev->exec && cfg->profile && !ev->profile)
		ev->profile = profile_absent(!s->gpu ? "no profiler: the CPU mode (Triton's "
		    "interpreter) has no device timeline to profile" : cfg->no_perf ?
		    "not profiled: --no-perf" : "not profiled: the task has no performance case");
	return r;
}

int
geak_evaluate(struct geak_cand *c, json_t *rec, json_t *spec, struct geak_eval *ev,
    char *err, size_t errlen)
{
	struct geak_slot *s = c->slot;
	struct geak_profile *p;
	char *dir, nonce[33];
	struct geak_jobreq run = { .op = GEAK_OP_RUN, .nonce = nonce, .err = err, .errlen = errlen };
	json_t *plan;
	int timed, r;

	if ((r = static_checks(c, rec, ev, err, errlen)) != 0)
		return r < 0 ? -1 : 0;
	if (!(p = reference(c, rec, spec, ev, err, errlen)))
		return -1;
	plan = geak_profile_plan(p);
	timed = wants_timing(s, plan);
	if (timed)
		plan_timing(plan, p, c);
	run.dir = dir = run_dir(s->cfg, rec, spec);
	geak_nonce(nonce);
	run.extra = json_pack("{s:o}", GEAK_REQ_PLAN, plan);
	r = run_cand(c, p, &run, timed, ev);
	json_decref(run.extra);
	if (s->pending) {
		char stop_err[256]; /* err may hold why we stop */
		json_decref(geak_job_go(c, 0, stop_err, sizeof stop_err));
	}
	ev->phases[GEAK_PHASE_LOCK_WAIT] = c->lock_wait;
	if (c->oom_retries)
		geak_eval_note(ev, GEAK_NOTE_OOM_RETRY);
	geak_job_drop(s->cfg, dir);
	return r;
}
