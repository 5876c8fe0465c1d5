/* roof-fill: the roofline figures of each eval.shapes[] case that has a
 * rate, as geak-eval adds them after timing on the device named by
 * eval.device, for tests that make evaluated records without a GPU.
 * A case's element type is its "dtype" (a torch name), else float16. */
#include "record.h"
#include "recpool.h"
#include "roofline.h"

static int
fill(void *arg, json_t *rec, const char *where)
{
	json_t *eval = json_object_get(rec, "eval"), *s;
	const struct geak_peaks *p = geak_peaks_find(geak_get_str(eval, "device"));
	size_t i;

	(void)arg, (void)where;
	json_array_foreach(json_object_get(eval, "shapes"), i, s) {
		json_t *ms_ref = json_object_get(s, "ms_ref");
		json_t *r = geak_roof_case_json(p, geak_get_str(s, "dtype"),
		    json_number_value(json_object_get(s, "ms")),
		    json_is_number(ms_ref) ? json_number_value(ms_ref) : -1,
		    json_number_value(json_object_get(s, "gbps")),
		    json_number_value(json_object_get(s, "tflops")));
		json_object_del(s, "dtype");
		if (r) {
			json_object_set_new(s, "roofline", r);
			if (!json_object_get(eval, "peaks"))
				json_object_set_new(eval, "peaks", geak_peaks_json(p));
		}
	}
	return GEAK_DONE;
}

int
main(int argc, char **argv)
{
	struct geak_pool pool = { .paths = argv + 1, .npaths = argc - 1, .fn = fill, .nslots = 1 };

	geak_setprog(argv[0]);
	return geak_pool_run(&pool);
}
