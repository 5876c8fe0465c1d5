/* metrics.c: pass@k, the speedup means and the roofline. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/metrics.h"
#include "roofline.h"
#include "util.h"

double
geak_pass_at_k(long n, long c, long k)
{
	double miss = 1.0;

	if (k < 1 || k > n || c < 0 || c > n)
		return NAN;
	if (n - c < k)
		return 1.0; /* every draw of k includes a pass */
	/* C(n-c,k)/C(n,k) as a product of ratios below 1: no factorials,
	 * no overflow for any n. */
	for (long i = n - c + 1; i <= n; i++)
		miss *= 1.0 - (double)k / (double)i;
	return 1.0 - miss;
}

double
geak_mean(const double *v, size_t n)
{
	double sum = 0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

double
geak_geomean(const double *v, size_t n)
{
	double logs = 0;

	if (n == 0)
		return NAN;
	/* Mean of logs: the product of many speedups would overflow. */
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] > 0))
			return NAN;
		logs += log(v[i]);
	}
	return exp(logs / (double)n);
}

int
geak_parse_k_list(const char *text, long **ks, size_t *nks)
{
	const char *p = text;
	char *end;
	long *list = NULL;
	size_t n = 0;

	if (!text || !*text)
		return -1;
	for (;;) {
		errno = 0;
		long k = strtol(p, &end, 10);
		if (end == p || errno || k < 1 || (*end && *end != ',')) {
			free(list);
			return -1;
		}
		list = geak_xrealloc(list, (n + 1) * sizeof *list);
		list[n++] = k;
		if (!*end)
			break;
		p = end + 1;
	}
	*ks = list;
	*nks = n;
	return 0;
}

void
geak_device_peaks(const char *device, double *gbps, double *tflops)
{
	const struct geak_peaks *p = geak_peaks_find(device);

	*gbps = p ? p->gbps : 0;
	*tflops = p ? geak_peak_tflops(p, GEAK_DT_FP16, NULL) : 0;
}

enum geak_roof
geak_roofline_case(double rate, double peak, double ms, double ms_ref)
{
	const double slack = 1.05;

	if (!(peak > 0) || !(rate > peak * slack))
		return GEAK_ROOF_BELOW;
	if (ms > 0 && ms_ref > 0 && rate * ms / ms_ref > peak * slack)
		return GEAK_ROOF_UNRELIABLE;
	return GEAK_ROOF_ABOVE;
}
