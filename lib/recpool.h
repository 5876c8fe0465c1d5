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

#include "util.h"

/* From fn: nothing can be done with this record or with any other (the
 * tool's set-up does not work, and fn has said why, once): no record
 * starts after it, those in the slots finish, nothing more is written,
 * and the loop returns GEAK_EXIT_FATAL. */
#define GEAK_ABORT 3

/* What the loop has done so far, for the progress line and the summary. */
struct geak_pool_stats {
	size_t total;             /* records to come out in all; 0: not known */
	int estimated;            /* total is an estimate: input is still read */
	size_t read;              /* records read, made or split into so far */
	size_t written;           /* records out */
	size_t in_flight;         /* records a slot is working on */
	size_t done;              /* records fn changed (GEAK_DONE) */
	size_t passed;            /* records fn or split left alone (GEAK_PASS) */
	size_t had_error;         /* records that came with an error: passed on */
	size_t failed;            /* records that came out with a new error */
	double elapsed;           /* seconds since the loop started */
	int stopped;              /* the signal that stopped the loop; -1:
	                           * aborted (GEAK_ABORT); 0: neither */
};

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
	/* In a slot thread: GEAK_DONE, GEAK_PASS, GEAK_FAILED or GEAK_ABORT.
	 * NULL: every record is GEAK_DONE. */
	int (*fn)(void *slot, json_t *rec, const char *where);
	void (*slot_end)(void *slot);   /* as a slot's thread ends; may be NULL */
	/* Once per record written (or, with sink, dropped), in the calling
	 * thread: its verdict.  May be NULL. */
	void (*written)(void *arg, int verdict);
	void *arg;
	/* For a tool whose records take time: what fn does to a record, as
	 * the closing summary says it ("37 evaluated").  The loop then shows
	 * a progress line (lib/progress.h) and, at the end, always, a summary
	 * of one line on stderr.  NULL: neither. */
	const char *noun;
	/* The tool's own counts, each appended after ", ", to the progress
	 * line (final 0) or to the summary (final 1), whose counts should say
	 * why the records in st->passed were left alone.  In the writing
	 * thread.  NULL: the summary says "N passed through". */
	void (*tally)(void *arg, const struct geak_pool_stats *st, struct geak_buf *line,
		int final);
};

/* Run the loop to the end of the input; the tool's exit status: 0, 1
 * when some record failed, 3 when input could not be read, output not
 * written, or fn gave up (GEAK_ABORT) (lib/util.h). */
int geak_pool_run(struct geak_pool *p);

#endif
