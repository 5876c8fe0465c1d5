/* passthru: the record loop with a stage that does nothing, for testing
 * and benchmarking record I/O on its own. */
#include <stdlib.h>

#include "record.h"
#include "recpool.h"

static int
touch(void *arg, json_t *rec, const char *where)
{
	(void)arg, (void)rec, (void)where;
	return getenv("PASSTHRU_REWRITE") ? GEAK_DONE : GEAK_PASS;
}

int
main(int argc, char **argv)
{
	struct geak_pool pool = { .paths = argv + 1, .npaths = argc - 1, .fn = touch };

	geak_setprog(argv[0]);
	return geak_pool_run(&pool);
}
