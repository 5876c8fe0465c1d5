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

/* What the hardware counters say of a kernel, the figures that are there. */
static void
put_counters(struct geak_buf *b, json_t *c)
{
	static const struct { const char *key, *fmt; } pct[] = {
		{ "sm_pct", "SM %.0f%%" }, { "memory_pct", "memory %.0f%%" }, { "dram_pct", "DRAM %.0f%%" },
		{ "l1_hit_pct", "L1 hit %.0f%%" }, { "l2_hit_pct", "L2 hit %.0f%%" },
	};
	int n = 0;

	if (!json_is_object(c))
		return;
	geak_buf_printf(b, "; counters:");
	for (size_t i = 0; i < sizeof pct / sizeof *pct; i++)
		if (!isnan(num(c, pct[i].key))) {
			geak_buf_printf(b, n++ ? ", " : " ");
			geak_buf_printf(b, pct[i].fmt, num(c, pct[i].key));
		}
	if (!isnan(num(c, "dram_gbps")))
		geak_buf_printf(b, "%s%.0f GB/s DRAM", n++ ? ", " : " ", num(c, "dram_gbps"));
	if (!isnan(num(c, "occupancy_pct"))) {
		geak_buf_printf(b, "%sachieved occupancy %.0f%%", n++ ? ", " : " ", num(c, "occupancy_pct"));
		if (!isnan(num(c, "occupancy_theoretical_pct")))
			geak_buf_printf(b, " of %.0f%%", num(c, "occupancy_theoretical_pct"));
	}
	if (!isnan(num(c, "waves_per_sm")))
		geak_buf_printf(b, "%s%.2g waves a SM", n++ ? ", " : " ", num(c, "waves_per_sm"));
	if (!n)
		geak_buf_printf(b, " none read");
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
	put_counters(b, json_object_get(k, "counters"));
}

/* Where the counters come from, or why there are none. */
static void
counters_line(struct geak_buf *b, json_t *c)
{
	if (!json_is_object(c))
		return;
	if (json_is_true(json_object_get(c, "available"))) {
		const char *v = geak_get_str(c, "version");
		geak_buf_printf(b, "\n* hardware counters: %s%s%s%s, %% of the device's peak",
		    geak_get_str(c, "tool") ? geak_get_str(c, "tool") : "profiler", v ? " (" : "",
		    v ? v : "", v ? ")" : "");
		return;
	}
	geak_buf_printf(b, "\n* hardware counters: none (%s)", geak_get_str(c, "message") ?
	    geak_get_str(c, "message") : "not read");
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
	counters_line(&b, json_object_get(profile, "counters"));
	return geak_buf_steal(&b);
}
