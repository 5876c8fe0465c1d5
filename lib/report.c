/* report.c: HTML (inline SVG, no scripts, no network) and Markdown
 * renderings of a geak-select summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

#define PLOT_W 560
#define PLOT_H 300
#define PAD_L 58
#define PAD_R 18
#define PAD_T 34
#define PAD_B 46

static const char *const colors[] = { "#2563eb", "#dc2626", "#16a34a", "#9333ea" };

struct series {
	const char *name;
	const char *key;  /* field of each row */
	int percent;      /* a fraction shown as % */
};

int
geak_report_format(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot && (strcmp(dot, ".html") == 0 || strcmp(dot, ".htm") == 0))
		return GEAK_REPORT_HTML;
	if (dot && strcmp(dot, ".md") == 0)
		return GEAK_REPORT_MD;
	return -1;
}

static double
num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static long
integer(json_t *obj, const char *key)
{
	return (long)json_integer_value(json_object_get(obj, key));
}

static void
put_escaped(struct geak_buf *b, const char *s)
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

/* A table cell in Markdown: a bar would end the cell. */
static void
put_md(struct geak_buf *b, const char *s)
{
	for (; s && *s; s++)
		geak_buf_puts(b, *s == '|' ? "\\|" : (char[]){ *s, 0 });
}

static void
put_percent(struct geak_buf *b, double v)
{
	if (isnan(v))
		geak_buf_puts(b, "n/a");
	else
		geak_buf_printf(b, "%.1f%%", 100 * v);
}

static void
put_speedup(struct geak_buf *b, double v)
{
	if (isnan(v))
		geak_buf_puts(b, "n/a");
	else
		geak_buf_printf(b, "%.2fx", v);
}

/* A round tick step giving about five ticks over [0, max]. */
static double
tick_step(double max)
{
	double raw = max / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void
svg_open(struct geak_buf *b, const char *title, int h)
{
	geak_buf_printf(b, "<figure><svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
	    "role=\"img\" aria-label=\"", PLOT_W, h, PLOT_W, h);
	put_escaped(b, title);
	geak_buf_printf(b, "\"><text x=\"%d\" y=\"18\" class=\"title\">", PAD_L);
	put_escaped(b, title);
	geak_buf_puts(b, "</text>\n");
}

static void
svg_close(struct geak_buf *b, const char *caption)
{
	geak_buf_puts(b, "</svg><figcaption>");
	put_escaped(b, caption);
	geak_buf_puts(b, "</figcaption></figure>\n");
}

/* Horizontal gridlines and labels of a y axis from 0 to ymax. */
static void
y_axis(struct geak_buf *b, double ymax, int percent)
{
	double step = tick_step(ymax), y0 = PLOT_H - PAD_B, span = PLOT_H - PAD_B - PAD_T;

	for (double v = 0; v <= ymax + step / 1000; v += step) {
		double y = y0 - v / ymax * span;
		geak_buf_printf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
		    "<text x=\"%d\" y=\"%.1f\" class=\"ylab\">", PAD_L, PLOT_W - PAD_R, y, y,
		    PAD_L - 6, y + 4);
		if (percent)
			geak_buf_printf(b, "%g%%", 100 * v);
		else
			geak_buf_printf(b, "%g", v);
		geak_buf_puts(b, "</text>\n");
	}
}

static int
has_points(json_t *rows, const struct series *ser, size_t nser)
{
	json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
		for (size_t s = 0; s < nser; s++)
			if (!isnan(num(row, ser[s].key)))
				return 1;
	return 0;
}

/* A line chart of rows[i][xkey] against each series; NAN points skipped. */
static void
line_chart(struct geak_buf *b, const char *title, const char *caption, json_t *rows,
    const char *xkey, const char *xlabel, const struct series *ser, size_t nser)
{
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
	double span_x = PLOT_W - PAD_L - PAD_R, span_y = PLOT_H - PAD_B - PAD_T;
	size_t legend_x = PLOT_W - PAD_R - 120 * nser; /* right-aligned, clear of the title */
	json_t *row;
	size_t i, s;

	json_array_foreach(rows, i, row) {
		double x = num(row, xkey);
		xmin = fmin(xmin, x), xmax = fmax(xmax, x);
		for (s = 0; s < nser; s++)
			if (!isnan(num(row, ser[s].key)))
				ymax = fmax(ymax, num(row, ser[s].key));
	}
	if (json_array_size(rows) == 0)
		return;
	if (xmax == xmin)
		xmin -= 1, xmax += 1;
	ymax = ser[0].percent ? 1.0 : (ymax > 0 ? ymax * 1.15 : 1.0);
	ymax = ceil(ymax / tick_step(ymax)) * tick_step(ymax);
	svg_open(b, title, PLOT_H);
	y_axis(b, ymax, ser[0].percent);
	if (!has_points(rows, ser, nser))
		geak_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"xlab none\">no values: "
		    "nothing was measured</text>\n", PAD_L + span_x / 2, PAD_T + span_y / 2);
	json_array_foreach(rows, i, row) {
		double x = PAD_L + (num(row, xkey) - xmin) / (xmax - xmin) * span_x;
		geak_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">%g</text>\n",
		    x, PLOT_H - PAD_B + 16, num(row, xkey));
	}
	geak_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">", PAD_L + span_x / 2, PLOT_H - 8);
	put_escaped(b, xlabel);
	geak_buf_puts(b, "</text>\n");
	for (s = 0; s < nser; s++) {
		const char *color = colors[s % 4];
		/* Later series dashed, so that equal values leave both visible. */
		geak_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"",
		    color, s ? "2" : "3", s ? " stroke-dasharray=\"6 4\"" : "");
		json_array_foreach(rows, i, row) {
			double v = num(row, ser[s].key);
			if (!isnan(v))
				geak_buf_printf(b, "%.1f,%.1f ",
				    PAD_L + (num(row, xkey) - xmin) / (xmax - xmin) * span_x,
				    PLOT_H - PAD_B - v / ymax * span_y);
		}
		geak_buf_puts(b, "\"/>\n");
		json_array_foreach(rows, i, row) {
			double v = num(row, ser[s].key);
			if (!isnan(v))
				geak_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
				    PAD_L + (num(row, xkey) - xmin) / (xmax - xmin) * span_x,
				    PLOT_H - PAD_B - v / ymax * span_y, color);
		}
		geak_buf_printf(b, "<rect x=\"%zu\" y=\"%d\" width=\"12\" height=\"4\" fill=\"%s\"/>"
		    "<text x=\"%zu\" y=\"%d\" class=\"legend\">", legend_x + s * 120, 12, color,
		    legend_x + 16 + s * 120, 18);
		put_escaped(b, ser[s].name);
		geak_buf_puts(b, "</text>\n");
	}
	svg_close(b, caption);
}

/* One horizontal bar per kernel, with the 1x baseline marked. */
static void
speedup_bars(struct geak_buf *b, json_t *kernels)
{
	const int row_h = 24, label_w = 210;
	int h = PAD_T + (int)json_array_size(kernels) * row_h + 30;
	double xmax = 1, span = PLOT_W - label_w - PAD_R - 50;
	json_t *k;
	size_t i;

	json_array_foreach(kernels, i, k)
		if (!isnan(num(k, "speedup")))
			xmax = fmax(xmax, num(k, "speedup"));
	xmax *= 1.1;
	svg_open(b, "Speedup per kernel (reference time / kernel time)", h);
	json_array_foreach(kernels, i, k) {
		const char *id = json_string_value(json_object_get(k, "id"));
		double v = num(k, "speedup"), y = PAD_T + (double)i * row_h;
		char shown[40];

		/* Long ids keep their distinctive end. */
		snprintf(shown, sizeof shown, "%s%s", strlen(id) > 28 ? "\xe2\x80\xa6" : "",
		    strlen(id) > 28 ? id + strlen(id) - 27 : id);
		geak_buf_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"ylab\">", label_w - 8, y + 16);
		put_escaped(b, shown);
		geak_buf_puts(b, "</text>");
		if (!isnan(v)) {
			geak_buf_printf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
			    "fill=\"%s\" rx=\"2\"/><text x=\"%.1f\" y=\"%.1f\" class=\"val\">%.2fx</text>\n",
			    label_w, y + 4, v / xmax * span, row_h - 8, v >= 1 ? colors[2] : colors[1],
			    label_w + v / xmax * span + 6, y + 16, v);
		} else {
			geak_buf_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"none\">%s</text>\n",
			    label_w + 4, y + 16, json_is_true(json_object_get(k, "exec")) ?
			    "correct; speed not measured" : "no correct kernel");
		}
	}
	geak_buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"base\"/>"
	    "<text x=\"%.1f\" y=\"%d\" class=\"xlab\">1x</text>\n",
	    label_w + span / xmax, label_w + span / xmax, PAD_T - 4, h - 24,
	    label_w + span / xmax, h - 8);
	svg_close(b, "Green: faster than the reference; red: slower.  Only kernels "
	    "that passed the correctness test have a speedup.");
}

static void
html_head(struct geak_buf *b)
{
	geak_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	    "<title>geak report</title>\n<style>\n"
	    "body{font:15px/1.45 system-ui,sans-serif;color:#1f2937;max-width:1180px;margin:24px auto;padding:0 20px}\n"
	    "h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}\n"
	    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(118px,1fr));gap:12px;margin:16px 0}\n"
	    ".card{border:1px solid #e5e7eb;border-radius:8px;padding:10px 14px}\n"
	    ".card b{display:block;font-size:22px}.card span{color:#6b7280;font-size:13px}\n"
	    ".plots{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}figure{margin:0;border:1px solid #e5e7eb;border-radius:8px;padding:8px}\n"
	    "figcaption{color:#6b7280;font-size:12px;max-width:540px;padding:0 6px 4px}\n"
	    "svg text{font:12px system-ui,sans-serif;fill:#374151}svg .title{font-weight:600;font-size:13px}\n"
	    "svg .ylab{text-anchor:end}svg .xlab{text-anchor:middle}svg .none{fill:#9ca3af;font-style:italic}\n"
	    "svg .grid{stroke:#e5e7eb}svg .base{stroke:#6b7280;stroke-dasharray:4 3}\n"
	    "table{border-collapse:collapse;font-size:14px}th,td{padding:4px 12px;border-bottom:1px solid #e5e7eb;text-align:right}\n"
	    "th:first-child,td:first-child{text-align:left}th{background:#f9fafb}\n"
	    ".muted{color:#6b7280;font-size:13px}\n"
	    "</style></head><body>\n");
}

/* A count short enough for a card: 950, 12.3k, 4.56M. */
static void
put_count(struct geak_buf *b, long n)
{
	if (n < 10000)
		geak_buf_printf(b, "%ld", n);
	else if (n < 1000000)
		geak_buf_printf(b, "%.1fk", n / 1e3);
	else
		geak_buf_printf(b, "%.2fM", n / 1e6);
}

static void
card(struct geak_buf *b, const char *label, const char *value)
{
	geak_buf_puts(b, "<div class=\"card\"><b>");
	put_escaped(b, value);
	geak_buf_puts(b, "</b><span>");
	put_escaped(b, label);
	geak_buf_puts(b, "</span></div>\n");
}

static void
html_cards(struct geak_buf *b, json_t *s)
{
	json_t *u = json_object_get(s, "usage");
	struct geak_buf v = { 0 };

	geak_buf_puts(b, "<div class=\"cards\">\n");
	geak_buf_printf(&v, "%ld", integer(s, "tasks"));
	card(b, "tasks", v.data);
	geak_buf_reset(&v), put_percent(&v, num(s, "call_accuracy"));
	card(b, "call accuracy", v.data);
	geak_buf_reset(&v), put_percent(&v, num(s, "exec_accuracy"));
	card(b, "exec accuracy", v.data);
	geak_buf_reset(&v), put_speedup(&v, num(s, "speedup_mean"));
	card(b, "mean speedup", v.data);
	geak_buf_reset(&v), put_speedup(&v, num(s, "speedup_geomean"));
	card(b, "geometric mean", v.data);
	json_t *fp, *fast = json_object_get(s, "fast_p");
	size_t i;
	json_array_foreach(fast, i, fp) {
		char label[48];
		snprintf(label, sizeof label, "fast_%g", num(fp, "p"));
		geak_buf_reset(&v), put_percent(&v, num(fp, "share"));
		card(b, label, v.data);
	}
	geak_buf_reset(&v);
	put_count(&v, integer(u, "input_tokens"));
	card(b, "input tokens", v.data);
	geak_buf_reset(&v);
	put_count(&v, integer(u, "output_tokens"));
	card(b, "output tokens", v.data);
	geak_buf_reset(&v);
	geak_buf_printf(&v, "%ld", integer(u, "calls"));
	card(b, "LLM calls", v.data);
	if (!isnan(num(u, "cost"))) {
		geak_buf_reset(&v);
		geak_buf_printf(&v, "%.2f", num(u, "cost"));
		card(b, "LLM cost", v.data);
	}
	geak_buf_puts(b, "</div>\n");
	geak_buf_free(&v);
}

/* A table row cell by cell; kind: 'i' integer, '%' fraction, 'x' speedup, 's' string. */
static void
cells(struct geak_buf *b, int md, json_t *row, const char *keys, const char *kinds)
{
	char *copy = geak_xstrdup(keys), *save = NULL;
	size_t col = 0;

	geak_buf_puts(b, md ? "|" : "<tr>");
	for (char *k = strtok_r(copy, ",", &save); k; k = strtok_r(NULL, ",", &save), col++) {
		json_t *v = json_object_get(row, k);
		geak_buf_puts(b, md ? " " : "<td>");
		switch (kinds[col]) {
		case 'i': if (json_is_integer(v)) geak_buf_printf(b, "%ld", (long)json_integer_value(v));
			else geak_buf_puts(b, "-");
			break;
		case '%': put_percent(b, num(row, k)); break;
		case 'x': put_speedup(b, num(row, k)); break;
		case 'b': geak_buf_puts(b, json_is_true(v) ? "yes" : "no"); break;
		default: if (md) put_md(b, json_string_value(v));
			else put_escaped(b, json_string_value(v));
		}
		geak_buf_puts(b, md ? " |" : "</td>");
	}
	geak_buf_puts(b, md ? "\n" : "</tr>\n");
	free(copy);
}

static void
table(struct geak_buf *b, int md, const char *heads, json_t *rows, const char *keys,
    const char *kinds)
{
	char *copy = geak_xstrdup(heads), *save = NULL;
	json_t *row;
	size_t i, n = 0;

	geak_buf_puts(b, md ? "|" : "<table><tr>");
	for (char *h = strtok_r(copy, ",", &save); h; h = strtok_r(NULL, ",", &save), n++)
		geak_buf_printf(b, md ? " %s |" : "<th>%s</th>", h);
	geak_buf_puts(b, md ? "\n|" : "</tr>\n");
	for (i = 0; md && i < n; i++)
		geak_buf_puts(b, i ? " ---: |" : " --- |");
	if (md)
		geak_buf_puts(b, "\n");
	json_array_foreach(rows, i, row)
		cells(b, md, row, keys, kinds);
	geak_buf_puts(b, md ? "\n" : "</table>\n");
	free(copy);
}

/* p, tasks, share: p written as given (1.5), not as an integer column. */
static void
fast_table(struct geak_buf *b, int md, json_t *rows)
{
	json_t *row;
	size_t i;

	geak_buf_puts(b, md ? "| p | tasks | share |\n| --- | ---: | ---: |\n"
	                    : "<table><tr><th>p</th><th>tasks</th><th>share</th></tr>\n");
	json_array_foreach(rows, i, row) {
		geak_buf_printf(b, md ? "| %g | %ld | " : "<tr><td>%g</td><td>%ld</td><td>",
		    num(row, "p"), integer(row, "tasks"));
		put_percent(b, num(row, "share"));
		geak_buf_puts(b, md ? " |\n" : "</td></tr>\n");
	}
	geak_buf_puts(b, md ? "\n" : "</table>\n");
}

static void
tables(struct geak_buf *b, int md, json_t *s)
{
	const char *h2 = md ? "## %s\n\n" : "<h2>%s</h2>\n";

	geak_buf_printf(b, h2, "Kernels");
	table(b, md, "kernel,difficulty,call,exec,speedup,runs,exec runs,run,iteration",
	    json_object_get(s, "kernels"), "id,difficulty,call,exec,speedup,runs,exec_runs,run,iter",
	    "sibbxiiii");
	if (json_array_size(json_object_get(s, "by_difficulty"))) {
		geak_buf_printf(b, h2, "By difficulty");
		table(b, md, "difficulty,tasks,call accuracy,execution accuracy,mean speedup,geometric mean",
		    json_object_get(s, "by_difficulty"),
		    "difficulty,tasks,call_accuracy,exec_accuracy,speedup_mean,speedup_geomean", "ii%%xx");
	}
	if (json_array_size(json_object_get(s, "fast_p"))) {
		geak_buf_printf(b, h2, "fast_p: correct and more than p times faster");
		fast_table(b, md, json_object_get(s, "fast_p"));
	}
	geak_buf_printf(b, h2, "pass@k over independent runs");
	table(b, md, "k,tasks with at least k runs,call pass@k,exec pass@k",
	    json_object_get(s, "pass_at_k"), "k,tasks,call,exec", "ii%%");
	geak_buf_printf(b, h2, "By iteration (best so far)");
	table(b, md, "iteration,call accuracy,execution accuracy,mean speedup,geometric mean",
	    json_object_get(s, "by_iter"),
	    "iter,call_accuracy,exec_accuracy,speedup_mean,speedup_geomean", "i%%xx");
}

static void
html_report(struct geak_buf *b, json_t *s)
{
	static const struct series acc[] = {
		{ "call", "call_accuracy", 1 }, { "execution", "exec_accuracy", 1 },
	};
	static const struct series spd[] = {
		{ "mean", "speedup_mean", 0 }, { "geometric mean", "speedup_geomean", 0 },
	};
	static const struct series pk[] = {
		{ "call", "call", 1 }, { "execution", "exec", 1 },
	};

	html_head(b);
	geak_buf_puts(b, "<h1>geak report</h1>\n<p class=\"muted\">");
	geak_buf_printf(b, "%ld records, %ld tasks, up to %ld independent runs per task. "
	    "Speedups are measured by geak-eval on the candidate's kernel against the "
	    "reference; the mean is over kernels that passed, as GEAK reports it.</p>\n",
	    integer(s, "records"), integer(s, "tasks"), integer(s, "runs"));
	html_cards(b, s);
	geak_buf_puts(b, "<div class=\"plots\">\n");
	speedup_bars(b, json_object_get(s, "kernels"));
	line_chart(b, "Accuracy against iteration", "Share of tasks with a passing kernel "
	    "at or before each iteration, over all runs.", json_object_get(s, "by_iter"),
	    "iter", "iteration", acc, 2);
	line_chart(b, "Speedup against iteration", "Speedup of the best correct kernel so "
	    "far; no point where no speed was measured.", json_object_get(s, "by_iter"),
	    "iter", "iteration", spd, 2);
	line_chart(b, "pass@k against k", "Unbiased pass@k over independent runs, "
	    "averaged over the tasks with at least k runs.", json_object_get(s, "pass_at_k"),
	    "k", "k", pk, 2);
	geak_buf_puts(b, "</div>\n");
	tables(b, 0, s);
	geak_buf_puts(b, "</body></html>\n");
}

static void
md_report(struct geak_buf *b, json_t *s)
{
	json_t *u = json_object_get(s, "usage");

	geak_buf_puts(b, "# geak report\n\n");
	geak_buf_printf(b, "- tasks: %ld (%ld records, up to %ld runs per task)\n",
	    integer(s, "tasks"), integer(s, "records"), integer(s, "runs"));
	geak_buf_puts(b, "- call accuracy: ");
	put_percent(b, num(s, "call_accuracy"));
	geak_buf_puts(b, "\n- execution accuracy: ");
	put_percent(b, num(s, "exec_accuracy"));
	geak_buf_puts(b, "\n- mean speedup over passing kernels: ");
	put_speedup(b, num(s, "speedup_mean"));
	geak_buf_puts(b, "; geometric mean: ");
	put_speedup(b, num(s, "speedup_geomean"));
	json_t *fp;
	size_t i;
	json_array_foreach(json_object_get(s, "fast_p"), i, fp) {
		geak_buf_printf(b, "%sfast_%g ", i ? ", " : "\n- fast_p (correct and more than p times faster): ",
		    num(fp, "p"));
		put_percent(b, num(fp, "share"));
	}
	geak_buf_printf(b, "\n- LLM: %ld calls, %ld input and %ld output tokens\n\n",
	    integer(u, "calls"), integer(u, "input_tokens"), integer(u, "output_tokens"));
	tables(b, 1, s);
}

int
geak_report_write(const char *path, json_t *summary)
{
	struct geak_buf b = { 0 };
	char *tmp = geak_xasprintf("%s.tmp", path);
	FILE *fp;
	int rc = -1;

	if (geak_report_format(path) == GEAK_REPORT_MD)
		md_report(&b, summary);
	else
		html_report(&b, summary);
	if (!(fp = fopen(tmp, "w")))
		geak_warn("%s:", tmp);
	else if (fwrite(b.data, 1, b.len, fp) != b.len) {
		geak_warn("%s: write failed:", tmp);
		fclose(fp);
	} else if (geak_fshut(fp, tmp) < 0) {
		fclose(fp);
	} else if (fclose(fp) != 0) {
		geak_warn("%s: close failed:", tmp);
	} else {
		if (rename(tmp, path) < 0)
			geak_warn("%s: cannot rename to %s:", tmp, path);
		else
			rc = 0;
	}
	if (rc < 0)
		remove(tmp);
	free(tmp);
	geak_buf_free(&b);
	return rc;
}
