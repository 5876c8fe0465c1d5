/* reportkernel.c: the kernel-first parts of the HTML report: the best
 * wins at the top, and a folded section per task with its kept code
 * (coloured, copyable), its diff against where it started, its cases'
 * times against the reference's and the device's peaks, the attempts
 * that led to it, and for a failure what the evaluator said. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/linediff.h"
#include "progress.h"
#include "report/pyhtml.h"
#include "report/report.h"
#include "report/svgplot.h"

#define WINS_SHOWN 20      /* rows of the wins table before the fold */
#define DIFF_MAX_EDITS 4000
#define DIFF_CONTEXT 3

const char geak_report_kernel_css[] =
    "details.task{border:1px solid #e5e7eb;border-radius:8px;margin:6px 0;padding:0 12px}\n"
    "details.task>summary{cursor:pointer;padding:7px 0;font-size:14px}details.task[open]>summary{border-bottom:1px solid #e5e7eb}\n"
    "details.task .body{padding:6px 0 10px}details.sub{margin:8px 0}details.sub>summary{cursor:pointer;font-size:14px;color:#374151}\n"
    ".badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;margin-left:6px}\n"
    ".b-ok{background:#dcfce7;color:#166534}.b-fail{background:#fee2e2;color:#991b1b}.b-flag{background:#ffedd5;color:#9a3412}\n"
    "pre{background:#f9fafb;border:1px solid #e5e7eb;border-radius:6px;padding:8px 10px;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;overflow:auto;max-height:560px;margin:4px 0}\n"
    "pre.err{background:#fef2f2;border-color:#fecaca;white-space:pre-wrap}\n"
    ".kw{color:#7c3aed}.st{color:#047857}.cm{color:#6b7280;font-style:italic}.nu{color:#b45309}.de{color:#be185d}.fn{color:#1d4ed8;font-weight:600}\n"
    ".dl{display:block}.dl-add{background:#dcfce7}.dl-del{background:#fee2e2}.dl-hunk{color:#6b7280;background:#eef2ff}\n"
    "button.copy{font-size:12px;padding:1px 8px;margin-left:8px;cursor:pointer}\n"
    ".tl{display:flex;flex-wrap:wrap;gap:3px;align-items:center;margin:3px 0;font-size:12px}\n"
    ".tl .run{color:#6b7280;width:52px}.chip{border-radius:4px;padding:0 5px;border:1px solid transparent;white-space:nowrap}\n"
    ".v-ok{background:#dcfce7}.v-flag{background:#ffedd5}.v-wrong{background:#fef9c3}.v-fail{background:#fee2e2}.v-err{background:#e5e7eb}\n"
    ".chip.kept{border-color:#111827;font-weight:600}\n"
    "table.cases td,table.cases th{padding:3px 10px}\n"
    "table.wins td:nth-child(2),table.wins th:nth-child(2),table.wins td:nth-child(6),table.wins th:nth-child(6){text-align:left}\n"
    ".cards.wide{grid-template-columns:repeat(auto-fill,minmax(200px,1fr))}\n";

/* Opens the folded section a link points at, and copies a code block
 * (or, where the clipboard is refused, selects it for a copy by hand). */
const char geak_report_script[] =
    "<script>\n"
    "function geakOpen(){var e=document.getElementById(location.hash.slice(1));"
    "for(;e;e=e.parentElement)if(e.tagName==='DETAILS')e.open=true}\n"
    "addEventListener('hashchange',geakOpen);geakOpen();\n"
    "document.addEventListener('click',function(ev){var b=ev.target.closest('button.copy');"
    "if(!b)return;ev.preventDefault();var p=document.getElementById(b.getAttribute('data-for'));"
    "function sel(){var r=document.createRange();r.selectNodeContents(p);var s=getSelection();"
    "s.removeAllRanges();s.addRange(r);b.textContent='selected: press Ctrl+C'}"
    "if(navigator.clipboard)navigator.clipboard.writeText(p.innerText).then(function(){"
    "b.textContent='copied'},sel);else sel()});\n"
    "</script>\n";

static double
num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *
str(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static void
esc(struct geak_buf *b, const char *s)
{
	geak_svg_escape(b, s ? s : "");
}

static void
put_x(struct geak_buf *b, double v)
{
	if (isnan(v))
		geak_buf_puts(b, "not measured");
	else
		geak_buf_printf(b, "%.2fx", v);
}

static void
put_ms(struct geak_buf *b, double v)
{
	if (isnan(v))
		geak_buf_puts(b, "-");
	else
		geak_buf_printf(b, v < 0.1 ? "%.4f" : "%.3f", v);
}

static void
put_pct(struct geak_buf *b, double v)
{
	if (isnan(v))
		geak_buf_puts(b, "-");
	else
		geak_buf_printf(b, "%.1f%%", 100 * v);
}

/* Sums of the reference's and the kernel's times over the cases timed
 * on both. */
static void
case_sums(json_t *k, double *ref, double *mine)
{
	json_t *c;
	size_t i;

	*ref = *mine = NAN;
	json_array_foreach(json_object_get(k, "cases"), i, c)
		if (num(c, "ms") >= 0 && num(c, "ms_ref") >= 0) {
			*ref = (isnan(*ref) ? 0 : *ref) + num(c, "ms_ref");
			*mine = (isnan(*mine) ? 0 : *mine) + num(c, "ms");
		}
}

/* ---- the order: the fastest correct kernels first ---- */

struct slot {
	size_t index;
	double speedup;  /* NAN: not correct, or not measured */
	int exec;
};

static int
slot_cmp(const void *pa, const void *pb)
{
	const struct slot *a = pa, *b = pb;

	if (a->exec != b->exec)
		return b->exec - a->exec;
	if (isnan(a->speedup) != isnan(b->speedup))
		return isnan(a->speedup) ? 1 : -1;
	if (!isnan(a->speedup) && a->speedup != b->speedup)
		return a->speedup > b->speedup ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The kernels' indices, correct ones by speedup, then the others in
 * their order; *n is their number. */
static struct slot *
kernel_order(json_t *kernels, size_t *n)
{
	struct slot *v = geak_xcalloc(json_array_size(kernels) + 1, sizeof *v);
	json_t *k;
	size_t i;

	json_array_foreach(kernels, i, k) {
		v[i].index = i;
		v[i].exec = json_is_true(json_object_get(k, "exec"));
		v[i].speedup = v[i].exec ? num(k, "speedup") : NAN;
	}
	qsort(v, json_array_size(kernels), sizeof *v, slot_cmp);
	*n = json_array_size(kernels);
	return v;
}

/* ---- best wins ---- */

static void
wins_head(struct geak_buf *b)
{
	geak_buf_puts(b, "<table class=\"wins\"><tr><th>#</th><th>kernel</th><th>speedup</th>"
	    "<th>reference ms</th><th>kernel ms</th><th>model</th><th>found</th></tr>\n");
}

static void
wins_row(struct geak_buf *b, json_t *k, size_t index, size_t rank)
{
	double ref, mine;

	case_sums(k, &ref, &mine);
	geak_buf_printf(b, "<tr><td>%zu</td><td><a href=\"#k-%zu\">", rank, index);
	esc(b, str(k, "id"));
	geak_buf_puts(b, "</a></td><td>");
	put_x(b, num(k, "speedup"));
	geak_buf_puts(b, "</td><td>");
	put_ms(b, ref);
	geak_buf_puts(b, "</td><td>");
	put_ms(b, mine);
	geak_buf_puts(b, "</td><td>");
	esc(b, str(k, "model") ? str(k, "model") : "-");
	geak_buf_printf(b, "</td><td>run %ld, iteration %ld</td></tr>\n",
	    (long)json_integer_value(json_object_get(k, "run")),
	    (long)json_integer_value(json_object_get(k, "iter")));
}

void
geak_report_wins(struct geak_buf *b, json_t *kernels)
{
	size_t n, wins = 0;
	struct slot *order = kernel_order(kernels, &n);

	geak_buf_puts(b, "<h2 id=\"wins\">Best wins</h2>\n");
	while (wins < n && order[wins].exec)
		wins++;
	if (!wins) {
		geak_buf_puts(b, "<p>No task has a correct kernel.</p>\n");
		free(order);
		return;
	}
	geak_buf_printf(b, "<p class=\"muted\">The %zu correct kernels, fastest first (speedup: "
	    "the reference's time over the kernel's, summed over the performance cases); each "
	    "links to its task below.</p>\n", wins);
	wins_head(b);
	for (size_t r = 0; r < wins; r++) {
		if (r == WINS_SHOWN) {
			geak_buf_printf(b, "</table>\n<details class=\"sub\"><summary>the other %zu"
			    "</summary>\n", wins - WINS_SHOWN);
			wins_head(b);
		}
		wins_row(b, json_array_get(kernels, order[r].index), order[r].index, r + 1);
	}
	geak_buf_puts(b, wins > WINS_SHOWN ? "</table></details>\n" : "</table>\n");
	free(order);
}

/* ---- one task ---- */

static void
cases_table(struct geak_buf *b, json_t *cases)
{
	json_t *c;
	size_t i;

	if (!json_array_size(cases))
		return;
	geak_buf_puts(b, "<table class=\"cases\"><tr><th>case</th><th>reference ms</th>"
	    "<th>kernel ms</th><th>speedup</th><th>kernel: HBM</th><th>kernel: compute</th>"
	    "<th>reference: HBM</th><th>reference: compute</th><th>bound</th></tr>\n");
	json_array_foreach(cases, i, c) {
		char *shape = json_dumps(json_object_get(c, "shape"), JSON_COMPACT | JSON_ENCODE_ANY);
		double ms = num(c, "ms"), ref = num(c, "ms_ref");
		geak_buf_puts(b, "<tr><td>");
		esc(b, shape && strlen(shape) > 70 ? (shape[70] = '\0', shape) : shape);
		free(shape);
		geak_buf_puts(b, "</td><td>");
		put_ms(b, ref);
		geak_buf_puts(b, "</td><td>");
		put_ms(b, ms);
		geak_buf_puts(b, "</td><td>");
		if (ms > 0 && ref > 0)
			geak_buf_printf(b, "%.2fx", ref / ms);
		else
			geak_buf_puts(b, "-");
		static const char *const fracs[] = { "hbm", "compute", "hbm_ref", "compute_ref" };
		for (size_t f = 0; f < 4; f++) {
			geak_buf_puts(b, "</td><td>");
			put_pct(b, num(c, fracs[f]));
		}
		geak_buf_puts(b, "</td><td>");
		esc(b, str(c, "bound") ? str(c, "bound") : "-");
		geak_buf_puts(b, "</td></tr>\n");
	}
	geak_buf_puts(b, "</table>\n<p class=\"muted\">Times are medians in milliseconds, the "
	    "two timed in turn on one GPU; HBM and compute are the shares of the device's peak "
	    "bandwidth and arithmetic rate each reached.</p>\n");
}

static const char *
verdict_class(const char *v)
{
	if (!v)
		return "v-err";
	if (!strcmp(v, "correct"))
		return "v-ok";
	if (!strcmp(v, "flagged"))
		return "v-flag";
	if (!strcmp(v, "wrong_output"))
		return "v-wrong";
	if (!strcmp(v, "call_failed"))
		return "v-fail";
	return "v-err";
}

static int
is_kept(json_t *k, json_t *a)
{
	const char *sha = str(a, "code_sha"), *kept = str(k, "code_sha");

	return sha && kept && !strcmp(sha, kept) &&
	    json_equal(json_object_get(a, "run"), json_object_get(k, "run"));
}

/* The attempts, a line per run, one chip each in the order made. */
static void
timeline(struct geak_buf *b, json_t *k)
{
	json_t *hist = json_object_get(k, "history"), *a;
	long run = -1;
	size_t i;

	if (!json_array_size(hist))
		return;
	geak_buf_printf(b, "<details class=\"sub\" open><summary>%zu attempt%s (iteration, "
	    "kind, verdict, speedup, model in each one's tooltip)</summary>\n",
	    json_array_size(hist), json_array_size(hist) == 1 ? "" : "s");
	json_array_foreach(hist, i, a) {
		long r = (long)json_integer_value(json_object_get(a, "run"));
		const char *mode = str(a, "mode"), *model = str(a, "model"), *v = str(a, "verdict");
		if (r != run) {
			geak_buf_printf(b, "%s<div class=\"tl\"><span class=\"run\">run %ld</span>",
			    run < 0 ? "" : "</div>\n", r);
			run = r;
		}
		geak_buf_printf(b, "<span class=\"chip %s%s\" title=\"iteration %ld, sample %ld, ",
		    verdict_class(v), is_kept(k, a) ? " kept" : "",
		    (long)json_integer_value(json_object_get(a, "iter")),
		    (long)json_integer_value(json_object_get(a, "sample")));
		esc(b, mode ? mode : "?");
		geak_buf_puts(b, ", ");
		esc(b, v);
		if (!isnan(num(a, "speedup")))
			geak_buf_printf(b, ", %.2fx", num(a, "speedup"));
		geak_buf_puts(b, ", ");
		esc(b, model ? model : "model not recorded");
		geak_buf_printf(b, "\">i%ld", (long)json_integer_value(json_object_get(a, "iter")));
		if (mode)
			geak_buf_printf(b, " %.3s", mode);
		if (!isnan(num(a, "speedup")))
			geak_buf_printf(b, " %.2fx", num(a, "speedup"));
		geak_buf_puts(b, "</span>");
	}
	geak_buf_puts(b, "</div>\n<p class=\"muted\">Green correct, orange flagged, yellow wrong "
	    "output, red did not run, grey no candidate; outlined: the kept kernel.</p></details>\n");
}

static void
error_excerpt(struct geak_buf *b, json_t *err)
{
	if (!json_is_object(err))
		return;
	geak_buf_puts(b, "<p><b>What the evaluator said</b> (as the model saw it):</p>\n"
	    "<pre class=\"err\">");
	esc(b, str(err, "message"));
	if (str(err, "message") && str(err, "traceback"))
		geak_buf_puts(b, "\n\n");
	esc(b, str(err, "traceback"));
	geak_buf_puts(b, "</pre>\n");
}

static void
code_block(struct geak_buf *b, json_t *k, size_t index)
{
	const char *code = str(k, "code");
	size_t lines = 0;

	if (!code)
		return;
	for (const char *p = code; *p; p++)
		lines += *p == '\n';
	geak_buf_printf(b, "<details class=\"sub\" open><summary>%s (%zu lines)"
	    "<button class=\"copy\" data-for=\"c-%zu\">copy</button></summary>\n"
	    "<pre class=\"code\" id=\"c-%zu\">", json_is_true(json_object_get(k, "exec")) ?
	    "The kept kernel" : "The best attempt's code (it failed)", lines, index, index);
	geak_html_python(b, code);
	geak_buf_puts(b, "</pre></details>\n");
}

static void
diff_line(struct geak_buf *b, char op, const char *text)
{
	geak_buf_printf(b, "<span class=\"dl%s\">%c", op == '+' ? " dl-add" : op == '-' ?
	    " dl-del" : "", op);
	esc(b, text);
	geak_buf_puts(b, "</span>");
}

/* The changed lines with DIFF_CONTEXT lines around them, in hunks. */
static void
diff_hunks(struct geak_buf *b, char **a, char **c, const struct geak_diff_op *ops, size_t n)
{
	size_t last_shown = (size_t)-1;

	for (size_t i = 0; i < n; i++) {
		size_t lo = i > DIFF_CONTEXT ? i - DIFF_CONTEXT : 0, hi = i + DIFF_CONTEXT;
		int near = 0;
		for (size_t j = lo; j <= hi && j < n && !near; j++)
			near = ops[j].op != ' ';
		if (!near)
			continue;
		if (last_shown == (size_t)-1 || i > last_shown + 1) {
			size_t ia = 0, ib = 0;
			for (size_t j = i; j < n; j++)
				if (ops[j].op != '+') {
					ia = ops[j].ia;
					break;
				}
			for (size_t j = i; j < n; j++)
				if (ops[j].op != '-') {
					ib = ops[j].ib;
					break;
				}
			geak_buf_printf(b, "<span class=\"dl dl-hunk\">@@ -%zu +%zu @@</span>",
			    ia + 1, ib + 1);
		}
		diff_line(b, ops[i].op, ops[i].op == '+' ? c[ops[i].ib] : a[ops[i].ia]);
		last_shown = i;
	}
}

static void
diff_block(struct geak_buf *b, json_t *k)
{
	json_t *base = json_object_get(k, "base");
	const char *code = str(k, "code"), *from = str(base, "code");
	char *ca, *cb, **la, **lb;
	size_t na, nb, n, adds = 0, dels = 0;
	struct geak_diff_op *ops;
	long d;

	if (!code || !from)
		return;
	ca = geak_xstrdup(from);
	cb = geak_xstrdup(code);
	la = geak_split_lines(ca, &na);
	lb = geak_split_lines(cb, &nb);
	d = geak_diff((const char *const *)la, na, (const char *const *)lb, nb, DIFF_MAX_EDITS,
	    &ops, &n);
	for (size_t i = 0; d > 0 && i < n; i++)
		adds += ops[i].op == '+', dels += ops[i].op == '-';
	geak_buf_puts(b, "<details class=\"sub\"><summary>Diff against ");
	esc(b, str(base, "label"));
	if (d < 0)
		geak_buf_printf(b, ": more than %d lines differ; not shown</summary>", DIFF_MAX_EDITS);
	else if (d == 0)
		geak_buf_puts(b, ": the same code</summary>");
	else {
		geak_buf_printf(b, " (+%zu &minus;%zu lines)</summary>\n<pre class=\"diff\">", adds, dels);
		diff_hunks(b, la, lb, ops, n);
		geak_buf_puts(b, "</pre>");
	}
	geak_buf_puts(b, "</details>\n");
	free(ops);
	free(la);
	free(lb);
	free(ca);
	free(cb);
}

static void
task_summary(struct geak_buf *b, json_t *k, const char *(*gloss)(const char *))
{
	const char *reason = str(k, "reason");

	geak_buf_puts(b, "<summary><b>");
	esc(b, str(k, "id"));
	geak_buf_puts(b, "</b>");
	if (json_is_true(json_object_get(k, "exec"))) {
		geak_buf_puts(b, " <span class=\"badge b-ok\">");
		put_x(b, num(k, "speedup"));
		geak_buf_puts(b, "</span> <span class=\"muted\">correct");
		if (str(k, "model")) {
			geak_buf_puts(b, " &middot; ");
			esc(b, str(k, "model"));
		}
		geak_buf_printf(b, " &middot; run %ld, iteration %ld</span>",
		    (long)json_integer_value(json_object_get(k, "run")),
		    (long)json_integer_value(json_object_get(k, "iter")));
	} else {
		geak_buf_printf(b, " <span class=\"badge %s\">", reason && !strncmp(reason, "flagged", 7) ?
		    "b-flag" : "b-fail");
		esc(b, reason ? gloss(reason) : "failed");
		geak_buf_puts(b, "</span> <span class=\"muted\">");
		esc(b, reason);
		geak_buf_puts(b, "</span>");
	}
	geak_buf_puts(b, "</summary>\n");
}

static void
task_meta(struct geak_buf *b, json_t *k)
{
	long calls = (long)json_integer_value(json_object_get(k, "calls"));

	geak_buf_puts(b, "<p class=\"muted\">");
	if (str(k, "file")) {
		geak_buf_puts(b, "kernel file <code>kernels/");
		esc(b, str(k, "file"));
		geak_buf_puts(b, "</code> &middot; ");
	}
	geak_buf_printf(b, "%ld LLM call%s", calls, calls == 1 ? "" : "s");
	if (json_is_number(json_object_get(k, "cost"))) {
		geak_buf_puts(b, ", ");
		geak_fmt_cost(b, num(k, "cost"));
		if (json_integer_value(json_object_get(k, "unpriced_calls")) > 0)
			geak_buf_printf(b, " (and %ld calls unpriced)",
			    (long)json_integer_value(json_object_get(k, "unpriced_calls")));
	} else if (calls > 0) {
		geak_buf_puts(b, ", cost unpriced (no price for the model)");
	}
	geak_buf_puts(b, "</p>\n");
}

void
geak_report_tasks(struct geak_buf *b, json_t *kernels, const char *(*gloss)(const char *))
{
	size_t n;
	struct slot *order = kernel_order(kernels, &n);

	if (!n) {
		free(order);
		return;
	}
	geak_buf_puts(b, "<h2 id=\"tasks\">Every task</h2>\n<p class=\"muted\">Fastest correct "
	    "first, then the tasks without a correct kernel; open one for its code, its diff, "
	    "its cases and its attempts.</p>\n");
	for (size_t r = 0; r < n; r++) {
		json_t *k = json_array_get(kernels, order[r].index);
		geak_buf_printf(b, "<details class=\"task\" id=\"k-%zu\">", order[r].index);
		task_summary(b, k, gloss);
		geak_buf_puts(b, "<div class=\"body\">\n");
		task_meta(b, k);
		cases_table(b, json_object_get(k, "cases"));
		error_excerpt(b, json_object_get(k, "error"));
		timeline(b, k);
		code_block(b, k, order[r].index);
		diff_block(b, k);
		geak_buf_puts(b, "</div></details>\n");
	}
	free(order);
}
