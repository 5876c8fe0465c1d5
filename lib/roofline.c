/* roofline.c: a case against the device's roofs, and its words for the
 * prompts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "roofline.h"
#include "util.h"

/* Vendor peaks for dense math (the knowledge packs quote the same).  On
 * AMD the FP32 and FP64 figures are the matrix cores'; MI250 has no
 * TF32, so float32 there falls back to its FP32 rate through the table. */
static const struct geak_peaks peaks_table[] = {
	/*            name      GB/s    fp64   fp32   tf32   fp16    bf16    fp8     int8 */
	{ "H200",   4800, { 67,    67,    495,   989,    989,    1979,   1979 } },
	{ "H100",   3350, { 67,    67,    495,   989,    989,    1979,   1979 } },
	{ "A100",   2039, { 19.5,  19.5,  156,   312,    312,    0,      624 } },
	{ "MI300X", 5300, { 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9 } },
	{ "MI250",  3277, { 95.7,  95.7,  0,     383,    383,    0,      383 } },
};
static const char *const dtype_names[GEAK_NDTYPES] = {
	"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8",
};

const struct geak_peaks *
geak_peaks_find(const char *device)
{
	for (size_t i = 0; device && i < sizeof peaks_table / sizeof *peaks_table; i++)
		if (strstr(device, peaks_table[i].name))
			return &peaks_table[i];
	return NULL;
}

/* float32 is held to the TF32 tensor roof, the higher one: tl.dot takes
 * float32 inputs to TF32 by default, and no case may be flagged above a
 * roof that it can reach.  An elementwise float32 kernel's share of the
 * compute roof is then understated (its CUDA-core roof is lower). */
int
geak_dtype_named(const char *name)
{
	static const struct { const char *torch; enum geak_dtype t; } map[] = {
		{ "float64", GEAK_DT_FP64 }, { "double", GEAK_DT_FP64 },
		{ "float32", GEAK_DT_TF32 }, { "float", GEAK_DT_TF32 },
		{ "float16", GEAK_DT_FP16 }, { "half", GEAK_DT_FP16 },
		{ "bfloat16", GEAK_DT_BF16 },
		{ "float8_e4m3fn", GEAK_DT_FP8 }, { "float8_e5m2", GEAK_DT_FP8 },
		{ "float8_e4m3fnuz", GEAK_DT_FP8 }, { "float8_e5m2fnuz", GEAK_DT_FP8 },
		{ "int8", GEAK_DT_INT8 }, { "uint8", GEAK_DT_INT8 },
	};

	if (!name)
		return -1;
	if (!strncmp(name, "torch.", 6))
		name += 6;
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (!strcmp(map[i].torch, name))
			return (int)map[i].t;
	return -1;
}

const char *
geak_dtype_name(enum geak_dtype t)
{
	return t < GEAK_NDTYPES ? dtype_names[t] : "?";
}

double
geak_peak_tflops(const struct geak_peaks *p, int t, enum geak_dtype *used)
{
	enum geak_dtype u = t >= 0 && t < GEAK_NDTYPES ? (enum geak_dtype)t : GEAK_DT_FP16;

	if (!p)
		return 0;
	if (u == GEAK_DT_TF32 && !(p->tflops[u] > 0))
		u = GEAK_DT_FP32;
	if (!(p->tflops[u] > 0))
		u = GEAK_DT_FP16;
	if (used)
		*used = u;
	return p->tflops[u];
}

const char *
geak_bound_name(enum geak_bound b)
{
	static const char *const names[] = { "unknown", "memory", "compute", "latency" };

	return names[b];
}

enum geak_bound
geak_roof_classify(const struct geak_roof_point *pt)
{
	int has_bw = pt->gbps > 0 && pt->peak_gbps > 0;
	int has_fl = pt->tflops > 0 && pt->peak_tflops > 0;
	double bw = has_bw ? pt->gbps / pt->peak_gbps : 0;
	double fl = has_fl ? pt->tflops / pt->peak_tflops : 0;

	if (!has_bw && !has_fl)
		return GEAK_BOUND_UNKNOWN;
	if (pt->ms > 0 && pt->ms <= GEAK_ROOF_LATENCY_MS && bw < GEAK_ROOF_IDLE && fl < GEAK_ROOF_IDLE)
		return GEAK_BOUND_LATENCY;
	if (!has_bw || !has_fl)
		return GEAK_BOUND_UNKNOWN; /* one roof known: which one binds is not */
	/* intensity < ridge, in FLOP per byte:
	 * tflops*1e12/(gbps*1e9) < peak_tflops*1e12/(peak_gbps*1e9) */
	return pt->tflops * pt->peak_gbps < pt->peak_tflops * pt->gbps ?
	    GEAK_BOUND_MEMORY : GEAK_BOUND_COMPUTE;
}

static json_t *
frac_or_null(double rate, double peak)
{
	return rate > 0 && peak > 0 ? json_real(round(rate / peak * 1e4) / 1e4) : json_null();
}

static void
put_run(json_t *o, const char *suffix, const struct geak_roof_point *pt)
{
	char key[32];

	snprintf(key, sizeof key, "hbm%s", suffix);
	json_object_set_new(o, key, frac_or_null(pt->gbps, pt->peak_gbps));
	snprintf(key, sizeof key, "compute%s", suffix);
	json_object_set_new(o, key, frac_or_null(pt->tflops, pt->peak_tflops));
	snprintf(key, sizeof key, "bound%s", suffix);
	json_object_set_new(o, key, json_string(geak_bound_name(geak_roof_classify(pt))));
}

json_t *
geak_roof_case_json(const struct geak_peaks *p, const char *dtype, double ms, double ms_ref,
    double gbps, double tflops)
{
	enum geak_dtype used;
	struct geak_roof_point pt = { ms, gbps, tflops, 0, 0 };
	json_t *o;

	if (!p || !(ms > 0) || (!(gbps > 0) && !(tflops > 0)))
		return NULL;
	pt.peak_gbps = p->gbps;
	pt.peak_tflops = geak_peak_tflops(p, geak_dtype_named(dtype), &used);
	o = json_pack("{s:s, s:f, s:o}", "dtype", geak_dtype_name(used),
	    "ridge", round(pt.peak_tflops * 1000 / pt.peak_gbps * 100) / 100,
	    "intensity", gbps > 0 && tflops > 0 ?
	    json_real(tflops * 1000 / gbps) : json_null());
	if (!o)
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	put_run(o, "", &pt);
	if (ms_ref > 0) {
		/* The reference did the same work in ms_ref. */
		struct geak_roof_point ref = { ms_ref, gbps * ms / ms_ref, tflops * ms / ms_ref,
			pt.peak_gbps, pt.peak_tflops };
		put_run(o, "_ref", &ref);
	}
	return o;
}

json_t *
geak_peaks_json(const struct geak_peaks *p)
{
	json_t *t, *o;

	if (!p)
		return NULL;
	t = json_object();
	for (int i = 0; i < GEAK_NDTYPES; i++)
		if (p->tflops[i] > 0)
			json_object_set_new(t, dtype_names[i], json_real(p->tflops[i]));
	o = json_pack("{s:s, s:f, s:o, s:f, s:f}", "name", p->name, "hbm_gbps", p->gbps,
	    "tflops", t, "latency_ms", GEAK_ROOF_LATENCY_MS, "idle", GEAK_ROOF_IDLE);
	if (!o)
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	return o;
}

/* ---- the prompts' words ---- */

static double
num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void
put_pct(struct geak_buf *b, double f)
{
	if (f >= 0.095 || f == 0)
		geak_buf_printf(b, "%.0f%%", f * 100);
	else if (f >= 0.001)
		geak_buf_printf(b, "%.1f%%", f * 100);
	else
		geak_buf_printf(b, "under 0.1%%");
}

/* "41% of HBM bandwidth, the reference 38%" */
static int
put_roof(struct geak_buf *b, json_t *r, const char *key, const char *what, int sep)
{
	char refkey[32];
	double f = num(r, key), fr;

	if (isnan(f))
		return sep;
	snprintf(refkey, sizeof refkey, "%s_ref", key);
	fr = num(r, refkey);
	geak_buf_printf(b, "%s", sep ? "; " : "");
	put_pct(b, f);
	geak_buf_printf(b, " of %s", what);
	if (!isnan(fr)) {
		geak_buf_printf(b, ", the reference ");
		put_pct(b, fr);
	}
	return 1;
}

static char *
shape_text(json_t *s)
{
	json_t *shape = json_object_get(s, "shape");
	char *text;

	if (json_is_string(shape))
		return geak_xstrdup(json_string_value(shape));
	text = json_dumps(shape, JSON_COMPACT | JSON_ENCODE_ANY);
	return text ? text : geak_xstrdup("?");
}

static void
case_line(struct geak_buf *b, json_t *s)
{
	json_t *r = json_object_get(s, "roofline");
	const char *bound = geak_get_str(r, "bound"), *bound_ref = geak_get_str(r, "bound_ref");
	char *key = shape_text(s), peak[48];
	int compute_first = bound && !strcmp(bound, "compute"), sep = 0;

	geak_buf_printf(b, "* shape %s: ", key);
	free(key);
	if (!json_is_object(r)) {
		/* Rates without peaks to hold them against. */
		if (num(s, "gbps") > 0)
			geak_buf_printf(b, "%.0f GB/s", num(s, "gbps")), sep = 1;
		if (num(s, "tflops") > 0)
			geak_buf_printf(b, "%s%.3g TFLOP/s", sep ? ", " : "", num(s, "tflops"));
		geak_buf_printf(b, "\n");
		return;
	}
	snprintf(peak, sizeof peak, "the %s compute peak", geak_get_str(r, "dtype") ?
	    geak_get_str(r, "dtype") : "16-bit");
	if (bound && !strcmp(bound, "latency"))
		geak_buf_printf(b, "%.4f ms; ", num(s, "ms"));
	/* The roof that binds first; the other only where the case comes
	 * near it too, or no bound is known. */
	const char *first = compute_first || isnan(num(r, "hbm")) ? "compute" : "hbm";
	const char *other = strcmp(first, "hbm") ? "hbm" : "compute";
	sep = put_roof(b, r, first, strcmp(first, "hbm") ? peak : "HBM bandwidth", sep);
	if (!bound || !strcmp(bound, "unknown") || num(r, other) >= GEAK_ROOF_IDLE)
		sep = put_roof(b, r, other, strcmp(other, "hbm") ? peak : "HBM bandwidth", sep);
	if (!isnan(num(r, "intensity")))
		geak_buf_printf(b, num(r, "intensity") >= 100 ?
		    "%sintensity %.0f FLOP/byte, ridge %.0f" : "%sintensity %.3g FLOP/byte, ridge %.0f",
		    sep ? "; " : "", num(r, "intensity"), num(r, "ridge")), sep = 1;
	if (bound && strcmp(bound, "unknown"))
		geak_buf_printf(b, "%s%s-bound", sep ? "; " : "", bound);
	if (bound_ref && strcmp(bound_ref, "unknown") && (!bound || strcmp(bound, bound_ref)))
		geak_buf_printf(b, " (the reference %s-bound)", bound_ref);
	geak_buf_printf(b, "\n");
}

/* Indexes of the max shapes taking the most time, in their order. */
static size_t
cases_that_matter(json_t *shapes, size_t max, size_t *idx)
{
	size_t n = json_array_size(shapes), k = 0;

	for (size_t i = 0; i < n; i++) {
		double ms = num(json_array_get(shapes, i), "ms");
		size_t at = k;
		while (at > 0 && num(json_array_get(shapes, idx[at - 1]), "ms") < ms)
			at--;
		if (at >= max)
			continue;
		if (k < max)
			k++;
		memmove(idx + at + 1, idx + at, (k - 1 - at) * sizeof *idx);
		idx[at] = i;
	}
	for (size_t i = 1; i < k; i++) /* back in the cases' order */
		for (size_t j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
			size_t t = idx[j];
			idx[j] = idx[j - 1], idx[j - 1] = t;
		}
	return k;
}

char *
geak_roof_text(json_t *eval, size_t max)
{
	json_t *shapes = json_object_get(eval, "shapes"), *s;
	struct geak_buf b = { 0 };
	size_t n = json_array_size(shapes), counted = 0, i, k, *idx;

	if (!n || !max)
		return NULL;
	json_array_foreach(shapes, i, s)
		counted += num(s, "gbps") > 0 || num(s, "tflops") > 0;
	if (!counted)
		return geak_xstrdup("The performance cases give no byte or operation counts: "
		    "no roofline figures.");
	if (!json_is_object(json_object_get(eval, "peaks"))) {
		const char *dev = geak_get_str(eval, "device");
		geak_buf_printf(&b, "The peaks of the device (%s) are not known: rates only.\n",
		    dev ? dev : "unnamed");
	}
	idx = geak_xcalloc(max, sizeof *idx);
	k = cases_that_matter(shapes, max, idx);
	for (i = 0; i < k; i++)
		case_line(&b, json_array_get(shapes, idx[i]));
	if (n > k)
		geak_buf_printf(&b, "(%zu shorter case%s not shown)\n", n - k, n - k == 1 ? "" : "s");
	if (counted < n)
		geak_buf_printf(&b, "(%zu case%s without byte or operation counts)\n", n - counted,
		    n - counted == 1 ? "" : "s");
	free(idx);
	if (b.len && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	return geak_buf_steal(&b);
}
