/* Unit tests of pass@k, the speedup means, the best-candidate list and
 * the debugging-trap counter, against numbers worked out by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "memory.h"
#include "report/metrics.h"

#define EPS 1e-12

static void
passk_known_values(void **state)
{
	(void)state;
	/* n=5, c=2: pass@1 = c/n; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10. */
	assert_float_equal(geak_pass_at_k(5, 2, 1), 0.4, EPS);
	assert_float_equal(geak_pass_at_k(5, 2, 2), 0.7, EPS);
	assert_float_equal(geak_pass_at_k(5, 2, 3), 0.9, EPS);
	/* k = n is allowed: any pass among all n samples counts. */
	assert_float_equal(geak_pass_at_k(5, 2, 5), 1.0, EPS);
	assert_float_equal(geak_pass_at_k(5, 0, 5), 0.0, EPS);
	/* 1 - C(7,5)/C(10,5) = 1 - 21/252 */
	assert_float_equal(geak_pass_at_k(10, 3, 5), 11.0 / 12.0, EPS);
	assert_float_equal(geak_pass_at_k(1, 1, 1), 1.0, EPS);
	assert_float_equal(geak_pass_at_k(1, 0, 1), 0.0, EPS);
}

static void
passk_large_and_undefined(void **state)
{
	(void)state;
	/* Factorials of 100000 overflow; the product form does not. */
	assert_float_equal(geak_pass_at_k(100000, 1, 1), 1e-5, 1e-15);
	assert_float_equal(geak_pass_at_k(100000, 3, 10),
	    1 - (1 - 10.0 / 99998) * (1 - 10.0 / 99999) * (1 - 10.0 / 100000), 1e-12);
	assert_true(isnan(geak_pass_at_k(3, 1, 4)));
	assert_true(isnan(geak_pass_at_k(3, 1, 0)));
	assert_true(isnan(geak_pass_at_k(3, 4, 1)));
}

static void
k_list(void **state)
{
	long *ks;
	size_t n;

	(void)state;
	assert_int_equal(geak_parse_k_list("1,2,5", &ks, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ks[0], 1);
	assert_int_equal(ks[2], 5);
	free(ks);
	assert_int_equal(geak_parse_k_list("1,,2", &ks, &n), -1);
	assert_int_equal(geak_parse_k_list("0", &ks, &n), -1);
	assert_int_equal(geak_parse_k_list("3x", &ks, &n), -1);
	assert_int_equal(geak_parse_k_list("", &ks, &n), -1);
}

static void
means(void **state)
{
	double v[] = { 1.0, 4.0, 0.25, 2.0 };

	(void)state;
	/* (1 + 4 + 0.25 + 2) / 4 = 1.8125; (1*4*0.25*2)^(1/4) = 2^(1/4) */
	assert_float_equal(geak_mean(v, 4), 1.8125, EPS);
	assert_float_equal(geak_geomean(v, 4), pow(2.0, 0.25), 1e-12);
	assert_true(isnan(geak_mean(v, 0)));
	v[2] = 0;
	assert_true(isnan(geak_geomean(v, 4)));
}

static json_t *
entry(const char *sha, double speedup)
{
	return json_pack("{s:s, s:s, s:o}", "code", sha, "code_sha", sha,
	    "speedup", isnan(speedup) ? json_null() : json_real(speedup));
}

static const char *
sha_at(json_t *best, size_t i)
{
	return json_string_value(json_object_get(json_array_get(best, i), "code_sha"));
}

static void
best_keeps_fastest(void **state)
{
	json_t *best = json_array();

	(void)state;
	assert_int_equal(geak_best_add(best, entry("a", 1.5), 3), 1);
	assert_int_equal(geak_best_add(best, entry("b", 0.8), 3), 1);
	assert_int_equal(geak_best_add(best, entry("c", 2.5), 3), 1);
	/* Slowest first. */
	assert_string_equal(sha_at(best, 0), "b");
	assert_string_equal(sha_at(best, 2), "c");
	/* Full: a faster one evicts the slowest (b), not the fastest (c). */
	assert_int_equal(geak_best_add(best, entry("d", 1.0), 3), 1);
	assert_int_equal(json_array_size(best), 3);
	assert_string_equal(sha_at(best, 0), "d");
	assert_string_equal(sha_at(best, 1), "a");
	assert_string_equal(sha_at(best, 2), "c");
	/* Not faster than the slowest: rejected; duplicates: rejected. */
	assert_int_equal(geak_best_add(best, entry("e", 0.9), 3), 0);
	assert_int_equal(geak_best_add(best, entry("e", 1.0), 3), 0);
	assert_int_equal(geak_best_add(best, entry("c", 9.0), 3), 0);
	/* Unmeasured is slower than measured. */
	assert_int_equal(geak_best_add(best, entry("f", NAN), 3), 0);
	json_decref(best);
}

static json_t *
evaluated(const char *sha, int call, int exec, const char *flag, int debug)
{
	json_t *flags = json_array();

	if (flag)
		json_array_append_new(flags, json_string(flag));
	return json_pack("{s:s, s:s, s:i, s:{s:s, s:b, s:b, s:f, s:o, s:[{s:f}]}}",
	    "code", sha, "code_sha", sha, "perf_debug", debug,
	    "eval", "code_sha", sha, "call", call, "exec", exec, "speedup", 1.5,
	    "flags", flags, "shapes", "ms", 0.25);
}

static void
memory_counts_and_caps(void **state)
{
	struct geak_memory_opts v2 = { 5, 3, GEAK_COUNT_V2 }, v1 = v2;
	json_t *rec;

	(void)state;
	v1.rule = GEAK_COUNT_V1;
	/* v2 counts failures with an empty best list; a cap of 3 gives the
	 * failure that began them 3 debug rounds, and drops the lineage when
	 * the third fails too. */
	rec = evaluated("x", 0, 0, NULL, 1);
	assert_int_equal(geak_memory_update(rec, &v2), GEAK_NEXT_DEBUG);
	assert_int_equal(json_integer_value(json_object_get(rec, "perf_debug")), 2);
	assert_int_equal(geak_memory_update(rec, &v2), GEAK_NEXT_DEBUG);
	assert_int_equal(json_integer_value(json_object_get(rec, "perf_debug")), 3);
	assert_int_equal(geak_memory_update(rec, &v2), GEAK_NEXT_RESTART);
	assert_int_equal(json_integer_value(json_object_get(rec, "perf_debug")), 0);
	json_decref(rec);
	/* v1 does not count while best is empty: no cap at all. */
	rec = evaluated("x", 1, 0, NULL, 2);
	assert_int_equal(geak_memory_update(rec, &v1), GEAK_NEXT_DEBUG);
	assert_int_equal(json_integer_value(json_object_get(rec, "perf_debug")), 2);
	json_decref(rec);
	/* A correct candidate enters best with its numbers and resets. */
	rec = evaluated("y", 1, 1, NULL, 2);
	assert_int_equal(geak_memory_update(rec, &v1), GEAK_NEXT_OPTIMIZE);
	assert_int_equal(json_array_size(json_object_get(rec, "best")), 1);
	assert_float_equal(json_real_value(json_object_get(
	    json_array_get(json_object_get(rec, "best"), 0), "ms")), 0.25, EPS);
	assert_int_equal(json_integer_value(json_object_get(rec, "perf_debug")), 0);
	json_decref(rec);
	/* A flagged one never enters best, and its lineage is dropped. */
	rec = evaluated("z", 1, 1, "excessive_speedup", 0);
	assert_int_equal(geak_memory_update(rec, &v2), GEAK_NEXT_RESTART);
	assert_int_equal(json_array_size(json_object_get(rec, "best")), 0);
	json_decref(rec);
	/* A harness failure is not the candidate's: nothing is counted. */
	rec = evaluated("h", 1, 0, NULL, 4);
	json_object_set_new(json_object_get(rec, "eval"), "reason", json_string("harness"));
	assert_int_equal(geak_memory_update(rec, &v2), GEAK_NEXT_NONE);
	assert_int_equal(json_integer_value(json_object_get(rec, "perf_debug")), 4);
	json_decref(rec);
	/* An eval of older code is not acted on. */
	rec = evaluated("z", 1, 1, NULL, 0);
	json_object_set_new(rec, "code_sha", json_string("newer"));
	assert_int_equal(geak_memory_update(rec, &v2), GEAK_NEXT_NONE);
	assert_null(json_object_get(rec, "best"));
	json_decref(rec);
}

static void
roofline_cases(void **state)
{
	double gbps, tflops;

	(void)state;
	geak_device_peaks("NVIDIA H200", &gbps, &tflops);
	assert_float_equal(gbps, 4800, EPS);
	assert_float_equal(tflops, 989, EPS); /* the knowledge pack's FP16 dense peak */
	geak_device_peaks("cpu (Triton interpreter)", &gbps, &tflops);
	assert_float_equal(gbps + tflops, 0, EPS);
	/* Within 5% of the peak, or no peak known: nothing to say. */
	assert_int_equal(geak_roofline_case(5000, 4800, 1, 2), GEAK_ROOF_BELOW);
	assert_int_equal(geak_roofline_case(9000, 0, 1, 2), GEAK_ROOF_BELOW);
	/* Twice the peak in half the reference's time: the reference ran at
	 * the peak, so the candidate cannot have done the same work. */
	assert_int_equal(geak_roofline_case(9600, 4800, 1, 2), GEAK_ROOF_ABOVE);
	/* Twice the peak at the reference's own speed: the script's count
	 * is wrong, and holds nothing against the candidate. */
	assert_int_equal(geak_roofline_case(9600, 4800, 1, 1), GEAK_ROOF_UNRELIABLE);
	assert_int_equal(geak_roofline_case(9600, 4800, 1, 0), GEAK_ROOF_ABOVE);
	assert_int_equal(geak_roofline_case(NAN, 4800, 1, 1), GEAK_ROOF_BELOW);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(passk_known_values),
		cmocka_unit_test(roofline_cases),
		cmocka_unit_test(passk_large_and_undefined),
		cmocka_unit_test(k_list),
		cmocka_unit_test(means),
		cmocka_unit_test(best_keeps_fastest),
		cmocka_unit_test(memory_counts_and_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
