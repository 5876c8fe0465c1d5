/* metrics.h: the numbers a benchmark run is judged by (see geak-select(1)). */
#ifndef GEAK_METRICS_H
#define GEAK_METRICS_H

#include <stddef.h>

/* Unbiased pass@k estimate for one task from n independent samples of
 * which c passed: 1 - C(n-c, k)/C(n, k).  NAN when k < 1, k > n or c is
 * outside 0..n, since the estimator is undefined there. */
double geak_pass_at_k(long n, long c, long k);

/* Arithmetic and geometric mean of v[0..n-1]; NAN when n is 0 (and for
 * the geometric mean when any value is not positive). */
double geak_mean(const double *v, size_t n);
double geak_geomean(const double *v, size_t n);

/* Parse a comma-separated list of positive integers ("1,2,5") into a
 * fresh array; -1 when the text is not such a list. */
int geak_parse_k_list(const char *text, long **ks, size_t *nks);

/* Peak bandwidth (GB/s) and dense 16-bit arithmetic rate (TFLOP/s) of a
 * device, found by its name; both 0 when the device is not known. */
void geak_device_peaks(const char *device, double *gbps, double *tflops);

/* What a performance case's achieved rate (a perf script's GB/s or
 * TFLOP/s at the candidate's median ms) says against the device's peak,
 * with 5% slack.  The reference did the same work in ms_ref, so its rate
 * is rate * ms / ms_ref: when that is above the peak too, the script
 * counts bytes or flops that are never moved, and says nothing. */
enum geak_roof { GEAK_ROOF_BELOW, GEAK_ROOF_ABOVE, GEAK_ROOF_UNRELIABLE };
enum geak_roof geak_roofline_case(double rate, double peak, double ms, double ms_ref);

#endif
