/* svgplot.c: grouped bars, a log-axis histogram and a roofline, as inline SVG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "report/svgplot.h"

#define W 560
#define H 300
#define PAD_L 58
#define PAD_R 18
#define PAD_T 40
#define PAD_B 46
#define SPAN_X (W - PAD_L - PAD_R)
#define SPAN_Y (H - PAD_T - PAD_B)
#define LOG_LIMIT 6.0     /* bins reach 64x each way; beyond, the end bins */
#define LOG_BINS 24       /* two per power of two over [-LOG_LIMIT, LOG_LIMIT] */
#define MAX_BAR 56.0      /* a bar of few groups stays a bar, not a wall */

static const char *const colors[] = { "#2563eb", "#f59e0b", "#16a34a", "#9333ea" };
#define RED "#dc2626"
#define GREEN "#16a34a"

void
geak_svg_escape(struct geak_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': geak_buf_puts(b, "&lt;"); break;
		case '>': geak_buf_puts(b, "&gt;"); break;
		case '&': geak_buf_puts(b, "&amp;"); break;
		case '"': geak_buf_puts(b, "&quot;"); break;
		default: geak_buf_append(b, s, 1);
		}
	}
}

static double
num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void
put_value(struct geak_buf *b, double v, enum geak_svg_fmt fmt, int tick)
{
	switch (fmt) {
	case GEAK_SVG_PERCENT: geak_buf_printf(b, tick ? "%g%%" : "%.0f%%", 100 * v); break;
	case GEAK_SVG_SPEEDUP: geak_buf_printf(b, tick ? "%gx" : "%.2fx", v); break;
	case GEAK_SVG_USD: geak_fmt_cost(b, v); break;
	default: geak_fmt_count(b, v);
	}
}

/* A round step giving about five ticks over [0, max]. */
static double
tick_step(double max)
{
	double raw = max / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void
open_svg(struct geak_buf *b, const char *title)
{
	geak_buf_printf(b, "<figure><svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
	    "role=\"img\" aria-label=\"", W, H, W, H);
	geak_svg_escape(b, title);
	geak_buf_printf(b, "\"><text x=\"%d\" y=\"18\" class=\"title\">", PAD_L);
	geak_svg_escape(b, title);
	geak_buf_puts(b, "</text>\n");
}

static void
close_svg(struct geak_buf *b, const char *caption)
{
	geak_buf_puts(b, "</svg><figcaption>");
	geak_svg_escape(b, caption);
	geak_buf_puts(b, "</figcaption></figure>\n");
}

/* Gridlines and labels from 0 to ymax. */
static void
y_axis(struct geak_buf *b, double ymax, double step, enum geak_svg_fmt fmt)
{
	for (double v = 0; v <= ymax + step / 1000; v += step) {
		double y = H - PAD_B - v / ymax * SPAN_Y;
		geak_buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
		    "<text x=\"%d\" y=\"%.1f\" class=\"ylab\">", PAD_L, W - PAD_R, y, y, PAD_L - 6, y + 4);
		put_value(b, v, fmt, 1);
		geak_buf_puts(b, "</text>\n");
	}
}

static void
legend(struct geak_buf *b, const struct geak_series *ser, size_t nser)
{
	size_t x = W - PAD_R - 120 * nser;

	for (size_t s = 0; s < nser; s++, x += 120) {
		geak_buf_printf(b, "<rect x=\"%zu\" y=\"10\" width=\"12\" height=\"10\" fill=\"%s\"/>"
		    "<text x=\"%zu\" y=\"19\" class=\"legend\">", x, colors[s % 4], x + 16);
		geak_svg_escape(b, ser[s].name);
		geak_buf_puts(b, "</text>\n");
	}
}

void
geak_svg_bars(struct geak_buf *b, const char *title, const char *caption, json_t *rows,
    const char *xkey, const char *xlabel, const struct geak_series *ser, size_t nser,
    enum geak_svg_fmt fmt)
{
	size_t n = json_array_size(rows), i, s, every;
	double ymax = 0, step, group, bar;
	json_t *row;

	if (n == 0 || nser == 0)
		return;
	json_array_foreach(rows, i, row)
		for (s = 0; s < nser; s++)
			if (!isnan(num(row, ser[s].key)))
				ymax = fmax(ymax, num(row, ser[s].key));
	ymax = fmt == GEAK_SVG_PERCENT ? 1.0 : ymax > 0 ? ymax * 1.15 : 1.0;
	step = tick_step(ymax);
	ymax = ceil(ymax / step - 1e-9) * step;
	group = (double)SPAN_X / (double)n;
	bar = fmin(group * 0.8 / (double)nser, MAX_BAR);
	every = n > 16 ? (n + 15) / 16 : 1; /* x labels that fit */
	open_svg(b, title);
	y_axis(b, ymax, step, fmt);
	legend(b, ser, nser);
	json_array_foreach(rows, i, row) {
		double x0 = PAD_L + group * ((double)i + 0.5) - bar * (double)nser / 2;
		for (s = 0; s < nser; s++) {
			double v = num(row, ser[s].key), h, x = x0 + bar * (double)s;
			if (isnan(v))
				continue;
			h = v / ymax * SPAN_Y;
			geak_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			    "fill=\"%s\"/>\n", x, H - PAD_B - h, bar - 1, h, colors[s % 4]);
			if (bar >= 26) {
				geak_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"val xlab\">",
				    x + bar / 2, H - PAD_B - h - 4);
				put_value(b, v, fmt, 0);
				geak_buf_puts(b, "</text>\n");
			}
		}
		if (i % every == 0)
			geak_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">%g</text>\n",
			    PAD_L + group * ((double)i + 0.5), H - PAD_B + 16, num(row, xkey));
	}
	geak_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"xlab\">", PAD_L + SPAN_X / 2, H - 8);
	geak_svg_escape(b, xlabel);
	geak_buf_puts(b, "</text>\n");
	close_svg(b, caption);
}

static double
log_x(double l, double lo, double hi)
{
	return PAD_L + (l - lo) / (hi - lo) * SPAN_X;
}

/* The axis: a tick at each power of two, the 1x line dashed. */
static void
log_ticks(struct geak_buf *b, double lo, double hi)
{
	for (double k = ceil(lo); k <= hi; k++) {
		double x = log_x(k, lo, hi);
		geak_buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"%s\"/>"
		    "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">%gx</text>\n", x, x, PAD_T,
		    H - PAD_B, k == 0 ? "base" : "grid", x, H - PAD_B + 16, pow(2, k));
	}
	geak_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"xlab\">speedup (log scale)</text>\n",
	    PAD_L + SPAN_X / 2, H - 8);
}

void
geak_svg_log_hist(struct geak_buf *b, const char *title, const char *caption,
    const double *v, size_t n)
{
	double lo = -1, hi = 1, ymax = 0, step;
	size_t count[LOG_BINS] = { 0 }, nb;

	for (size_t i = 0; i < n; i++) {
		double l = fmin(fmax(log2(v[i]), -LOG_LIMIT), LOG_LIMIT - 1e-9);
		lo = fmin(lo, floor(l * 2) / 2);
		hi = fmax(hi, ceil(l * 2 + 1e-9) / 2);
	}
	nb = (size_t)((hi - lo) * 2 + 0.5);
	for (size_t i = 0; i < n; i++) {
		double l = fmin(fmax(log2(v[i]), lo), hi - 1e-9);
		size_t k = (size_t)((l - lo) * 2);
		count[k < nb ? k : nb - 1]++;
	}
	for (size_t k = 0; k < nb; k++)
		ymax = fmax(ymax, (double)count[k]);
	step = fmax(1, tick_step(ymax * 1.15));
	ymax = ceil(ymax * 1.15 / step) * step;
	open_svg(b, title);
	y_axis(b, ymax, step, GEAK_SVG_COUNT);
	log_ticks(b, lo, hi);
	for (size_t k = 0; k < nb; k++) {
		double e0 = lo + (double)k / 2, x0 = log_x(e0, lo, hi), x1 = log_x(e0 + 0.5, lo, hi);
		double h = (double)count[k] / ymax * SPAN_Y;
		if (!count[k])
			continue;
		geak_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		    "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" class=\"val xlab\">%zu</text>\n",
		    x0 + 1, H - PAD_B - h, x1 - x0 - 2, h, e0 < 0 ? RED : GREEN, (x0 + x1) / 2,
		    H - PAD_B - h - 4, count[k]);
	}
	close_svg(b, caption);
}

/* The roofline's axes, in decades. */
struct logaxis { double lo, hi; }; /* decades */

static double
log_pos(const struct logaxis *a, double v, double origin, double span)
{
	return origin + (log10(v) - a->lo) / (a->hi - a->lo) * span;
}

static void
roof_range(json_t *roof, struct logaxis *x, struct logaxis *y)
{
	static const char *const sides[] = { "best", "reference" };
	double peak = num(roof, "peak_tflops"), bw = num(roof, "hbm_gbps");
	double ridge = peak * 1000 / bw, xlo = ridge, xhi = ridge, ylo = peak;
	json_t *pt;
	size_t i;

	for (int s = 0; s < 2; s++)
		json_array_foreach(json_object_get(roof, sides[s]), i, pt) {
			xlo = fmin(xlo, num(pt, "intensity")), xhi = fmax(xhi, num(pt, "intensity"));
			ylo = fmin(ylo, num(pt, "tflops"));
		}
	x->lo = floor(log10(xlo)) - 1, x->hi = ceil(log10(xhi)) + 1;
	ylo = fmin(ylo, pow(10, x->lo) * bw / 1000);
	y->lo = floor(log10(ylo)), y->hi = ceil(log10(peak)) + 1;
	if (y->hi - y->lo > 8)
		y->lo = y->hi - 8;
}

static void
roof_axes(struct geak_buf *b, const struct logaxis *x, const struct logaxis *y)
{
	double sx = W - PAD_L - PAD_R, sy = H - PAD_B - PAD_T;

	for (double d = y->lo; d <= y->hi; d++) {
		double py = H - PAD_B - (d - y->lo) / (y->hi - y->lo) * sy;
		geak_buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
		    "<text x=\"%d\" y=\"%.1f\" class=\"ylab\">%g</text>\n", PAD_L, W - PAD_R,
		    py, py, PAD_L - 6, py + 4, pow(10, d));
	}
	for (double d = x->lo; d <= x->hi; d++)
		geak_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">%g</text>\n",
		    PAD_L + (d - x->lo) / (x->hi - x->lo) * sx, H - PAD_B + 16, pow(10, d));
	geak_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">arithmetic intensity "
	    "(FLOP/byte); TFLOP/s upwards</text>\n", PAD_L + sx / 2, H - 8);
}

/* A kernel's dot, and a reference's ring around such a dot with room
 * between. */
#define DOT_R "4.5"
#define RING_R "7.5"

static void
roof_points(struct geak_buf *b, json_t *pts, const struct logaxis *x, const struct logaxis *y,
    const char *color, int hollow)
{
	double sx = W - PAD_L - PAD_R, sy = H - PAD_B - PAD_T;
	json_t *pt;
	size_t i;

	json_array_foreach(pts, i, pt) {
		double v = num(pt, "tflops");
		if (!(v > 0) || log10(v) < y->lo)
			continue;
		geak_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\" "
		    "stroke=\"%s\" stroke-width=\"2\"><title>", log_pos(x, num(pt, "intensity"), PAD_L, sx),
		    H - PAD_B - (log10(v) - y->lo) / (y->hi - y->lo) * sy,
		    hollow ? RING_R : DOT_R, hollow ? "none" : color, color);
		char *shape = json_dumps(json_object_get(pt, "shape"), JSON_COMPACT | JSON_ENCODE_ANY);
		geak_svg_escape(b, shape ? shape : "?");
		free(shape);
		geak_buf_printf(b, ": %.3g TFLOP/s, ", v);
		geak_svg_escape(b, json_string_value(json_object_get(pt, "bound")) ?
		    json_string_value(json_object_get(pt, "bound")) : "unknown");
		geak_buf_puts(b, "-bound</title></circle>\n");
	}
}

void
geak_svg_roofline(struct geak_buf *b, const char *id, json_t *roof)
{
	double peak = num(roof, "peak_tflops"), bw = num(roof, "hbm_gbps");
	double sx = W - PAD_L - PAD_R, sy = H - PAD_B - PAD_T;
	struct logaxis x, y;
	char title[256];

	if (!json_is_object(roof) || !(peak > 0) || !(bw > 0))
		return;
	roof_range(roof, &x, &y);
	snprintf(title, sizeof title, "Roofline: %s", id ? id : "?");
	open_svg(b, title);
	roof_axes(b, &x, &y);
	/* The roofs: bandwidth * intensity up to the ridge, the peak past it. */
	double x0 = pow(10, x.lo), ridge = peak * 1000 / bw;
	double y0 = fmax(x0 * bw / 1000, pow(10, y.lo));
	x0 = y0 * 1000 / bw;
	geak_buf_printf(b, "<polyline fill=\"none\" stroke=\"#6b7280\" stroke-width=\"2\" "
	    "points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
	    log_pos(&x, x0, PAD_L, sx), H - PAD_B - (log10(y0) - y.lo) / (y.hi - y.lo) * sy,
	    log_pos(&x, ridge, PAD_L, sx), H - PAD_B - (log10(peak) - y.lo) / (y.hi - y.lo) * sy,
	    (double)(W - PAD_R), H - PAD_B - (log10(peak) - y.lo) / (y.hi - y.lo) * sy);
	/* The reference's rings last and wider than the dots: a kernel as
	 * fast as its reference shows both at one place. */
	roof_points(b, json_object_get(roof, "best"), &x, &y, colors[0], 0);
	roof_points(b, json_object_get(roof, "reference"), &x, &y, colors[1], 1);
	geak_buf_printf(b, "<circle cx=\"%d\" cy=\"14\" r=\"" DOT_R "\" fill=\"%s\"/>"
	    "<text x=\"%d\" y=\"18\" class=\"legend\">best</text>"
	    "<circle cx=\"%d\" cy=\"14\" r=\"" RING_R "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>"
	    "<text x=\"%d\" y=\"18\" class=\"legend\">reference</text>\n",
	    W - PAD_R - 170, colors[0], W - PAD_R - 160,
	    W - PAD_R - 100, colors[1], W - PAD_R - 86);
	snprintf(title, sizeof title, "Roofs: %.0f GB/s of HBM bandwidth, %.0f %s TFLOP/s, "
	    "ridge at %.0f FLOP/byte; one point per performance case.", bw, peak,
	    json_string_value(json_object_get(roof, "dtype")) ?
	    json_string_value(json_object_get(roof, "dtype")) : "16-bit", ridge);
	close_svg(b, title);
}

/* Both axes log2 over one range: the diagonal is "as fast in both". */
static double
scatter_pos(double l, double lo, double hi, double origin, double span)
{
	return origin + (l - lo) / (hi - lo) * span;
}

void
geak_svg_scatter_log(struct geak_buf *b, const char *title, const char *caption,
    const double *x, const double *y, const char *const *labels, size_t n,
    const char *xlabel, const char *ylabel)
{
	double lo = -1, hi = 1, sy = SPAN_Y, sx = SPAN_Y; /* square: x as long as y */

	for (size_t i = 0; i < n; i++) {
		double lx = fmin(fmax(log2(x[i]), -LOG_LIMIT), LOG_LIMIT);
		double ly = fmin(fmax(log2(y[i]), -LOG_LIMIT), LOG_LIMIT);
		lo = fmin(lo, floor(fmin(lx, ly) - 0.25)); /* no point on an axis */
		hi = fmax(hi, ceil(fmax(lx, ly) + 0.25));
	}
	open_svg(b, title);
	for (double k = lo; k <= hi; k++) {
		double px = scatter_pos(k, lo, hi, PAD_L, sx), py = H - PAD_B - (k - lo) / (hi - lo) * sy;
		geak_buf_printf(b, "<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"%s\"/>"
		    "<text x=\"%d\" y=\"%.1f\" class=\"ylab\">%gx</text>"
		    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"%s\"/>"
		    "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">%gx</text>\n",
		    PAD_L, PAD_L + sx, py, py, k == 0 ? "base" : "grid", PAD_L - 6, py + 4, pow(2, k),
		    px, px, PAD_T, H - PAD_B, k == 0 ? "base" : "grid", px, H - PAD_B + 16, pow(2, k));
	}
	geak_buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#9ca3af\"/>\n",
	    PAD_L, H - PAD_B, PAD_L + sx, PAD_T);
	for (size_t i = 0; i < n; i++) {
		double lx = fmin(fmax(log2(x[i]), lo), hi), ly = fmin(fmax(log2(y[i]), lo), hi);
		const char *color = ly > lx + 0.03 ? GREEN : ly < lx - 0.03 ? RED : "#6b7280";
		geak_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" "
		    "fill-opacity=\"0.75\"><title>", scatter_pos(lx, lo, hi, PAD_L, sx),
		    H - PAD_B - (ly - lo) / (hi - lo) * sy, color);
		geak_svg_escape(b, labels[i]);
		geak_buf_printf(b, ": %.3gx, %.3gx</title></circle>\n", x[i], y[i]);
	}
	geak_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">", PAD_L + sx / 2, H - 8);
	geak_svg_escape(b, xlabel);
	geak_buf_printf(b, "</text><text x=\"%.1f\" y=\"%d\" class=\"legend\">", PAD_L + sx + 24,
	    PAD_T + 14);
	geak_svg_escape(b, ylabel);
	geak_buf_printf(b, " upwards</text><text x=\"%.1f\" y=\"%d\" class=\"legend\" fill=\"%s\">"
	    "green: faster in B</text><text x=\"%.1f\" y=\"%d\" class=\"legend\">red: faster in A"
	    "</text>\n", PAD_L + sx + 24, PAD_T + 34, GREEN, PAD_L + sx + 24, PAD_T + 54);
	close_svg(b, caption);
}
