/* svgplot.h: the report's charts as inline SVG of a fixed size.  The
 * whole run's are grouped bars (nothing can hide behind another series,
 * as lines can) and a histogram on a log axis, so that a page of 215
 * tasks is as tall as a page of 3; one task's is its roofline. */
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

/* A log-log roofline of task id: the device's roofs (HBM bandwidth up
 * to the ridge point, the arithmetic peak past it) and each case of the
 * best candidate and of the reference at its arithmetic intensity and
 * achieved TFLOP/s (roof as geak-select's kernels[].roofline).  Draws
 * nothing without both peaks. */
void geak_svg_roofline(struct geak_buf *b, const char *id, json_t *roof);

/* One point per task at (x[i], y[i]), both on one log2 scale, with
 * the diagonal where they are equal: green above it, red below; each
 * point's tooltip is labels[i] and its values. */
void geak_svg_scatter_log(struct geak_buf *b, const char *title, const char *caption,
	const double *x, const double *y, const char *const *labels, size_t n,
	const char *xlabel, const char *ylabel);

#endif
