/* report.c: HTML (inline SVG, no scripts, no network) and Markdown
 * renderings of a geak-select summary: a page a kernel engineer reads
 * first.  Where the run came from (model, device, harness, date, whether
 * the answers were replayed), how many tasks passed and why the others
 * did not, how fast the kernels are, and what the model cost; a plot
 * where something was measured, and none where nothing was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "progress.h"
#include "record.h"
#include "report/report.h"
#include "report/svgplot.h"
#include "util.h"

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

/* Text for an HTML page or a Markdown table cell (where a bar would end
 * the cell). */
static void
put_text(struct geak_buf *b, int md, const char *s)
{
	if (!md) {
		geak_svg_escape(b, s);
		return;
	}
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

/* ---- what the numbers say, in words ---- */

/* The record's "stage: reason" of a task that did not pass, as a kernel
 * engineer says it. */
static const char *
gloss(const char *reason)
{
	static const struct { const char *reason, *text; } words[] = {
		{ "call: syntax", "not valid Python" },
		{ "call: compile", "a kernel did not compile" },
		{ "call: runtime", "raised an exception" },
		{ "call: timeout", "ran past its time limit" },
		{ "call: crash", "crashed" },
		{ "call: no_output", "ended without its result" },
		{ "static: cheat", "rejected before it ran: its source games the evaluation" },
		{ "exec: mismatch", "ran, but its outputs were wrong" },
		{ "exec: cheat", "ran, but its own kernels did not do the work" },
		{ "perf: mismatch", "correct when checked, wrong when timed" },
		{ "perf: cheat", "caught gaming the timing" },
		{ "flagged: excessive_speedup", "correct, but too fast to trust" },
		{ "flagged: above_roofline", "correct, but faster than the device's peak" },
		{ "flagged: precision_downgrade", "correct, but in lower precision" },
		{ "flagged: secrets_in_env", "correct, but it saw secrets in its environment" },
		{ "llm: budget", "no candidate: the budget was spent" },
		{ "extract: no_code", "no candidate: the model's answer held no code" },
		{ "eval: harness", "the evaluator could not run it (says nothing of the kernel)" },
		{ "no candidate", "no candidate was evaluated" },
	};

	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strcmp(reason, words[i].reason))
			return words[i].text;
	if (!strncmp(reason, "llm: ", 5))
		return "no candidate: the model could not be asked";
	return reason;
}

/* When the page was made: $SOURCE_DATE_EPOCH, for pages that must come
 * out the same, else now. */
static void
put_date(struct geak_buf *b)
{
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t t = epoch && *epoch ? (time_t)strtoll(epoch, NULL, 10) : time(NULL);
	struct tm tm;
	char s[64];

	if (gmtime_r(&t, &tm) && strftime(s, sizeof s, "%Y-%m-%d %H:%M UTC", &tm))
		geak_buf_puts(b, s);
}

/* "a (12), b (3)" of a provenance list. */
static void
put_tags(struct geak_buf *b, int md, json_t *list)
{
	json_t *t;
	size_t i;

	if (!json_array_size(list))
		geak_buf_puts(b, "none recorded");
	json_array_foreach(list, i, t) {
		geak_buf_puts(b, i ? ", " : "");
		put_text(b, md, json_string_value(json_object_get(t, "name")));
		if (json_array_size(list) > 1)
			geak_buf_printf(b, " (%ld records)", integer(t, "records"));
	}
}

static int
speed_measured(json_t *s)
{
	return integer(s, "speedup_n") > 0;
}

/* Every evaluation ran on Triton's CPU interpreter. */
static int
cpu_only(json_t *s)
{
	json_t *dev = json_object_get(json_object_get(s, "provenance"), "devices"), *d;
	size_t i;

	json_array_foreach(dev, i, d)
		if (!strstr(json_string_value(json_object_get(d, "name")), "cpu"))
			return 0;
	return json_array_size(dev) > 0;
}

/* key of now less key of prev (NULL: 0), held in range. */
static json_int_t
grew(json_t *now, json_t *prev, const char *key)
{
	long long d, a = integer(now, key), b = prev ? integer(prev, key) : 0;

	if (__builtin_sub_overflow(a, b, &d))
		d = b > 0 ? INT64_MIN : INT64_MAX;
	return (json_int_t)d;
}

/* What each iteration spent: by_iter holds what was spent by it. */
static json_t *
iter_spend(json_t *by_iter)
{
	json_t *rows = json_array(), *row, *u, *prev = NULL;
	size_t i;

	json_array_foreach(by_iter, i, row) {
		u = json_object_get(row, "usage");
		double c = num(u, "cost"), pc = prev ? num(prev, "cost") : 0;
		json_array_append_new(rows, json_pack("{s:I, s:I, s:I, s:I, s:o}",
		    "iter", (json_int_t)integer(row, "iter"),
		    "calls", grew(u, prev, "calls"),
		    "input_tokens", grew(u, prev, "input_tokens"),
		    "output_tokens", grew(u, prev, "output_tokens"),
		    "cost", isnan(c) ? json_null() : json_real(c - (isnan(pc) ? 0 : pc))));
		prev = u;
	}
	return rows;
}

/* ---- HTML ---- */

static void
html_head(struct geak_buf *b)
{
	geak_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	    "<title>geak report</title>\n<style>\n"
	    "body{font:15px/1.45 system-ui,sans-serif;color:#1f2937;max-width:1180px;margin:24px auto;padding:0 20px}\n"
	    "h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}\n"
	    "dl.prov{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0;font-size:14px}\n"
	    "dl.prov dt{color:#6b7280}dl.prov dd{margin:0}\n"
	    ".note{background:#fffbeb;border:1px solid #fcd34d;border-radius:6px;padding:6px 10px;font-size:14px;margin:8px 0}\n"
	    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(118px,1fr));gap:12px;margin:16px 0}\n"
	    ".card{border:1px solid #e5e7eb;border-radius:8px;padding:10px 14px}\n"
	    ".card b{display:block;font-size:22px}.card span{color:#6b7280;font-size:13px}\n"
	    ".plots{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin:16px 0}figure{margin:0;border:1px solid #e5e7eb;border-radius:8px;padding:8px}\n"
	    "figcaption{color:#6b7280;font-size:12px;max-width:540px;padding:0 6px 4px}\n"
	    "svg text{font:12px system-ui,sans-serif;fill:#374151}svg .title{font-weight:600;font-size:13px}\n"
	    "svg .ylab{text-anchor:end}svg .xlab{text-anchor:middle}svg .val{font-size:11px}\n"
	    "svg .grid{stroke:#e5e7eb}svg .base{stroke:#374151;stroke-dasharray:4 3}\n"
	    "table{border-collapse:collapse;font-size:14px}th,td{padding:4px 12px;border-bottom:1px solid #e5e7eb;text-align:right}\n"
	    "th:first-child,td:first-child{text-align:left}th{background:#f9fafb}td.why{text-align:left;color:#6b7280}th.why{text-align:left}\n"
	    ".muted{color:#6b7280;font-size:13px}\n");
	geak_buf_puts(b, geak_report_kernel_css);
	geak_buf_puts(b, "</style></head><body>\n");
}

static void
provenance(struct geak_buf *b, json_t *s)
{
	json_t *p = json_object_get(s, "provenance");

	geak_buf_puts(b, "<dl class=\"prov\">\n<dt>made</dt><dd>");
	put_date(b);
	geak_buf_printf(b, "</dd>\n<dt>tasks</dt><dd>%ld (%ld records, up to %ld independent "
	    "run%s per task)</dd>\n<dt>model</dt><dd>", integer(s, "tasks"),
	    integer(s, "records"), integer(s, "runs"), integer(s, "runs") == 1 ? "" : "s");
	put_tags(b, 0, json_object_get(p, "models"));
	if (integer(p, "replayed") > 0)
		geak_buf_puts(b, integer(p, "live") ? " &mdash; some answers replayed from a "
		    "recording" : " &mdash; every answer replayed from a recording: no model was "
		    "asked");
	geak_buf_puts(b, "</dd>\n<dt>device</dt><dd>");
	put_tags(b, 0, json_object_get(p, "devices"));
	geak_buf_puts(b, "</dd>\n<dt>harness</dt><dd>");
	put_tags(b, 0, json_object_get(p, "harness"));
	geak_buf_puts(b, "</dd>\n</dl>\n");
	if (cpu_only(s))
		geak_buf_puts(b, "<p class=\"note\">Evaluated on the CPU under Triton's "
		    "interpreter: speed is not measured there, so this page shows no speedups.</p>\n");
}

static void
card(struct geak_buf *b, const char *label, const char *value)
{
	geak_buf_puts(b, "<div class=\"card\"><b>");
	geak_svg_escape(b, value);
	geak_buf_puts(b, "</b><span>");
	geak_svg_escape(b, label);
	geak_buf_puts(b, "</span></div>\n");
}

static void
cards(struct geak_buf *b, json_t *s)
{
	json_t *u = json_object_get(s, "usage");
	struct geak_buf v = { 0 }, l = { 0 };

	geak_buf_puts(b, "<div class=\"cards\">\n");
	geak_buf_printf(&v, "%ld", integer(s, "tasks"));
	card(b, "tasks", v.data);
	geak_buf_reset(&v), put_percent(&v, num(s, "call_accuracy"));
	card(b, "call accuracy", v.data);
	geak_buf_reset(&v), put_percent(&v, num(s, "exec_accuracy"));
	card(b, "exec accuracy", v.data);
	if (speed_measured(s)) {
		json_t *fp;
		size_t i;

		geak_buf_reset(&v), put_speedup(&v, num(s, "speedup_mean"));
		card(b, "mean speedup", v.data);
		geak_buf_reset(&v), put_speedup(&v, num(s, "speedup_geomean"));
		card(b, "geometric mean", v.data);
		json_array_foreach(json_object_get(s, "fast_p"), i, fp) {
			char label[48];

			snprintf(label, sizeof label, "fast_%g", num(fp, "p"));
			geak_buf_reset(&v), put_percent(&v, num(fp, "share"));
			card(b, label, v.data);
		}
	}
	geak_buf_reset(&v), geak_buf_printf(&v, "%ld", integer(u, "calls"));
	card(b, "LLM calls", v.data);
	geak_buf_reset(&v), geak_fmt_count(&v, (double)integer(u, "input_tokens"));
	card(b, "input tokens", v.data);
	geak_buf_reset(&v), geak_fmt_count(&v, (double)integer(u, "output_tokens"));
	card(b, "output tokens", v.data);
	/* A model without a price still shows its card: "unpriced". */
	if (!isnan(num(u, "cost")) || integer(u, "calls") > 0) {
		geak_buf_reset(&v);
		if (isnan(num(u, "cost")))
			geak_buf_puts(&v, "unpriced");
		else
			geak_fmt_cost(&v, num(u, "cost"));
		geak_buf_puts(&l, "LLM cost (US$)");
		if (integer(u, "unpriced_calls") && !isnan(num(u, "cost")))
			geak_buf_printf(&l, ", %ld calls unpriced", integer(u, "unpriced_calls"));
		card(b, l.data, v.data);
	}
	geak_buf_puts(b, "</div>\n");
	geak_buf_free(&v);
	geak_buf_free(&l);
}

/* The tasks without a correct kernel, by why. */
static void
failures(struct geak_buf *b, int md, json_t *s)
{
	json_t *list = json_object_get(s, "failures"), *f, *id;
	long tasks = integer(s, "tasks");
	size_t i, j;

	geak_buf_puts(b, md ? "## Why tasks failed\n\n" : "<h2>Why tasks failed</h2>\n");
	if (!json_array_size(list)) {
		geak_buf_puts(b, md ? "Every task has a correct kernel.\n\n" :
		    "<p>Every task has a correct kernel.</p>\n");
		return;
	}
	geak_buf_puts(b, md ? "| why | tasks | share | for example |\n| --- | ---: | ---: | --- |\n" :
	    "<table><tr><th>why (the best candidate's outcome)</th><th>tasks</th><th>share</th>"
	    "<th class=\"why\">for example</th></tr>\n");
	json_array_foreach(list, i, f) {
		const char *reason = json_string_value(json_object_get(f, "reason"));
		geak_buf_puts(b, md ? "| " : "<tr><td>");
		put_text(b, md, gloss(reason));
		geak_buf_puts(b, md ? " (" : " <span class=\"muted\">");
		put_text(b, md, reason);
		geak_buf_printf(b, md ? ") | %ld | " : "</span></td><td>%ld</td><td>", integer(f, "tasks"));
		put_percent(b, tasks ? (double)integer(f, "tasks") / (double)tasks : NAN);
		geak_buf_puts(b, md ? " | " : "</td><td class=\"why\">");
		json_array_foreach(json_object_get(f, "ids"), j, id) {
			geak_buf_puts(b, j ? ", " : "");
			put_text(b, md, json_string_value(id));
		}
		geak_buf_puts(b, md ? " |\n" : "</td></tr>\n");
	}
	geak_buf_puts(b, md ? "\n" : "</table>\n");
}

/* One roofline per task that has one, after the charts of the whole
 * run: the page grows with the tasks only where the device's counts
 * were there to draw. */
static void
rooflines(struct geak_buf *b, json_t *kernels)
{
	json_t *k;
	size_t i, n = 0;

	json_array_foreach(kernels, i, k) {
		if (!json_is_object(json_object_get(k, "roofline")))
			continue;
		if (!n++)
			geak_buf_puts(b, "<h2>Rooflines</h2>\n<div class=\"plots\">\n");
		geak_svg_roofline(b, json_string_value(json_object_get(k, "id")),
		    json_object_get(k, "roofline"));
	}
	if (n)
		geak_buf_puts(b, "</div>\n");
}

static void
plots(struct geak_buf *b, json_t *s, json_t *spend)
{
	static const struct geak_series acc[] = {
		{ "call", "call_accuracy" }, { "execution", "exec_accuracy" } };
	static const struct geak_series spd[] = {
		{ "mean", "speedup_mean" }, { "geometric mean", "speedup_geomean" } };
	static const struct geak_series tok[] = {
		{ "input", "input_tokens" }, { "output", "output_tokens" } };
	static const struct geak_series usd[] = { { "cost", "cost" } };
	static const struct geak_series pk[] = { { "call", "call" }, { "execution", "exec" } };
	json_t *kernels = json_object_get(s, "kernels"), *k, *u = json_object_get(s, "usage");
	double *v = geak_xcalloc(json_array_size(kernels) + 1, sizeof *v);
	size_t n = 0, i;

	geak_buf_puts(b, "<div class=\"plots\">\n");
	geak_svg_bars(b, "Accuracy by iteration", "Share of tasks with a kernel that ran (call) "
	    "and one that was correct (execution), found at or before each iteration, over all "
	    "runs.", json_object_get(s, "by_iter"), "iter", "iteration", acc, 2, GEAK_SVG_PERCENT);
	json_array_foreach(kernels, i, k)
		if (json_is_number(json_object_get(k, "speedup")) && num(k, "speedup") > 0)
			v[n++] = num(k, "speedup");
	if (n) {
		geak_svg_log_hist(b, "Speedup of the selected kernels", "Tasks by the speedup of "
		    "their selected kernel (reference time over kernel time), in bins of a factor "
		    "of 1.41 on a log scale: red slower than the reference, green faster.", v, n);
		geak_svg_bars(b, "Speedup by iteration", "Mean and geometric mean speedup of the "
		    "best correct kernels found at or before each iteration.",
		    json_object_get(s, "by_iter"), "iter", "iteration", spd, 2, GEAK_SVG_SPEEDUP);
	}
	if (integer(u, "calls") > 0)
		geak_svg_bars(b, "Tokens per iteration", "Tokens the model read and wrote in each "
		    "iteration, over every lineage.", spend, "iter", "iteration", tok, 2,
		    GEAK_SVG_COUNT);
	if (integer(u, "calls") > 0 && num(u, "cost") > 0)
		geak_svg_bars(b, "Cost per iteration (US$)", "What the model's answers cost in each "
		    "iteration, at the list prices of share/prices.tsv.", spend, "iter", "iteration",
		    usd, 1, GEAK_SVG_USD);
	if (integer(s, "runs") > 1)
		geak_svg_bars(b, "pass@k", "Unbiased pass@k over independent runs, averaged over "
		    "the tasks with at least k runs.", json_object_get(s, "pass_at_k"), "k", "k",
		    pk, 2, GEAK_SVG_PERCENT);
	geak_buf_puts(b, "</div>\n");
	free(v);
	rooflines(b, kernels);
}

/* ---- tables, in either form ---- */

/* A row cell by cell; kinds: 'i' integer, '%' fraction, 'x' speedup,
 * 'b' yes/no, 'n' a count, '$' a cost, 'w' a failure's reason, 's' text. */
static void
cells(struct geak_buf *b, int md, json_t *row, const char *keys, const char *kinds)
{
	char *copy = geak_xstrdup(keys), *save = NULL;
	size_t col = 0;

	geak_buf_puts(b, md ? "|" : "<tr>");
	for (char *k = strtok_r(copy, ",", &save); k; k = strtok_r(NULL, ",", &save), col++) {
		json_t *v = json_object_get(row, k);
		geak_buf_puts(b, md ? " " : kinds[col] == 'w' ? "<td class=\"why\">" : "<td>");
		switch (kinds[col]) {
		case 'i': if (json_is_integer(v)) geak_buf_printf(b, "%ld", (long)json_integer_value(v));
			else geak_buf_puts(b, "-");
			break;
		case '%': put_percent(b, num(row, k)); break;
		case 'x': put_speedup(b, num(row, k)); break;
		case 'b': geak_buf_puts(b, json_is_true(v) ? "yes" : "no"); break;
		case 'n': geak_fmt_count(b, num(row, k)); break;
		case '$': if (json_is_number(v)) geak_fmt_cost(b, num(row, k));
			else geak_buf_puts(b, integer(row, "calls") > 0 ? "unpriced" : "-");
			break;
		case 'a': if (md) put_text(b, md, json_string_value(v));
			else {
				geak_buf_printf(b, "<a href=\"#k-%ld\">", integer(row, "index"));
				put_text(b, md, json_string_value(v));
				geak_buf_puts(b, "</a>");
			}
			break;
		case 'w': if (json_is_string(v)) put_text(b, md, gloss(json_string_value(v))); break;
		default: put_text(b, md, json_string_value(v));
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
		geak_buf_printf(b, md ? " %s |" : kinds[n] == 'w' ? "<th class=\"why\">%s</th>" :
		    "<th>%s</th>", h);
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

/* by_iter with each iteration's own spending beside its accuracies. */
static json_t *
iter_rows(json_t *by_iter, json_t *spend)
{
	json_t *rows = json_array(), *row;
	size_t i;

	json_array_foreach(by_iter, i, row) {
		json_t *r = json_copy(row), *sp = json_array_get(spend, i);
		json_object_update(r, sp);
		json_object_set_new(r, "tokens", json_integer(geak_add_sat(integer(sp, "input_tokens"),
		    integer(sp, "output_tokens"))));
		json_array_append_new(rows, r);
	}
	return rows;
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
tables(struct geak_buf *b, int md, json_t *s, json_t *spend)
{
	const char *h2 = md ? "## %s\n\n" : "<h2>%s</h2>\n";
	json_t *rows = iter_rows(json_object_get(s, "by_iter"), spend);
	int speed = speed_measured(s);

	if (json_array_size(json_object_get(s, "by_difficulty"))) {
		geak_buf_printf(b, h2, "By difficulty");
		table(b, md, speed ? "difficulty,tasks,call accuracy,execution accuracy,mean speedup,"
		    "geometric mean" : "difficulty,tasks,call accuracy,execution accuracy",
		    json_object_get(s, "by_difficulty"), speed ?
		    "difficulty,tasks,call_accuracy,exec_accuracy,speedup_mean,speedup_geomean" :
		    "difficulty,tasks,call_accuracy,exec_accuracy", speed ? "ii%%xx" : "ii%%");
	}
	geak_buf_printf(b, h2, "By iteration (best so far; each iteration's own spending)");
	table(b, md, speed ? "iteration,call accuracy,execution accuracy,mean speedup,geometric "
	    "mean,LLM calls,tokens,cost (US$)" : "iteration,call accuracy,execution accuracy,LLM "
	    "calls,tokens,cost (US$)", rows, speed ?
	    "iter,call_accuracy,exec_accuracy,speedup_mean,speedup_geomean,calls,tokens,cost" :
	    "iter,call_accuracy,exec_accuracy,calls,tokens,cost", speed ? "i%%xxin$" : "i%%in$");
	if (speed && json_array_size(json_object_get(s, "fast_p"))) {
		geak_buf_printf(b, h2, "fast_p: correct and more than p times faster");
		fast_table(b, md, json_object_get(s, "fast_p"));
	}
	if (json_array_size(json_object_get(s, "by_model")) > 1) {
		geak_buf_printf(b, h2, "By model");
		table(b, md, speed ? "model,tasks,call accuracy,execution accuracy,mean speedup,"
		    "geometric mean,LLM calls,input tokens,output tokens,cost (US$)" :
		    "model,tasks,call accuracy,execution accuracy,LLM calls,input tokens,"
		    "output tokens,cost (US$)", json_object_get(s, "by_model"), speed ?
		    "model,tasks,call_accuracy,exec_accuracy,speedup_mean,speedup_geomean,calls,"
		    "input_tokens,output_tokens,cost" : "model,tasks,call_accuracy,exec_accuracy,"
		    "calls,input_tokens,output_tokens,cost", speed ? "si%%xxinn$" : "si%%inn$");
	}
	if (integer(s, "runs") > 1) {
		geak_buf_printf(b, h2, "pass@k over independent runs");
		table(b, md, "k,tasks with at least k runs,call pass@k,exec pass@k",
		    json_object_get(s, "pass_at_k"), "k,tasks,call,exec", "ii%%");
	}
	geak_buf_printf(b, h2, "Kernels");
	json_t *k;
	size_t i;
	json_array_foreach(json_object_get(s, "kernels"), i, k)
		json_object_set_new(k, "index", json_integer((json_int_t)i));
	table(b, md, speed ? "kernel,difficulty,call,exec,speedup,why not,runs,exec runs,run,"
	    "iteration" : "kernel,difficulty,call,exec,why not,runs,exec runs,run,iteration",
	    json_object_get(s, "kernels"), speed ?
	    "id,difficulty,call,exec,speedup,reason,runs,exec_runs,run,iter" :
	    "id,difficulty,call,exec,reason,runs,exec_runs,run,iter",
	    speed ? "aibbxwiiii" : "aibbwiiii");
	json_decref(rows);
}

static void
html_report(struct geak_buf *b, json_t *s)
{
	json_t *spend = iter_spend(json_object_get(s, "by_iter"));

	html_head(b);
	geak_buf_puts(b, "<h1>geak report</h1>\n");
	provenance(b, s);
	cards(b, s);
	geak_report_wins(b, json_object_get(s, "kernels"));
	failures(b, 0, s);
	plots(b, s, spend);
	tables(b, 0, s, spend);
	geak_report_tasks(b, json_object_get(s, "kernels"), gloss);
	if (speed_measured(s))
		geak_buf_puts(b, "<p class=\"muted\">Speedups are measured by geak-eval, the "
		    "candidate timed against the reference on the same GPU; the mean is over the "
		    "kernels that passed, as GEAK reports it.</p>\n");
	geak_buf_puts(b, "<p class=\"muted\">Costs are at the list prices of "
	    "share/prices.tsv; a model without a price there is \"unpriced\".</p>\n");
	geak_buf_puts(b, geak_report_script);
	geak_buf_puts(b, "</body></html>\n");
	json_decref(spend);
}

/* ---- Markdown ---- */

static void
md_report(struct geak_buf *b, json_t *s)
{
	json_t *u = json_object_get(s, "usage"), *p = json_object_get(s, "provenance");
	json_t *spend = iter_spend(json_object_get(s, "by_iter"));

	geak_buf_puts(b, "# geak report\n\n- made: ");
	put_date(b);
	geak_buf_printf(b, "\n- tasks: %ld (%ld records, up to %ld run%s per task)\n- model: ",
	    integer(s, "tasks"), integer(s, "records"), integer(s, "runs"),
	    integer(s, "runs") == 1 ? "" : "s");
	put_tags(b, 1, json_object_get(p, "models"));
	if (integer(p, "replayed") > 0)
		geak_buf_puts(b, integer(p, "live") ? " (some answers replayed)" :
		    " (every answer replayed from a recording: no model was asked)");
	geak_buf_puts(b, "\n- device: ");
	put_tags(b, 1, json_object_get(p, "devices"));
	geak_buf_puts(b, "\n- call accuracy: ");
	put_percent(b, num(s, "call_accuracy"));
	geak_buf_puts(b, "\n- execution accuracy: ");
	put_percent(b, num(s, "exec_accuracy"));
	if (speed_measured(s)) {
		json_t *fp;
		size_t i;

		geak_buf_puts(b, "\n- mean speedup over passing kernels: ");
		put_speedup(b, num(s, "speedup_mean"));
		geak_buf_puts(b, "; geometric mean: ");
		put_speedup(b, num(s, "speedup_geomean"));
		json_array_foreach(json_object_get(s, "fast_p"), i, fp) {
			geak_buf_printf(b, "%sfast_%g ", i ? ", " :
			    "\n- fast_p (correct and more than p times faster): ", num(fp, "p"));
			put_percent(b, num(fp, "share"));
		}
	} else {
		geak_buf_puts(b, "\n- speed: not measured");
	}
	geak_buf_printf(b, "\n- LLM: %ld calls, %ld input and %ld output tokens",
	    integer(u, "calls"), integer(u, "input_tokens"), integer(u, "output_tokens"));
	if (!isnan(num(u, "cost"))) {
		geak_buf_puts(b, ", ");
		geak_fmt_cost(b, num(u, "cost"));
	} else if (integer(u, "calls") > 0) {
		geak_buf_puts(b, ", cost unpriced (no price for the model)");
	}
	geak_buf_puts(b, "\n\n");
	failures(b, 1, s);
	tables(b, 1, s, spend);
	json_decref(spend);
}

/* The page in b to path, under a temporary name renamed into place. */
static int
write_page(const char *path, struct geak_buf *b)
{
	char *tmp = geak_xasprintf("%s.tmp", path);
	FILE *fp;
	int rc = -1;

	if (!(fp = fopen(tmp, "w")))
		geak_warn("%s:", tmp);
	else if (fwrite(b->data, 1, b->len, fp) != b->len) {
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
	return rc;
}

int
geak_report_write(const char *path, json_t *summary)
{
	struct geak_buf b = { 0 };
	int rc;

	if (geak_report_format(path) == GEAK_REPORT_MD)
		md_report(&b, summary);
	else
		html_report(&b, summary);
	rc = write_page(path, &b);
	geak_buf_free(&b);
	return rc;
}

/* ---- two runs compared ---- */

static void
put_cost_of(struct geak_buf *b, json_t *side)
{
	if (json_is_number(json_object_get(side, "cost")))
		geak_fmt_cost(b, num(side, "cost"));
	else
		geak_buf_puts(b, integer(side, "calls") > 0 ? "unpriced" : "-");
}

static void
cmp_card(struct geak_buf *b, const char *label, json_t *ra, json_t *rb, const char *key,
    char kind)
{
	struct geak_buf v = { 0 };

	for (int side = 0; side < 2; side++) {
		json_t *r = side ? rb : ra;
		geak_buf_puts(&v, side ? " \u2192 " : "");
		if (kind == '%')
			put_percent(&v, num(r, key));
		else if (kind == 'x')
			put_speedup(&v, num(r, key));
		else
			put_cost_of(&v, r);
	}
	card(b, label, v.data);
	geak_buf_free(&v);
}

static void
cmp_runs(struct geak_buf *b, json_t *cmp)
{
	static const char *const names[] = { "A", "B" };

	geak_buf_puts(b, "<dl class=\"prov\">\n<dt>made</dt><dd>");
	put_date(b);
	geak_buf_puts(b, "</dd>\n");
	for (int side = 0; side < 2; side++) {
		json_t *r = json_object_get(cmp, side ? "b" : "a");
		json_t *p = json_object_get(r, "provenance");
		geak_buf_printf(b, "<dt>%s</dt><dd><code>", names[side]);
		put_text(b, 0, json_string_value(json_object_get(r, "path")));
		geak_buf_printf(b, "</code>: %ld tasks; model ", integer(r, "tasks"));
		put_tags(b, 0, json_object_get(p, "models"));
		geak_buf_puts(b, "; device ");
		put_tags(b, 0, json_object_get(p, "devices"));
		geak_buf_puts(b, "</dd>\n");
	}
	geak_buf_puts(b, "</dl>\n");
}

static void
cmp_cards(struct geak_buf *b, json_t *cmp)
{
	json_t *ra = json_object_get(cmp, "a"), *rb = json_object_get(cmp, "b");
	json_t *d = json_object_get(cmp, "delta"), *w = json_object_get(cmp, "wins");
	char label[96];

	geak_buf_puts(b, "<p class=\"muted\">Each card: run A \u2192 run B.</p>\n"
	    "<div class=\"cards wide\">\n");
	snprintf(label, sizeof label, "exec accuracy (%+.1f points)",
	    100 * num(d, "exec_accuracy"));
	cmp_card(b, isnan(num(d, "exec_accuracy")) ? "exec accuracy" : label,
	    ra, rb, "exec_accuracy", '%');
	snprintf(label, sizeof label, "call accuracy (%+.1f points)",
	    100 * num(d, "call_accuracy"));
	cmp_card(b, isnan(num(d, "call_accuracy")) ? "call accuracy" : label,
	    ra, rb, "call_accuracy", '%');
	if (!isnan(num(ra, "speedup_geomean")) || !isnan(num(rb, "speedup_geomean"))) {
		snprintf(label, sizeof label, "geometric mean speedup (x%.2f)",
		    num(d, "speedup_geomean"));
		cmp_card(b, isnan(num(d, "speedup_geomean")) ? "geometric mean speedup" :
		    label, ra, rb, "speedup_geomean", 'x');
	}
	cmp_card(b, "LLM cost (US$)", ra, rb, "cost", '$');
	geak_buf_printf(b, "<div class=\"card\"><b>%ld / %ld</b><span>tasks won by B / by A"
	    "</span></div>\n<div class=\"card\"><b>%ld / %ld</b><span>ties / neither correct"
	    "</span></div>\n</div>\n", integer(w, "b"), integer(w, "a"), integer(w, "tie"),
	    integer(w, "neither"));
}

static void
cmp_plots(struct geak_buf *b, json_t *cmp)
{
	static const struct geak_series acc[] = {
		{ "call", "call_accuracy" }, { "execution", "exec_accuracy" } };
	json_t *rows = json_array(), *t;
	size_t n = json_array_size(json_object_get(cmp, "tasks")), m = 0, i;
	double *x = geak_xcalloc(n + 1, sizeof *x), *y = geak_xcalloc(n + 1, sizeof *y);
	const char **labels = geak_xcalloc(n + 1, sizeof *labels);

	for (int side = 0; side < 2; side++) {
		json_t *r = json_deep_copy(json_object_get(cmp, side ? "b" : "a"));
		json_object_set_new(r, "run", json_integer(side + 1));
		json_array_append_new(rows, r);
	}
	json_array_foreach(json_object_get(cmp, "tasks"), i, t) {
		double sa = num(json_object_get(t, "a"), "speedup");
		double sb = num(json_object_get(t, "b"), "speedup");
		if (!(sa > 0) || !(sb > 0))
			continue;
		x[m] = sa, y[m] = sb;
		labels[m++] = json_string_value(json_object_get(t, "id"));
	}
	geak_buf_puts(b, "<div class=\"plots\">\n");
	if (m)
		geak_svg_scatter_log(b, "Speedup per task, A against B", "One point per task "
		    "correct in both runs and timed in both: its speedup in A across, in B upwards, "
		    "on log scales. Above the diagonal B's kernel is faster.", x, y, labels, m,
		    "speedup in A (log scale)", "speedup in B");
	geak_svg_bars(b, "Accuracy of each run", "Share of tasks whose selected kernel ran "
	    "(call) and was correct (execution): run 1 is A, run 2 is B.", rows, "run",
	    "run (1: A, 2: B)", acc, 2, GEAK_SVG_PERCENT);
	geak_buf_puts(b, "</div>\n");
	json_decref(rows);
	free(x);
	free(y);
	free(labels);
}

/* A table of the tasks whose winner is one of winners, by margin,
 * largest first. */
static int
by_margin(const void *pa, const void *pb)
{
	double a = num(*(json_t *const *)pa, "margin"), b = num(*(json_t *const *)pb, "margin");

	if (isnan(a) != isnan(b))
		return isnan(a) ? -1 : 1; /* correct in one run only: the widest win */
	return isnan(a) || a == b ? 0 : a > b ? -1 : 1;
}

static void
cmp_side_cells(struct geak_buf *b, int md, json_t *t, const char *key, char kind)
{
	for (int side = 0; side < 2; side++) {
		json_t *s = json_object_get(t, side ? "b" : "a");
		geak_buf_puts(b, md ? " " : "<td>");
		if (json_is_null(s) || !s)
			geak_buf_puts(b, "absent");
		else if (kind == 'b')
			geak_buf_puts(b, json_is_true(json_object_get(s, key)) ? "yes" : "no");
		else if (kind == 'x')
			put_speedup(b, num(s, key));
		else
			put_cost_of(b, s);
		geak_buf_puts(b, md ? " |" : "</td>");
	}
}

/* w is one of the blank-separated words of list. */
static int
one_of(const char *w, const char *list)
{
	size_t n = w ? strlen(w) : 0;

	for (const char *p = list; n && *p; p += strcspn(p, " "), p += *p == ' ')
		if (strncmp(p, w, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

static void
cmp_table(struct geak_buf *b, int md, json_t *cmp, const char *title, const char *winners)
{
	json_t *list = json_array(), *t;
	size_t i, n;

	json_t **v = geak_xcalloc(json_array_size(json_object_get(cmp, "tasks")) + 1, sizeof *v);

	n = 0;
	json_array_foreach(json_object_get(cmp, "tasks"), i, t)
		if (one_of(json_string_value(json_object_get(t, "winner")), winners))
			v[n++] = t;
	qsort(v, n, sizeof *v, by_margin);
	for (i = 0; i < n; i++)
		json_array_append(list, v[i]);
	free(v);
	geak_buf_printf(b, md ? "## %s (%zu)\n\n" : "<h2>%s (%zu)</h2>\n", title, n);
	if (!n) {
		json_decref(list);
		return;
	}
	geak_buf_puts(b, md ? "| task | winner | by | A exec | B exec | A speedup | B speedup | "
	    "A cost | B cost |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n" :
	    "<table class=\"cmp\"><tr><th>task</th><th>winner</th><th>by</th><th>A exec</th>"
	    "<th>B exec</th><th>A speedup</th><th>B speedup</th><th>A cost</th><th>B cost</th></tr>\n");
	json_array_foreach(list, i, t) {
		const char *w = json_string_value(json_object_get(t, "winner"));
		geak_buf_puts(b, md ? "| " : "<tr><td>");
		put_text(b, md, json_string_value(json_object_get(t, "id")));
		geak_buf_printf(b, md ? " | %s | " : "</td><td>%s</td><td>", !strcmp(w, "a") ? "A" :
		    !strcmp(w, "b") ? "B" : w);
		if (!isnan(num(t, "margin")))
			geak_buf_printf(b, "%.2fx", num(t, "margin"));
		else
			geak_buf_puts(b, !strcmp(w, "a") || !strcmp(w, "b") ? "correct vs not" : "-");
		geak_buf_puts(b, md ? " |" : "</td>");
		cmp_side_cells(b, md, t, "exec", 'b');
		cmp_side_cells(b, md, t, "speedup", 'x');
		cmp_side_cells(b, md, t, "cost", '$');
		geak_buf_puts(b, md ? "\n" : "</tr>\n");
	}
	geak_buf_puts(b, md ? "\n" : "</table>\n");
	json_decref(list);
}

int
geak_report_compare_write(const char *path, json_t *cmp)
{
	struct geak_buf b = { 0 };
	int md = geak_report_format(path) == GEAK_REPORT_MD, rc;

	if (md) {
		geak_buf_puts(&b, "# geak: two runs compared\n\n");
	} else {
		html_head(&b);
		geak_buf_puts(&b, "<h1>geak: two runs compared</h1>\n");
		cmp_runs(&b, cmp);
		cmp_cards(&b, cmp);
		cmp_plots(&b, cmp);
	}
	cmp_table(&b, md, cmp, "Where B won", "b");
	cmp_table(&b, md, cmp, "Where A won", "a");
	cmp_table(&b, md, cmp, "Ties and tasks neither run solved", "tie neither");
	if (!md)
		geak_buf_puts(&b, "<p class=\"muted\">A task is won by the run whose kernel is "
		    "correct where the other's is not, or faster by more than 2% where both are "
		    "correct and timed; \"by\" is the winner's speedup over the loser's. Costs are "
		    "at the list prices of share/prices.tsv (\"unpriced\": no price for the "
		    "model).</p>\n</body></html>\n");
	rc = write_page(path, &b);
	geak_buf_free(&b);
	return rc;
}
