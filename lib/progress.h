/* progress.h: the live progress line of a long run, and the numbers in
 * it and in a closing summary.
 *
 * On a terminal the line is drawn at the foot of stderr and rewritten in
 * place (geak_status_draw, util.h); messages go above it.  Under a loop
 * that draws one line for all its stages (GEAK_STATUS_DIR names a
 * folder), it is written to DIR/PROG instead, for the loop to show, and
 * the file is removed at the end.  Anywhere else (a pipe, a log) nothing
 * is shown: progress never goes into records or logs. */
#ifndef GEAK_PROGRESS_H
#define GEAK_PROGRESS_H

#include "util.h"

enum { GEAK_PROGRESS_OFF, GEAK_PROGRESS_TTY, GEAK_PROGRESS_FILE };

struct geak_progress {
	int mode;
	char *path, *tmp;   /* GEAK_PROGRESS_FILE: DIR/PROG and its next version */
	double every;       /* seconds between updates */
	double last;        /* when the line was last shown */
	char *shown;        /* the line shown last */
};

/* Decide where the line goes, from stderr and GEAK_STATUS_DIR. */
void geak_progress_init(struct geak_progress *p);
/* Show line, unless it was shown less than p->every ago (or, at the
 * start, less than a second has passed); with force, whatever the time.
 * Nothing when the mode is off or the line is the one shown. */
void geak_progress_show(struct geak_progress *p, const char *line, int force);
/* Take the line away (the terminal's, or the file) and free p. */
void geak_progress_end(struct geak_progress *p);

/* "37s", "4m10s", "2h05m". */
void geak_fmt_duration(struct geak_buf *b, double seconds);
/* "950", "12.3k", "4.56M". */
void geak_fmt_count(struct geak_buf *b, double n);
/* A cost in US dollars: "$0.0042", "$1.58", "$1234". */
void geak_fmt_cost(struct geak_buf *b, double usd);

#endif
