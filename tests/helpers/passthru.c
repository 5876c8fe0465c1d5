/* passthru: the library's filter loop with a no-op stage, for testing and
 * benchmarking record I/O on its own. */
#include <stdlib.h>
#include <string.h>

#include "record.h"

static int
touch(json_t *rec, const char *where, void *ctx)
{
	(void)where, (void)ctx;
	/* A stage that requires a string 'id' when present: enough to show
	 * type errors become error records. */
	static const struct geak_field spec[] = {
		{ "id", GEAK_T_STRING, 0 },
		{ NULL, 0, 0 },
	};
	char msg[300];

	if (geak_check_fields(rec, spec, msg, sizeof msg) < 0) {
		geak_warn("%s: %s", where, msg);
		geak_set_error(rec, "input", "bad_field", "%s", msg);
		return GEAK_FAILED;
	}
	return getenv("PASSTHRU_REWRITE") ? GEAK_DONE : GEAK_PASS;
}

int
main(int argc, char **argv)
{
	geak_setprog(argv[0]);
	return geak_filter(argv + 1, argc - 1, touch, NULL);
}
