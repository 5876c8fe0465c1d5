/* memory.c: best-candidate list and debugging-trap counter. */
#include <math.h>
#include <string.h>

#include "memory.h"
#include "record.h"

enum geak_outcome
geak_outcome(json_t *rec)
{
	json_t *eval = json_object_get(rec, "eval");
	const char *sha = geak_get_str(rec, "code_sha");
	const char *esha = geak_get_str(rec, "eval.code_sha");
	json_t *flags;

	const char *reason = geak_get_str(rec, "eval.reason");

	if (!json_is_object(eval) || !sha || !esha || strcmp(sha, esha) != 0)
		return GEAK_OUT_NONE;
	if (reason && strcmp(reason, "harness") == 0)
		return GEAK_OUT_NONE;
	if (!json_is_true(json_object_get(eval, "call")))
		return GEAK_OUT_CALL_FAIL;
	if (!json_is_true(json_object_get(eval, "exec")))
		return GEAK_OUT_WRONG;
	flags = json_object_get(eval, "flags");
	if (json_is_array(flags) && json_array_size(flags) > 0)
		return GEAK_OUT_FLAGGED;
	return GEAK_OUT_CORRECT;
}

const char *
geak_outcome_name(enum geak_outcome o)
{
	static const char *const names[] = {
		"none", "call_failed", "wrong_output", "flagged", "correct",
	};

	return names[o];
}

double
geak_eval_ms(json_t *eval)
{
	json_t *shapes = json_object_get(eval, "shapes"), *s;
	double total = 0;
	size_t i;

	if (!json_is_array(shapes) || json_array_size(shapes) == 0)
		return NAN;
	json_array_foreach(shapes, i, s) {
		json_t *ms = json_object_get(s, "ms");
		if (!json_is_number(ms))
			return NAN;
		total += json_number_value(ms);
	}
	return total;
}

static double
number_or_nan(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

int
geak_best_cmp(json_t *a, json_t *b)
{
	double sa = number_or_nan(a, "speedup"), sb = number_or_nan(b, "speedup");
	double ma = number_or_nan(a, "ms"), mb = number_or_nan(b, "ms");

	if (!isnan(sa) || !isnan(sb)) {
		if (isnan(sa))
			return -1;
		if (isnan(sb))
			return 1;
		if (sa != sb)
			return sa < sb ? -1 : 1;
	}
	if (!isnan(ma) && !isnan(mb) && ma != mb)
		return ma > mb ? -1 : 1;
	return 0;
}

static int
listed(json_t *best, const char *sha)
{
	json_t *e;
	size_t i;

	json_array_foreach(best, i, e) {
		const char *s = json_string_value(json_object_get(e, "code_sha"));
		if (sha && s && strcmp(s, sha) == 0)
			return 1;
	}
	return 0;
}

int
geak_best_add(json_t *best, json_t *entry, size_t max)
{
	size_t pos = 0, n = json_array_size(best);

	if (max == 0 || listed(best, json_string_value(json_object_get(entry, "code_sha"))) ||
	    (n >= max && geak_best_cmp(entry, json_array_get(best, 0)) <= 0)) {
		json_decref(entry);
		return 0;
	}
	/* After every entry that is not faster, so equals keep their age order. */
	while (pos < n && geak_best_cmp(json_array_get(best, pos), entry) <= 0)
		pos++;
	json_array_insert_new(best, pos, entry);
	while (json_array_size(best) > max)
		json_array_remove(best, 0);
	return 1;
}

static json_t *
number_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* What the optimizer is shown of an evaluation beside the speedup: each
 * case's times and roofline, the device and its peaks, the kernel
 * profile. */
static json_t *
perf_of(json_t *eval)
{
	static const char *const keys[] = { "shapes", "peaks", "device", "profile" };
	json_t *perf = json_object();

	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		if (json_object_get(eval, keys[i]))
			json_object_set(perf, keys[i], json_object_get(eval, keys[i]));
	return perf;
}

json_t *
geak_best_entry(json_t *rec)
{
	json_t *eval = json_object_get(rec, "eval");
	json_t *entry = json_object();
	json_t *speedup = json_object_get(eval, "speedup");
	json_t *refl = json_object_get(rec, "reflection");
	json_t *iter = json_object_get(rec, "iter");

	json_object_set(entry, "code", json_object_get(rec, "code"));
	json_object_set(entry, "code_sha", json_object_get(rec, "code_sha"));
	json_object_set_new(entry, "speedup",
	    json_is_number(speedup) ? json_copy(speedup) : json_null());
	json_object_set_new(entry, "ms", number_or_null(geak_eval_ms(eval)));
	json_object_set_new(entry, "reflection",
	    json_is_string(refl) ? json_copy(refl) : json_null());
	json_object_set_new(entry, "iter",
	    json_is_integer(iter) ? json_copy(iter) : json_integer(0));
	json_object_set_new(entry, "perf", perf_of(eval));
	if (json_is_string(geak_get(rec, "llm.model")))
		json_object_set(entry, "model", geak_get(rec, "llm.model"));
	return entry;
}

static json_t *
best_list(json_t *rec)
{
	json_t *best = json_object_get(rec, "best");

	if (!json_is_array(best)) {
		best = json_array();
		json_object_set_new(rec, "best", best);
	}
	return best;
}

enum geak_next
geak_memory_update(json_t *rec, const struct geak_memory_opts *o)
{
	enum geak_outcome out = geak_outcome(rec);
	json_t *best, *counter;
	json_int_t debug;

	if (out == GEAK_OUT_NONE)
		return GEAK_NEXT_NONE;
	best = best_list(rec);
	if (out == GEAK_OUT_CORRECT) {
		geak_best_add(best, geak_best_entry(rec), o->ancestors);
		json_object_set_new(rec, "perf_debug", json_integer(0));
		return GEAK_NEXT_OPTIMIZE;
	}
	counter = json_object_get(rec, "perf_debug");
	debug = json_is_integer(counter) ? json_integer_value(counter) : 0;
	if (o->rule == GEAK_COUNT_V2 || json_array_size(best) > 0)
		debug++;
	/* The failure that starts a run of failures is not a debug round:
	 * max_debug rounds of debugging follow it, as GEAK's
	 * max_perf_debug_num gives, and the next failure drops the lineage. */
	if (debug > o->max_debug || out == GEAK_OUT_FLAGGED) {
		json_object_set_new(rec, "perf_debug", json_integer(0));
		return GEAK_NEXT_RESTART;
	}
	json_object_set_new(rec, "perf_debug", json_integer(debug));
	return GEAK_NEXT_DEBUG;
}
