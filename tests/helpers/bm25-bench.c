/* bm25-bench: time loading an index and searching it, in one process, for
 * tests/bench/retrieve-speed.sh.
 *
 *   bm25-bench INDEX RECORDS [instruction|code]
 *
 * Each record's task.instruction (or code) is one query; a record with
 * task.reference is also run through the leakage guard.  Prints one line
 * of key=value numbers: the load time, and the median, 99th percentile
 * and mean time per query in milliseconds, with and without the guard. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bm25.h"
#include "record.h"
#include "util.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
report(const char *name, double *ms, size_t n)
{
	double sum = 0;

	if (n == 0) {
		printf(" %s_n=0", name);
		return;
	}
	qsort(ms, n, sizeof *ms, cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += ms[i];
	printf(" %s_n=%zu %s_p50_ms=%.3f %s_p99_ms=%.3f %s_mean_ms=%.3f", name, n,
		name, ms[n / 2], name, ms[(size_t)((double)(n - 1) * 0.99)], name, sum / (double)n);
}

int
main(int argc, char **argv)
{
	struct geak_index *ix;
	struct geak_input *in;
	struct geak_hit hits[3];
	json_t *rec;
	char err[300];
	int code_mode = argc > 3 && strcmp(argv[3], "code") == 0, r;
	double t0, load_ms, *plain = NULL, *guarded = NULL;
	size_t nplain = 0, nguarded = 0, cap = 0;
	unsigned char *excluded;

	geak_setprog(argv[0]);
	if (argc < 3)
		geak_die(GEAK_EXIT_USAGE, "usage: bm25-bench INDEX RECORDS [instruction|code]");
	t0 = geak_now();
	if (!(ix = geak_index_open(argv[1], err, sizeof err)))
		geak_die(GEAK_EXIT_FATAL, "%s", err);
	load_ms = (geak_now() - t0) * 1e3;
	excluded = geak_xcalloc(geak_index_count(ix) + 1, 1);
	in = geak_input_open(argv + 2, 1);
	while ((r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		const char *q, *ref;
		if (r != GEAK_READ_OK)
			geak_die(GEAK_EXIT_FATAL, "%s: bad record", geak_input_where(in));
		q = geak_get_str(rec, code_mode ? "code" : "task.instruction");
		ref = geak_get_str(rec, "task.reference");
		if (nplain == cap) {
			cap = cap ? cap * 2 : 256;
			plain = geak_xrealloc(plain, cap * sizeof *plain);
			guarded = geak_xrealloc(guarded, cap * sizeof *guarded);
		}
		if (q) {
			t0 = geak_now();
			geak_index_search(ix, code_mode ? GEAK_FIELD_CODE : GEAK_FIELD_INSTRUCTION,
				q, strlen(q), NULL, 3, hits);
			plain[nplain++] = (geak_now() - t0) * 1e3;
		}
		if (q && ref) {
			t0 = geak_now();
			memset(excluded, 0, geak_index_count(ix));
			geak_index_near_duplicates(ix, ref, strlen(ref), 0.8, excluded);
			geak_index_search(ix, code_mode ? GEAK_FIELD_CODE : GEAK_FIELD_INSTRUCTION,
				q, strlen(q), excluded, 3, hits);
			guarded[nguarded++] = (geak_now() - t0) * 1e3;
		}
		json_decref(rec);
	}
	geak_input_close(in);
	printf("entries=%zu load_ms=%.3f", geak_index_count(ix), load_ms);
	report("query", plain, nplain);
	report("guarded", guarded, nguarded);
	printf("\n");
	free(plain);
	free(guarded);
	free(excluded);
	geak_index_close(ix);
	return geak_fshut(stdout, "stdout") < 0 ? GEAK_EXIT_FATAL : GEAK_EXIT_OK;
}
