/* kprofile.c: a kernel profile in the prompts' words. */
#include <math.h>
#include <string.h>

#include "kprofile.h"
#include "record.h"
#include "util.h"

static double
num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void
put_dims(struct geak_buf *b, const char *what, json_t *dims)
{
	json_t *d;
	size_t i;

	if (!json_is_array(dims))
		return;
	geak_buf_printf(b, ", %s ", what);
	json_array_foreach(dims, i, d)
		geak_buf_printf(b, "%s%lld", i ? "x" : "", (long long)json_number_value(d));
}

static void
kernel_line(struct geak_buf *b, json_t *k)
{
	const char *name = geak_get_str(k, "name");
	double launches = num(k, "launches");

	geak_buf_printf(b, "\n* ");
	if (!isnan(num(k, "share")))
		geak_buf_printf(b, "%.0f%% ", num(k, "share") * 100);
	geak_buf_printf(b, "%s: %g launch%s, %.1f us", name ? name : "?", launches,
	    launches == 1 ? "" : "es", num(k, "us"));
	put_dims(b, "grid", json_object_get(k, "grid"));
	put_dims(b, "block", json_object_get(k, "block"));
	if (!isnan(num(k, "registers")))
		geak_buf_printf(b, ", %g registers a thread", num(k, "registers"));
	if (!isnan(num(k, "shared_bytes")))
		geak_buf_printf(b, ", %g B shared memory", num(k, "shared_bytes"));
	if (!isnan(num(k, "occupancy_pct")))
		geak_buf_printf(b, ", occupancy about %.0f%%", num(k, "occupancy_pct"));
}

char *
geak_kprofile_text(json_t *profile, size_t max)
{
	struct geak_buf b = { 0 };
	json_t *kernels = json_object_get(profile, "kernels"), *k;
	json_t *others = json_object_get(profile, "others");
	size_t n = json_array_size(kernels), i, rest = 0;
	double rest_share = 0;

	if (!json_is_object(profile))
		return NULL;
	if (!json_is_true(json_object_get(profile, "available"))) {
		const char *why = geak_get_str(profile, "message");
		return geak_xasprintf("Kernel profile: none (%s).", why ? why : "not made");
	}
	geak_buf_printf(&b, "Kernel profile of shape %s (%s, per call over %g calls): "
	    "%g launches, %.1f us on the device", geak_get_str(profile, "case") ?
	    geak_get_str(profile, "case") : "?", geak_get_str(profile, "tool") ?
	    geak_get_str(profile, "tool") : "profiler", num(profile, "calls"),
	    num(profile, "launches"), num(profile, "device_us"));
	json_array_foreach(kernels, i, k) {
		if (i < max) {
			kernel_line(&b, k);
			continue;
		}
		rest++;
		rest_share += num(k, "share") > 0 ? num(k, "share") : 0;
	}
	rest += (size_t)(num(others, "kernels") > 0 ? num(others, "kernels") : 0);
	rest_share += num(others, "share") > 0 ? num(others, "share") : 0;
	if (rest)
		geak_buf_printf(&b, "\n* %.0f%% in %zu other kernel%s", rest_share * 100, rest,
		    rest == 1 ? "" : "s");
	if (!n)
		geak_buf_printf(&b, "\n* no kernel was seen on the device");
	return geak_buf_steal(&b);
}
