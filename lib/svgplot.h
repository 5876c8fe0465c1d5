/* svgplot.h: the report's charts as inline SVG of a fixed size, so that
 * a page of 215 tasks is as tall as a page of 3: grouped bars (nothing
 * can hide behind another series, as lines can) and a histogram on a
 * log axis. */
#ifndef GEAK_SVGPLOT_H
#define GEAK_SVGPLOT_H

#include <stddef.h>
#include <jansson.h>

#include "util.h"

enum geak_svg_fmt { GEAK_SVG_PERCENT, GEAK_SVG_SPEEDUP, GEAK_SVG_COUNT, GEAK_SVG_USD };

struct geak_series {
	const char *name;  /* the legend's */
	const char *key;   /* the field of each row */
};

/* HTML text: < > & and " escaped. */
void geak_svg_escape(struct geak_buf *b, const char *s);

/* For each row a group of bars, one per series (rows[i][ser.key]; a
 * value that is not a number leaves its place empty), labelled below by
 * rows[i][xkey], values above the bars while they fit. */
void geak_svg_bars(struct geak_buf *b, const char *title, const char *caption, json_t *rows,
	const char *xkey, const char *xlabel, const struct geak_series *ser, size_t nser,
	enum geak_svg_fmt fmt);

/* How many of v[0..n-1] fall in each bin of width sqrt(2) on a log axis,
 * bins below 1x red and above green, with the 1x line.  n > 0. */
void geak_svg_log_hist(struct geak_buf *b, const char *title, const char *caption,
	const double *v, size_t n);

#endif
