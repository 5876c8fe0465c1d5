/* roofline.h: where a timed performance case stands against the device's
 * roofs: achieved bandwidth and arithmetic rate as fractions of the
 * device's peaks, its arithmetic intensity against the ridge point, and
 * the roof that bounds it (geak-record(5), eval.shapes[].roofline). */
#ifndef GEAK_ROOFLINE_H
#define GEAK_ROOFLINE_H

#include <stddef.h>
#include <jansson.h>

/* The element types a peak is known for. */
enum geak_dtype { GEAK_DT_FP64, GEAK_DT_FP32, GEAK_DT_TF32, GEAK_DT_FP16, GEAK_DT_BF16,
	GEAK_DT_FP8, GEAK_DT_INT8, GEAK_NDTYPES };

/* A device's vendor peaks for dense math: HBM bandwidth in GB/s and
 * TFLOP/s (TOP/s for int8) per element type, 0 where not known. */
struct geak_peaks {
	const char *name;             /* "H200", "MI300X", ... */
	double gbps;
	double tflops[GEAK_NDTYPES];
};

/* A kernel whose median time is at most this many ms and that reaches
 * under GEAK_ROOF_IDLE of every roof it is measured against is bounded by
 * launch and latency costs, not by either roof: a few launch overheads
 * (about 5 us each from Python on current GPUs) and too little work to
 * fill the device's memory pipes or its compute units. */
#define GEAK_ROOF_LATENCY_MS 0.05
#define GEAK_ROOF_IDLE 0.10

/* The peaks of a device found by its name (eval.device), or NULL. */
const struct geak_peaks *geak_peaks_find(const char *device);
/* A torch dtype's name ("float16", "torch.bfloat16") as the type whose
 * peak applies, or -1.  float32 is measured against the TF32 tensor
 * peak where the device has one: tl.dot uses TF32 for float32 by
 * default, and an element-wise float32 kernel is memory-bound anyway. */
int geak_dtype_named(const char *name);
const char *geak_dtype_name(enum geak_dtype t);
/* The peak for type t on p, falling back to the 16-bit one when t is
 * unknown (-1) or the table has none for it; *used says which. */
double geak_peak_tflops(const struct geak_peaks *p, int t, enum geak_dtype *used);

enum geak_bound { GEAK_BOUND_UNKNOWN, GEAK_BOUND_MEMORY, GEAK_BOUND_COMPUTE,
	GEAK_BOUND_LATENCY };
const char *geak_bound_name(enum geak_bound b);

/* One run of a case against the roofs. */
struct geak_roof_point {
	double ms;             /* median time */
	double gbps, tflops;   /* achieved; 0: the suite gives no count */
	double peak_gbps, peak_tflops;
};

/* The roof that bounds a run: latency when the run is short and far below
 * every roof it is measured against; else memory when its intensity
 * (tflops*1000/gbps FLOP per byte) is below the ridge point
 * (peak_tflops*1000/peak_gbps), compute when at or above it; unknown
 * without a byte count, an operation count or the device's peaks. */
enum geak_bound geak_roof_classify(const struct geak_roof_point *pt);

/* The eval.shapes[].roofline object for a case (new reference), or NULL
 * when the case has no counts or the device no peaks: intensity, ridge,
 * dtype, hbm and compute fractions for the candidate and (ms_ref > 0)
 * the reference, and the bound of each. */
json_t *geak_roof_case_json(const struct geak_peaks *p, const char *dtype, double ms,
	double ms_ref, double gbps, double tflops);
/* eval.peaks for the device (new reference), or NULL when not known. */
json_t *geak_peaks_json(const struct geak_peaks *p);

/* Cases the prompts show the roofline of. */
#define GEAK_ROOF_CASES 3

/* The roofline as the prompts show it: a line per case that matters (the
 * max cases taking the most of the candidate's time, in their order),
 * e.g. "shape 3: 41% of HBM bandwidth, the reference 38%; memory-bound",
 * a line saying how many are left out, or one line saying why there are
 * no figures.  NULL when the eval has no timed case.  Caller frees. */
char *geak_roof_text(json_t *eval, size_t max);

#endif
