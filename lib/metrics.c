/* metrics.c: pass@k and the speedup means. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "metrics.h"
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
