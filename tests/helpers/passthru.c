/* passthru: the record loop with a stage that does nothing, for testing
 * and benchmarking record I/O and the loop on their own.
 *
 *   PASSTHRU_REWRITE=1    every record is written as new JSON (GEAK_DONE)
 *   PASSTHRU_JOBS=N       N slot threads, each record held a little
 *   PASSTHRU_UNORDERED=1  written as done, not in input order
 *   PASSTHRU_SPLIT=N      every record made into N, numbered in "part" */
#include <stdlib.h>
#include <time.h>

#include "record.h"
#include "recpool.h"

static long parts;

static int
touch(void *arg, json_t *rec, const char *where)
{
	(void)arg, (void)where;
	if (getenv("PASSTHRU_JOBS")) {
		/* Later records finish first, so that an unordered loop shows it. */
		json_t *n = json_object_get(rec, "n");
		long ms = json_is_integer(n) ? 20 - (long)json_integer_value(n) % 20 : 1;
		nanosleep(&(struct timespec){ 0, ms * 1000000L }, NULL);
	}
	return getenv("PASSTHRU_REWRITE") || parts > 1 ? GEAK_DONE : GEAK_PASS;
}

static size_t
split(void *arg, json_t *rec, const char *where, json_t ***out)
{
	(void)arg, (void)where;
	*out = geak_xcalloc((size_t)parts, sizeof **out);
	for (long i = 0; i < parts; i++) {
		(*out)[i] = geak_json_copy(rec);
		json_object_set_new((*out)[i], "part", json_integer(i));
	}
	return (size_t)parts;
}

int
main(int argc, char **argv)
{
	const char *jobs = getenv("PASSTHRU_JOBS"), *n = getenv("PASSTHRU_SPLIT");
	struct geak_pool pool = { .paths = argv + 1, .npaths = argc - 1, .fn = touch };

	geak_setprog(argv[0]);
	parts = n ? atol(n) : 1;
	pool.nslots = jobs ? atol(jobs) : 1;
	pool.unordered = getenv("PASSTHRU_UNORDERED") != NULL;
	if (parts > 1)
		pool.split = split;
	return geak_pool_run(&pool);
}
