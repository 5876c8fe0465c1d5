/* memory.h: the optimiser's memory inside a record: the list of best
 * correct candidates and the debugging-trap counter (geak-opt(1)). */
#ifndef GEAK_MEMORY_H
#define GEAK_MEMORY_H

#include <stddef.h>
#include <jansson.h>

/* What the evaluation of the record's current code says. */
enum geak_outcome {
	GEAK_OUT_NONE,      /* no eval, an eval of older code, or a harness
	                     * failure (the evaluator's, not the code's) */
	GEAK_OUT_CALL_FAIL, /* the code did not run */
	GEAK_OUT_WRONG,     /* it ran but its output was wrong */
	GEAK_OUT_FLAGGED,   /* correct, but the evaluator flagged it */
	GEAK_OUT_CORRECT,   /* correct and unflagged */
};
enum geak_outcome geak_outcome(json_t *rec);
const char *geak_outcome_name(enum geak_outcome o);

/* Total kernel time in ms over the eval's shapes; NAN when any shape
 * lacks a time or there are none. */
double geak_eval_ms(json_t *eval);

/* Order of best entries: negative when a is slower than b.  Speedup
 * decides; an entry without one is slower than any entry with one; then
 * lower total ms is faster. */
int geak_best_cmp(json_t *a, json_t *b);

/* Add entry to best (ordered slowest first), keeping at most max entries
 * by evicting the slowest.  A full list takes only an entry strictly
 * faster than its slowest; a code already listed is not added twice.
 * Steals entry.  1 when added, 0 when not. */
int geak_best_add(json_t *best, json_t *entry, size_t max);

/* The best entry for the record's current, correct candidate. */
json_t *geak_best_entry(json_t *rec);

enum geak_count_rule {
	GEAK_COUNT_V1, /* count failed rounds only while best is non-empty */
	GEAK_COUNT_V2, /* count every failed round */
};

enum geak_next {
	GEAK_NEXT_NONE,     /* nothing to do: not evaluated */
	GEAK_NEXT_DEBUG,    /* failed: leave it to geak-gen's debug mode */
	GEAK_NEXT_OPTIMIZE, /* passed: make a faster version */
	GEAK_NEXT_RESTART,  /* drop this lineage: it failed max_debug times,
	                     * or it was flagged (geak-gen does not debug
	                     * a candidate that passed its test) */
};

struct geak_memory_opts {
	size_t ancestors;          /* capacity of best */
	long max_debug;            /* debugging-trap cap: debug rounds a failing
	                            * lineage gets before it is dropped */
	enum geak_count_rule rule;
};

/* Fold the record's evaluated attempt into best and perf_debug and say
 * what the loop does next.  Touches only best and perf_debug. */
enum geak_next geak_memory_update(json_t *rec, const struct geak_memory_opts *o);

#endif
