/* llmretry.c: the retry policy.  Transient: 408 (timeout), 409 (conflict,
 * e.g. a busy lock), 429 (rate limit), every 5xx including Anthropic's 529
 * (overloaded).  Never retried: 400, 401, 403, 404, 422 and other 4xx:
 * asking again cannot change the answer. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "llm/llmint.h"

#define BACKOFF_FIRST 0.5 /* seconds before the second attempt */

int
geak_llm_retryable_status(long status)
{
	return status == 408 || status == 409 || status == 429 ||
	    (status >= 500 && status <= 599);
}

/* Exponential back-off with jitter that shortens each wait by up to a
 * quarter, so that parallel clients do not retry in lock-step. */
double
geak_llm_backoff(int attempt, double cap)
{
	double d = BACKOFF_FIRST * pow(2.0, attempt > 2 ? attempt - 2 : 0);

	if (d > cap)
		d = cap;
	return d * (1.0 - 0.25 * ((double)rand() / RAND_MAX));
}

static int
parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s) && *s != '.')
		return -1;
	v = strtod(s, &end);
	while (isspace((unsigned char)*end))
		end++;
	if (*end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static double
clamp(double d, double cap)
{
	return d < 0 ? 0 : d > cap ? cap : d;
}

double
geak_llm_retry_delay(int attempt, const char *retry_after_ms, const char *retry_after,
	double cap)
{
	double d;
	time_t when;

	if (retry_after_ms && parse_seconds(retry_after_ms, &d) == 0)
		return clamp(d / 1000.0, cap);
	if (retry_after && parse_seconds(retry_after, &d) == 0)
		return clamp(d, cap);
	/* An HTTP date; one in the past means "now". */
	if (retry_after && (when = curl_getdate(retry_after, NULL)) != -1)
		return clamp(difftime(when, time(NULL)), cap);
	return geak_llm_backoff(attempt, cap);
}
