/* recpool.h: the record loop of a filter that works on several records at
 * once: one thread reads, one per slot works, and the calling thread
 * writes every record out, in input order (or as each is done).
 *
 * Every input line comes out exactly once: a record the slot changed
 * (GEAK_DONE) or gave an error (GEAK_FAILED) as its new JSON, one it left
 * alone (GEAK_PASS), one that arrived with an error, and a line that is
 * not a record (as the reader's error record) byte for byte as read. */
#ifndef GEAK_RECPOOL_H
#define GEAK_RECPOOL_H

#include <jansson.h>

struct geak_pool {
	char *const *paths;       /* input files; none: stdin */
	int npaths;
	long nslots;
	int unordered;            /* write each record when it is done */
	void **slots;             /* each slot thread's context */
	/* In slot thread i: GEAK_DONE, GEAK_PASS or GEAK_FAILED. */
	int (*fn)(void *slot, json_t *rec, const char *where);
	void (*slot_end)(void *slot);   /* when the slot's thread ends; may be NULL */
	/* Once per record written, in the writer: its verdict. */
	void (*written)(void *arg, int verdict);
	void *arg;
};

/* Run the loop; the tool's exit status (GEAK_EXIT_*). */
int geak_pool_run(struct geak_pool *p);

#endif
