/* Unit tests of the roofline: the bottleneck class of kernels whose class
 * is known by construction (a vector add, a large matmul, a tiny kernel)
 * on the H200's peaks, the record's roofline object, and the prompt's
 * lines, trimmed to the cases that take the time. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kprofile.h"
#include "memory.h"
#include "report/metrics.h"
#include "roofline.h"

/* Rates from counts: GB/s = bytes / (ms * 1e6), TFLOP/s = flops / (ms * 1e9). */
static struct geak_roof_point
point(const char *dtype, double bytes, double flops, double ms)
{
	const struct geak_peaks *h200 = geak_peaks_find("NVIDIA H200");
	struct geak_roof_point pt = { ms, bytes / (ms * 1e6), flops / (ms * 1e9), 0, 0 };

	pt.peak_gbps = h200->gbps;
	pt.peak_tflops = geak_peak_tflops(h200, geak_dtype_named(dtype), NULL);
	return pt;
}

static void
h200_peaks(void **state)
{
	const struct geak_peaks *p = geak_peaks_find("NVIDIA H200");
	enum geak_dtype used;
	double gbps, tflops;

	(void)state;
	assert_non_null(p);
	assert_float_equal(p->gbps, 4800, 0);
	assert_float_equal(geak_peak_tflops(p, geak_dtype_named("torch.float16"), &used), 989, 0);
	assert_int_equal(used, GEAK_DT_FP16);
	assert_float_equal(geak_peak_tflops(p, geak_dtype_named("float32"), &used), 495, 0);
	assert_int_equal(used, GEAK_DT_TF32);
	/* An unknown type is held against the 16-bit peak. */
	assert_float_equal(geak_peak_tflops(p, geak_dtype_named("complex64"), &used), 989, 0);
	/* MI250 has no TF32: float32 falls to its FP32 rate. */
	assert_float_equal(geak_peak_tflops(geak_peaks_find("AMD Instinct MI250X"),
	    GEAK_DT_TF32, &used), 95.7, 0);
	assert_int_equal(used, GEAK_DT_FP32);
	assert_null(geak_peaks_find("cpu (Triton interpreter)"));
	/* The above-roofline flag's peaks come from the same table. */
	geak_device_peaks("NVIDIA H200", &gbps, &tflops);
	assert_float_equal(gbps, 4800, 0);
	assert_float_equal(tflops, 989, 0);
}

static void
classes(void **state)
{
	(void)state;
	/* Vector add of 2^26 float32: 3 x 4 bytes and 1 FLOP an element, in
	 * 0.224 ms: 3.6 TB/s, intensity 1/12 FLOP per byte. */
	double n = 67108864;
	struct geak_roof_point add = point("float32", 12 * n, n, 0.224);
	assert_int_equal(geak_roof_classify(&add), GEAK_BOUND_MEMORY);
	/* fp16 matmul 8192^3: 2 n^3 FLOP over 3 n^2 x 2 bytes, 1.6 ms. */
	double m = 8192;
	struct geak_roof_point mm = point("float16", 6 * m * m, 2 * m * m * m, 1.6);
	assert_int_equal(geak_roof_classify(&mm), GEAK_BOUND_COMPUTE);
	/* The same matmul, slowed tenfold, is still compute-bound: the class
	 * is the roof that binds, not how close it is. */
	mm.ms *= 10, mm.gbps /= 10, mm.tflops /= 10;
	assert_int_equal(geak_roof_classify(&mm), GEAK_BOUND_COMPUTE);
	/* A 1024-element add in 6 us: 2 GB/s, far from every roof. */
	struct geak_roof_point tiny = point("float32", 12 * 1024, 1024, 0.006);
	assert_int_equal(geak_roof_classify(&tiny), GEAK_BOUND_LATENCY);
	/* Short but near a roof is not latency-bound: 40 MB in 0.01 ms. */
	struct geak_roof_point fast = point("float32", 40e6, 40e6 / 12, 0.01);
	assert_int_equal(geak_roof_classify(&fast), GEAK_BOUND_MEMORY);
	/* A long kernel far from its roofs keeps its roof's class. */
	struct geak_roof_point slow = point("float32", 12 * 1024, 1024, 5);
	assert_int_equal(geak_roof_classify(&slow), GEAK_BOUND_MEMORY);
	/* Without a FLOP count only a latency verdict can be made. */
	struct geak_roof_point bytes_only = point("float32", 12 * n, 0, 0.224);
	assert_int_equal(geak_roof_classify(&bytes_only), GEAK_BOUND_UNKNOWN);
	struct geak_roof_point none = point("float32", 0, 0, 0.006);
	assert_int_equal(geak_roof_classify(&none), GEAK_BOUND_UNKNOWN);
}

static void
case_object(void **state)
{
	const struct geak_peaks *h200 = geak_peaks_find("H200");
	/* Candidate at 0.25 ms, reference at 0.5 ms, 805 MB and 67 MFLOP. */
	double n = 67108864, bytes = 12 * n, ms = 0.25;
	json_t *r = geak_roof_case_json(h200, "float32", ms, 0.5, bytes / (ms * 1e6), n / (ms * 1e9));

	(void)state;
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "dtype")), "tf32");
	assert_string_equal(json_string_value(json_object_get(r, "bound")), "memory");
	assert_string_equal(json_string_value(json_object_get(r, "bound_ref")), "memory");
	/* 3221 GB/s of 4800; the reference half that. */
	assert_float_equal(json_real_value(json_object_get(r, "hbm")), 0.6711, 1e-4);
	assert_float_equal(json_real_value(json_object_get(r, "hbm_ref")), 0.3355, 1e-4);
	assert_float_equal(json_real_value(json_object_get(r, "intensity")), 1.0 / 12, 1e-9);
	assert_float_equal(json_real_value(json_object_get(r, "ridge")), 103.13, 1e-9);
	json_decref(r);
	/* No counts, or no peaks: no object. */
	assert_null(geak_roof_case_json(h200, "float32", ms, 0.5, 0, 0));
	assert_null(geak_roof_case_json(NULL, "float32", ms, 0.5, 3000, 1));
}

/* An eval with cases at the given ms, each a memory-bound float32 add of
 * 805 MB whose reference took twice as long. */
static json_t *
eval_with(const double *ms, size_t n, int counted)
{
	const struct geak_peaks *h200 = geak_peaks_find("H200");
	json_t *shapes = json_array();
	double elems = 67108864;

	for (size_t i = 0; i < n; i++) {
		json_t *s = json_pack("{s:I, s:f, s:f}", "shape", (json_int_t)i, "ms", ms[i],
		    "ms_ref", 2 * ms[i]);
		if (counted) {
			double gbps = 12 * elems / (ms[i] * 1e6), tflops = elems / (ms[i] * 1e9);
			json_object_set_new(s, "gbps", json_real(gbps));
			json_object_set_new(s, "tflops", json_real(tflops));
			json_object_set_new(s, "roofline",
			    geak_roof_case_json(h200, "float32", ms[i], 2 * ms[i], gbps, tflops));
		}
		json_array_append_new(shapes, s);
	}
	return json_pack("{s:o, s:o, s:s}", "shapes", shapes, "peaks",
	    counted ? geak_peaks_json(h200) : json_null(), "device", "NVIDIA H200");
}

static void
prompt_lines(void **state)
{
	static const double ms[] = { 0.3, 1.0, 0.5, 2.0, 0.4 };
	json_t *eval = eval_with(ms, 5, 1);
	char *text = geak_roof_text(eval, 3);

	(void)state;
	assert_non_null(text);
	/* The three longest cases, in their order: 1, 2, 3. */
	assert_non_null(strstr(text, "* shape 1: 17% of HBM bandwidth, the reference 8.4%; "));
	assert_non_null(strstr(text, "* shape 2: 34% of HBM bandwidth, the reference 17%;"));
	assert_non_null(strstr(text, "* shape 3: 8.4% of HBM bandwidth"));
	assert_null(strstr(text, "shape 0:"));
	assert_null(strstr(text, "shape 4:"));
	assert_true(strstr(text, "shape 1:") < strstr(text, "shape 2:"));
	assert_true(strstr(text, "shape 2:") < strstr(text, "shape 3:"));
	assert_non_null(strstr(text, "memory-bound\n"));
	/* A memory-bound case far from the compute roof is not shown it. */
	assert_null(strstr(text, "compute peak"));
	assert_non_null(strstr(text, "(2 shorter cases not shown)"));
	free(text);
	json_decref(eval);

	eval = eval_with(ms, 2, 0);
	text = geak_roof_text(eval, 3);
	assert_string_equal(text,
	    "The performance cases give no byte or operation counts: no roofline figures.");
	free(text);
	json_decref(eval);

	eval = json_pack("{s:[]}", "shapes");
	assert_null(geak_roof_text(eval, 3));
	json_decref(eval);
}

static void
latency_line(void **state)
{
	const struct geak_peaks *h200 = geak_peaks_find("H200");
	double ms = 0.006, gbps = 12 * 1024 / (ms * 1e6), tflops = 1024 / (ms * 1e9);
	json_t *s = json_pack("{s:s, s:f, s:f, s:f, s:f, s:o}", "shape", "n=1024", "ms", ms,
	    "ms_ref", 0.5, "gbps", gbps, "tflops", tflops, "roofline",
	    geak_roof_case_json(h200, "float32", ms, 0.5, gbps, tflops));
	json_t *eval = json_pack("{s:[o], s:o}", "shapes", s, "peaks", geak_peaks_json(h200));
	char *text = geak_roof_text(eval, 3);

	(void)state;
	/* The reference, long at 0.5 ms for no more work, is memory-bound. */
	assert_non_null(strstr(text, "* shape n=1024: 0.0060 ms; "));
	assert_non_null(strstr(text, "latency-bound (the reference memory-bound)"));
	free(text);
	json_decref(eval);
}

static void
compute_line(void **state)
{
	const struct geak_peaks *h200 = geak_peaks_find("H200");
	double m = 8192, ms = 1.6, gbps = 6 * m * m / (ms * 1e6), tflops = 2 * m * m * m / (ms * 1e9);
	json_t *s = json_pack("{s:s, s:f, s:f, s:f, s:f, s:o}", "shape", "8192^3", "ms", ms,
	    "ms_ref", 2.0, "gbps", gbps, "tflops", tflops, "roofline",
	    geak_roof_case_json(h200, "float16", ms, 2.0, gbps, tflops));
	json_t *eval = json_pack("{s:[o], s:o}", "shapes", s, "peaks", geak_peaks_json(h200));
	char *text = geak_roof_text(eval, 3);

	(void)state;
	assert_string_equal(text, "* shape 8192^3: 69% of the fp16 compute peak, the reference "
	    "56%; intensity 2731 FLOP/byte, ridge 206; compute-bound");
	free(text);
	json_decref(eval);
}

/* The best list keeps what the optimizer's prompt shows of an eval. */
static void
best_entry_keeps_roofline(void **state)
{
	static const double ms[] = { 0.5 };
	json_t *rec = json_pack("{s:s, s:s, s:I, s:o}", "code", "x", "code_sha", "abc", "iter",
	    (json_int_t)1, "eval", eval_with(ms, 1, 1));
	json_t *e = geak_best_entry(rec);
	char *text = geak_roof_text(json_object_get(e, "perf"), 3);

	(void)state;
	assert_non_null(json_object_get(json_object_get(e, "perf"), "peaks"));
	assert_non_null(strstr(text, "* shape 0: 34% of HBM bandwidth, the reference 17%"));
	free(text);
	json_decref(e);
	json_decref(rec);
}

/* The kernel profile's words: the longest kernels, the rest summed. */
static void
kernel_profile_lines(void **state)
{
	json_t *p = json_loads("{\"available\": true, \"case\": \"3\", \"tool\": \"torch.profiler\","
	    "\"calls\": 3, \"launches\": 3, \"device_us\": 100.0, \"kernels\": ["
	    "{\"name\": \"mm\", \"launches\": 1, \"us\": 80.0, \"share\": 0.8, \"grid\": [64, 2, 1],"
	    " \"block\": [128, 1, 1], \"registers\": 96, \"shared_bytes\": 32768, \"occupancy_pct\": 12.4},"
	    "{\"name\": \"add\", \"launches\": 1, \"us\": 15.0, \"share\": 0.15},"
	    "{\"name\": \"copy\", \"launches\": 1, \"us\": 5.0, \"share\": 0.05}],"
	    "\"others\": {\"kernels\": 0, \"share\": 0}}", 0, NULL);
	char *text = geak_kprofile_text(p, 2);

	(void)state;
	assert_string_equal(text, "Kernel profile of shape 3 (torch.profiler, per call over 3 calls): "
	    "3 launches, 100.0 us on the device\n"
	    "* 80% mm: 1 launch, 80.0 us, grid 64x2x1, block 128x1x1, 96 registers a thread, "
	    "32768 B shared memory, occupancy about 12%\n"
	    "* 15% add: 1 launch, 15.0 us\n"
	    "* 5% in 1 other kernel");
	free(text);
	json_decref(p);
	p = json_pack("{s:b, s:s}", "available", 0, "message", "no profiler: none here");
	text = geak_kprofile_text(p, 2);
	assert_string_equal(text, "Kernel profile: none (no profiler: none here).");
	free(text);
	json_decref(p);
	assert_null(geak_kprofile_text(NULL, 2));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(h200_peaks),
		cmocka_unit_test(classes),
		cmocka_unit_test(case_object),
		cmocka_unit_test(prompt_lines),
		cmocka_unit_test(latency_line),
		cmocka_unit_test(compute_line),
		cmocka_unit_test(best_entry_keeps_roofline),
		cmocka_unit_test(kernel_profile_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
