/* recpool.h: the record loop of every geak tool.  One thread reads, slot
 * threads work on several records at once, and the calling thread writes
 * every record out, in input order (or as each is done).
 *
 * Every input line comes out exactly once, in its place:
 *   - a line that is not a record, as the reader's error record (stage
 *     "input", kind "bad_record", the raw line kept);
 *   - a record with a field of the wrong type (geak_check_record), with
 *     an error of stage "input", kind "bad_field", naming the field;
 *   - a record that arrived with an error, and one the stage left alone
 *     (GEAK_PASS), byte for byte as read;
 *   - a record the stage changed (GEAK_DONE) or gave an error
 *     (GEAK_FAILED), as its new JSON;
 *   - a record that split made into several, as those records, in order.
 * Each of the first two is also reported on stderr as "prog: file:line:
 * what is wrong". */
#ifndef GEAK_RECPOOL_H
#define GEAK_RECPOOL_H

#include <stddef.h>
#include <jansson.h>

struct geak_pool {
	char *const *paths;       /* input files; none: stdin */
	int npaths;
	long shard, shards;       /* a slice of the input (geak_input_set_shard);
	                           * shards 0 or 1: all of it */
	/* Instead of reading files: records the tool makes, one per call in
	 * the reading thread, NULL after the last.  One that carries an
	 * error counts as failed. */
	json_t *(*source)(void *arg);
	long nslots;              /* slot threads; 0 counts as 1 */
	void **slots;             /* each slot thread's context; NULL: arg */
	int unordered;            /* write each record when it is done */
	int sink;                 /* write nothing: fn keeps what it needs */
	int all;                  /* fn sees records with an error too */
	/* The first SIGINT or SIGTERM stops the loop: no record is started
	 * after it, those in the slots are finished, nothing more is
	 * written, and the process then ends by that signal as if it had
	 * not been caught.  A second SIGINT ends it at once.  A signal that
	 * was ignored when the loop started stays ignored. */
	int stoppable;
	/* In the reading thread, for each record fn is to see: how many
	 * records it stands for.  1: the record itself; n > 1: the n records
	 * put in *parts (a malloc'd array; the loop takes them and the
	 * record), each given to fn and all written in the record's place;
	 * 0: none, the record is written as it is now (failed when split
	 * attached an error, else byte for byte as read).  A record split
	 * keeps is written as new JSON even when fn leaves it alone, since
	 * split may have changed it.  NULL: every record is itself. */
	size_t (*split)(void *arg, json_t *rec, const char *where, json_t ***parts);
	/* In a slot thread: GEAK_DONE, GEAK_PASS or GEAK_FAILED.  NULL: every
	 * record is GEAK_DONE. */
	int (*fn)(void *slot, json_t *rec, const char *where);
	void (*slot_end)(void *slot);   /* as a slot's thread ends; may be NULL */
	/* Once per record written (or, with sink, dropped), in the calling
	 * thread: its verdict.  May be NULL. */
	void (*written)(void *arg, int verdict);
	void *arg;
};

/* Run the loop to the end of the input; the tool's exit status: 0, 1
 * when some record failed, 3 when input could not be read or output not
 * written (lib/util.h). */
int geak_pool_run(struct geak_pool *p);

#endif
