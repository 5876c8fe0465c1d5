/* evalresult.c: a candidate's evaluation, and its "eval" object. */
#include <stdlib.h>
#include <string.h>

#include "eval/evalresult.h"
#include "eval/harness.h"
#include "record.h"
#include "secrets.h"
#include "util.h"

static const char *const stage_names[] = { "static", "call", "exec", "perf", "done" };
static const char *const flag_names[GEAK_NFLAGS] = {
	"excessive_speedup", "above_roofline", "precision_downgrade", "secrets_in_env",
	"unconfirmed_speedup",
};
static const char *const note_names[GEAK_NNOTES] = {
	"unstable_reference", "within_reference_spread", "no_landlock", "perf_failed",
	"reference_perf_failed", "oom_retry", "roofline_unreliable", "no_poison",
	"one_call_per_process", "original_test", "perf_skipped", "no_pidns", "no_private_root",
};
static const char *const phase_names[GEAK_NPHASES] = {
	"static", "reference", "call", "call_tests", "call_perf_checks", "call_prepare", "judge", "perf",
	"perf_alone", "perf_tuning", "perf_timed", "perf_profile", "lock_wait",
};
/* eval.reason, as geak-record(5) lists them. */
static const char *const reasons[] = {
	"syntax", "compile", "runtime", "timeout", "crash", "mismatch", "no_output", "cheat",
	"harness", NULL,
};

void
geak_eval_init(struct geak_eval *ev, const char *code_sha, const char *device, const char *harness)
{
	memset(ev, 0, sizeof *ev);
	snprintf(ev->code_sha, sizeof ev->code_sha, "%s", code_sha);
	ev->stage = GEAK_STAGE_CALL;
	ev->device = device ? geak_xstrdup(device) : NULL;
	ev->harness = harness ? geak_xstrdup(harness) : NULL;
}

void
geak_eval_free(struct geak_eval *ev)
{
	free(ev->message);
	free(ev->traceback);
	for (char **s = ev->static_notes; s && *s; s++)
		free(*s);
	free(ev->static_notes);
	json_decref(ev->static_findings);
	json_decref(ev->runs);
	json_decref(ev->stdout_tail);
	json_decref(ev->stderr_tail);
	json_decref(ev->sandbox_more);
	for (size_t i = 0; i < ev->ncases; i++) {
		free(ev->cases[i].key);
		json_decref(ev->cases[i].roofline);
	}
	json_decref(ev->peaks);
	json_decref(ev->profile);
	json_decref(ev->calibration);
	free(ev->cases);
	free(ev->device);
	free(ev->harness);
	memset(ev, 0, sizeof *ev);
}

static const char *
known_reason(const char *reason)
{
	for (const char *const *r = reasons; *r; r++)
		if (!strcmp(*r, reason))
			return *r;
	return "harness";
}

static char *
scrubbed(const char *s)
{
	char *m;

	if (!s)
		return NULL;
	m = geak_xstrdup(s);
	geak_utf8_scrub(m);
	return m;
}

void
geak_eval_fail(struct geak_eval *ev, enum geak_stage stage, const char *reason, const char *message)
{
	ev->stage = stage;
	ev->reason = reason ? known_reason(reason) : NULL;
	if (message) {
		free(ev->message);
		ev->message = scrubbed(message);
	}
}

void
geak_eval_flag(struct geak_eval *ev, enum geak_flag f)
{
	ev->flags |= 1u << f;
}

void
geak_eval_note(struct geak_eval *ev, enum geak_note n)
{
	ev->notes |= 1u << n;
}

int
geak_eval_has_note(const struct geak_eval *ev, enum geak_note n)
{
	return (ev->notes >> n) & 1;
}

static int
index_of(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

int
geak_eval_note_named(struct geak_eval *ev, const char *name)
{
	int i = index_of(note_names, GEAK_NNOTES, name);

	if (i < 0)
		return -1;
	geak_eval_note(ev, (enum geak_note)i);
	return 0;
}

int
geak_eval_flag_named(struct geak_eval *ev, const char *name)
{
	int i = index_of(flag_names, GEAK_NFLAGS, name);

	if (i < 0)
		return -1;
	geak_eval_flag(ev, (enum geak_flag)i);
	return 0;
}

void
geak_eval_static_note(struct geak_eval *ev, const char *rule)
{
	size_t n = 0;

	while (ev->static_notes && ev->static_notes[n])
		n++;
	ev->static_notes = geak_xrealloc(ev->static_notes, (n + 2) * sizeof *ev->static_notes);
	ev->static_notes[n] = geak_xasprintf("static:%s", rule);
	ev->static_notes[n + 1] = NULL;
}

static enum geak_stage
stage_named(const char *name)
{
	for (size_t i = 0; i < sizeof stage_names / sizeof *stage_names; i++)
		if (name && !strcmp(stage_names[i], name))
			return (enum geak_stage)i;
	return GEAK_STAGE_EXEC;
}

void
geak_eval_take_verdict(struct geak_eval *ev, json_t *v)
{
	json_t *x;
	size_t i;

	ev->call = json_is_true(json_object_get(v, GEAK_VERDICT_CALL));
	ev->exec = json_is_true(json_object_get(v, GEAK_VERDICT_EXEC));
	ev->stage = stage_named(json_string_value(json_object_get(v, GEAK_VERDICT_STAGE)));
	x = json_object_get(v, GEAK_VERDICT_REASON);
	ev->reason = json_is_string(x) ? known_reason(json_string_value(x)) : NULL;
	if (json_is_string(json_object_get(v, GEAK_VERDICT_MESSAGE))) {
		free(ev->message);
		ev->message = scrubbed(json_string_value(json_object_get(v, GEAK_VERDICT_MESSAGE)));
	}
	if (json_is_string(json_object_get(v, GEAK_VERDICT_TRACEBACK))) {
		free(ev->traceback);
		ev->traceback = scrubbed(json_string_value(json_object_get(v, GEAK_VERDICT_TRACEBACK)));
	}
	json_array_foreach(json_object_get(v, GEAK_VERDICT_FLAGS), i, x)
		if (json_is_string(x) && geak_eval_flag_named(ev, json_string_value(x)) < 0)
			geak_warn("the judge's flag '%s' is not one of the record's", json_string_value(x));
	json_array_foreach(json_object_get(v, GEAK_VERDICT_NOTES), i, x)
		if (json_is_string(x) && geak_eval_note_named(ev, json_string_value(x)) < 0)
			geak_warn("the judge's note '%s' is not one of the record's", json_string_value(x));
	if (json_is_array(json_object_get(v, GEAK_VERDICT_RUNS))) {
		json_decref(ev->runs);
		ev->runs = json_incref(json_object_get(v, GEAK_VERDICT_RUNS));
	}
}

struct geak_case *
geak_eval_add_case(struct geak_eval *ev, const char *key)
{
	struct geak_case *c;

	ev->cases = geak_xrealloc(ev->cases, (ev->ncases + 1) * sizeof *ev->cases);
	c = &ev->cases[ev->ncases++];
	memset(c, 0, sizeof *c);
	c->key = geak_xstrdup(key);
	c->ms_ref = -1;
	return c;
}

static json_t *
millis(double secs)
{
	return json_real((double)(long long)(secs * 1000) / 1000);
}

static json_t *
str_or_null(const char *s)
{
	json_t *v = s ? json_string(s) : NULL;

	return v ? v : json_null();
}

static json_t *
names(unsigned bits, const char *const *table, int n, char *const *more)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		if ((bits >> i) & 1)
			json_array_append_new(a, json_string(table[i]));
	for (char *const *s = more; s && *s; s++)
		json_array_append_new(a, json_string(*s));
	return a;
}

static json_t *
cases_json(const struct geak_eval *ev)
{
	json_t *a = json_array();

	for (size_t i = 0; i < ev->ncases; i++) {
		const struct geak_case *c = &ev->cases[i];
		json_t *o = json_pack("{s:s, s:f}", "shape", c->key, "ms", c->ms);
		json_object_set_new(o, "ms_ref", c->ms_ref >= 0 ? json_real(c->ms_ref) : json_null());
		if (c->gbps > 0)
			json_object_set_new(o, "gbps", json_real(c->gbps));
		if (c->tflops > 0)
			json_object_set_new(o, "tflops", json_real(c->tflops));
		if (c->roofline)
			json_object_set(o, "roofline", c->roofline);
		json_array_append_new(a, o);
	}
	return a;
}

json_t *
geak_eval_json(const struct geak_eval *ev)
{
	json_t *o, *phases = json_object();

	for (int i = 0; i < GEAK_NPHASES; i++)
		if (ev->phases[i] > 0 || i == GEAK_PHASE_LOCK_WAIT || i == GEAK_PHASE_REFERENCE)
			json_object_set_new(phases, phase_names[i], millis(ev->phases[i]));
	o = json_pack("{s:s, s:b, s:b, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
	    "code_sha", ev->code_sha, "call", ev->call, "exec", ev->exec,
	    "speedup", ev->speedup > 0 ? json_real(ev->speedup) : json_null(),
	    "stage", stage_names[ev->stage], "reason", str_or_null(ev->reason),
	    "message", str_or_null(ev->message), "shapes", cases_json(ev),
	    "flags", names(ev->flags, flag_names, GEAK_NFLAGS, NULL),
	    "notes", names(ev->notes, note_names, GEAK_NNOTES, ev->static_notes),
	    "stdout_tail", ev->stdout_tail ? json_incref(ev->stdout_tail) : json_null(),
	    "stderr_tail", ev->stderr_tail ? json_incref(ev->stderr_tail) : json_null(),
	    "device", str_or_null(ev->device), "harness", str_or_null(ev->harness),
	    "seconds", millis(ev->seconds), "phases", phases, "cached", ev->cached);
	if (!o)
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	if (ev->cases_total > (long)ev->ncases && ev->ncases > 0)
		json_object_set_new(o, "shapes_total", json_integer(ev->cases_total));
	if (ev->traceback)
		json_object_set_new(o, "traceback", json_string(ev->traceback));
	if (ev->peaks)
		json_object_set(o, "peaks", ev->peaks);
	if (ev->profile)
		json_object_set(o, "profile", ev->profile);
	if (ev->calibration)
		json_object_set(o, "calibration", ev->calibration);
	if (ev->runs)
		json_object_set(o, "runs", ev->runs);
	if (ev->static_findings)
		json_object_set(o, "static", ev->static_findings);
	if (ev->sandbox_known) {
		json_t *sb = json_pack("{s:b, s:b, s:b}", "netns", ev->netns,
		    "landlock_worker", ev->landlock_worker, "landlock_job", ev->landlock_job);
		if (json_is_object(ev->sandbox_more))
			json_object_update_missing(sb, ev->sandbox_more);
		json_object_set_new(o, "sandbox", sb);
	}
	return o;
}

static size_t
redact_str(char **s)
{
	return *s ? geak_redact(s) + geak_redacted_marks(*s) : 0;
}

static size_t
redact_json(json_t *v)
{
	size_t n = geak_redact_json(v);

	if (json_is_string(v))
		n += geak_redacted_marks(json_string_value(v));
	return n;
}

size_t
geak_eval_redact(struct geak_eval *ev)
{
	size_t n = redact_str(&ev->message) + redact_str(&ev->traceback);

	n += redact_json(ev->stdout_tail) + redact_json(ev->stderr_tail);
	/* Containers: redacted in place; their marks are in the strings above
	 * too when the candidate printed a secret, so they are not counted. */
	n += geak_redact_json(ev->runs) + geak_redact_json(ev->static_findings);
	n += geak_redact_json(ev->profile); /* kernel names are the candidate's */
	return n;
}

void
geak_eval_sandbox_notes(struct geak_eval *ev)
{
	if (!json_is_object(ev->sandbox_more))
		return;
	if (!json_is_true(json_object_get(ev->sandbox_more, GEAK_LAYER_PIDNS)))
		geak_eval_note(ev, GEAK_NOTE_NO_PIDNS);
	if (!json_is_true(json_object_get(ev->sandbox_more, "view")))
		geak_eval_note(ev, GEAK_NOTE_NO_PRIVATE_ROOT);
}
