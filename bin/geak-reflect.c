/* geak-reflect: the Reflector.  For each evaluated candidate ask the model
 * why it failed and how to fix it, or what made it fast and what would
 * make it faster; keep the answer in `reflection` and the attempt in
 * `history`. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "failtext.h"
#include "kprofile.h"
#include "llm/llm.h"
#include "llm/llmstage.h"
#include "memory.h"
#include "prompt.h"
#include "record.h"
#include "roofline.h"

struct opts {
	long keep;          /* attempts kept in full in history */
	long max_trace;     /* bytes of error output shown to the model */
	long summary_lines; /* lines of an old attempt's reflection kept */
	const char *prompts;
};

/* The last max bytes of s, from a line start, marked when cut: the end of
 * a Python traceback says what went wrong. */
static char *
tail_text(const char *s, size_t max)
{
	size_t n = strlen(s);
	const char *from;

	if (n <= max)
		return geak_xstrdup(s);
	from = s + n - max;
	while (*from && *from != '\n')
		from++;
	if (*from)
		from++;
	return geak_xasprintf("[... %zu bytes cut ...]\n%s", (size_t)(from - s), from);
}

static const char *
template_for(enum geak_outcome out, json_t *eval)
{
	switch (out) {
	case GEAK_OUT_CALL_FAIL: return "reflect-call.txt";
	case GEAK_OUT_WRONG: case GEAK_OUT_FLAGGED: return "reflect-exec.txt";
	default:
		return json_is_number(json_object_get(eval, "speedup")) ?
		    "reflect-perf.txt" : "reflect-correct.txt";
	}
}

/* Per-shape timings with shapes as text, for the template. */
static json_t *
timings(json_t *eval)
{
	json_t *list = json_array(), *s;
	size_t i;

	json_array_foreach(json_object_get(eval, "shapes"), i, s) {
		json_t *shape = json_object_get(s, "shape");
		char *text = json_is_string(shape) ? geak_xstrdup(json_string_value(shape)) :
		    json_dumps(shape, JSON_COMPACT | JSON_ENCODE_ANY);
		json_array_append_new(list, json_pack("{s:s, s:O, s:O}",
		    "shape", text ? text : "?", "ms", json_object_get(s, "ms") ?
		    json_object_get(s, "ms") : json_null(),
		    "ms_ref", json_object_get(s, "ms_ref") ? json_object_get(s, "ms_ref") : json_null()));
		free(text);
	}
	return list;
}

static void
flags_vars(json_t *vars, json_t *flags)
{
	struct geak_buf b = { 0 };
	json_t *f;
	size_t i;

	json_array_foreach(flags, i, f)
		geak_buf_printf(&b, "%s%s", i ? ", " : "", json_is_string(f) ?
		    json_string_value(f) : "(unnamed)");
	json_object_set_new(vars, "flagged", json_boolean(json_array_size(flags) > 0));
	json_object_set_new(vars, "flags_text", json_string(b.data ? b.data : ""));
	geak_buf_free(&b);
}

/* One line per earlier attempt, so that the model sees a pattern of
 * failures: iteration, outcome, and the first line of its reflection. */
static json_t *
past_attempts(json_t *history)
{
	json_t *list = json_array(), *a;
	size_t i;

	json_array_foreach(history, i, a) {
		const char *refl = json_string_value(json_object_get(a, "reflection"));
		const char *reason = json_string_value(json_object_get(a, "reason"));
		json_t *speedup = json_object_get(a, "speedup");
		char *outcome, *note;

		if (json_is_true(json_object_get(a, "exec")))
			outcome = json_is_number(speedup) ? geak_xasprintf("correct, %.2fx",
			    json_number_value(speedup)) : geak_xstrdup("correct");
		else if (json_is_true(json_object_get(a, "call")))
			outcome = geak_xstrdup("ran, wrong output");
		else
			outcome = geak_xasprintf("did not run%s%s%s", reason ? " (" : "",
			    reason ? reason : "", reason ? ")" : "");
		note = geak_xstrndup(refl ? refl : "", refl ? strcspn(refl, "\n") : 0);
		json_array_append_new(list, json_pack("{s:O, s:s, s:s}", "iter",
		    json_object_get(a, "iter") ? json_object_get(a, "iter") : json_null(),
		    "outcome", outcome, "note", note));
		free(outcome);
		free(note);
	}
	return list;
}

static json_t *
prompt_vars(json_t *rec, const struct opts *o)
{
	json_t *vars = json_copy(rec), *eval = json_object_get(rec, "eval");
	json_t *speedup = json_object_get(eval, "speedup");
	char *trace = geak_fail_text(eval, (size_t)o->max_trace);
	const char *test = geak_get_str(rec, "task.test");
	char *test_cut = tail_text(test ? test : "", (size_t)o->max_trace), *roof;

	json_object_set_new(vars, "trace", json_string(trace ? trace : ""));
	json_object_set_new(vars, "test", json_string(test_cut));
	json_object_set_new(vars, "timings", timings(eval));
	roof = geak_roof_text(eval, GEAK_ROOF_CASES);
	if (roof)
		json_object_set_new(vars, "roofline", json_string(roof));
	free(roof);
	roof = geak_kprofile_text(json_object_get(eval, "profile"), GEAK_KPROFILE_KERNELS);
	if (roof)
		json_object_set_new(vars, "kernel_profile", json_string(roof));
	free(roof);
	json_object_set_new(vars, "past", past_attempts(json_object_get(rec, "history")));
	json_object_set_new(vars, "has_past",
	    json_boolean(json_array_size(json_object_get(rec, "history")) > 0));
	if (json_is_number(speedup))
		json_object_set_new(vars, "speedup", json_sprintf("%.3f", json_number_value(speedup)));
	if (!isnan(geak_eval_ms(eval)))
		json_object_set_new(vars, "ms", json_sprintf("%.4f", geak_eval_ms(eval)));
	flags_vars(vars, json_object_get(eval, "flags"));
	json_object_set(vars, "signatures", geak_get(rec, "task.signatures"));
	json_object_set_new(vars, "has_signatures",
	    json_boolean(json_array_size(geak_get(rec, "task.signatures")) > 0));
	free(trace);
	free(test_cut);
	return vars;
}

static int
make_prompt(json_t *rec, const char *where, void *ctx, char **prompt)
{
	const struct opts *o = ctx;
	enum geak_outcome out = geak_outcome(rec);
	json_t *vars;
	char *err = NULL;

	if (out == GEAK_OUT_NONE || !geak_absent(rec, "reflection"))
		return GEAK_PASS;
	vars = prompt_vars(rec, o);
	*prompt = geak_prompt_render_file(o->prompts,
	    template_for(out, json_object_get(rec, "eval")), vars, &err);
	json_decref(vars);
	if (!*prompt) {
		geak_warn("%s: prompt: %s", where, err ? err : "cannot render");
		geak_set_error(rec, "prompt", "template", "%s", err ? err : "cannot render");
		free(err);
		return GEAK_FAILED;
	}
	geak_utf8_scrub(*prompt); /* a user's template may not be UTF-8 */
	return GEAK_DONE;
}

/* The body of the ```reflection fence the prompt asks for; else the
 * whole answer, trimmed. */
static char *
reflection_text(const char *answer)
{
	const char *open = strstr(answer, "```reflection"), *body, *close;

	if (open) {
		body = strchr(open, '\n');
		body = body ? body + 1 : open + strlen(open);
		close = strstr(body, "```");
		return geak_xstrndup(body, close ? (size_t)(close - body) : strlen(body));
	}
	while (*answer == '\n' || *answer == ' ')
		answer++;
	return geak_xstrdup(answer);
}

static void
trim_end(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

static json_t *
attempt(json_t *rec, const char *reflection)
{
	json_t *eval = json_object_get(rec, "eval"), *a = json_object();
	static const char *const rec_keys[] = { "iter", "sample", "code_sha", "mode", "code" };
	static const char *const eval_keys[] = { "call", "exec", "speedup", "reason" };

	for (size_t i = 0; i < sizeof rec_keys / sizeof *rec_keys; i++)
		json_object_set(a, rec_keys[i], json_object_get(rec, rec_keys[i]) ?
		    json_object_get(rec, rec_keys[i]) : json_null());
	for (size_t i = 0; i < sizeof eval_keys / sizeof *eval_keys; i++)
		json_object_set(a, eval_keys[i], json_object_get(eval, eval_keys[i]) ?
		    json_object_get(eval, eval_keys[i]) : json_null());
	json_object_set_new(a, "reflection", json_string(reflection));
	return a;
}

/* An old attempt keeps its numbers and the head of its reflection. */
static void
summarise(json_t *a, long lines)
{
	const char *r = json_string_value(json_object_get(a, "reflection"));
	const char *p = r;

	if (json_is_true(json_object_get(a, "summarised")))
		return;
	json_object_del(a, "code");
	for (long i = 0; p && *p && i < lines; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : r + strlen(r);
	}
	if (p && *p)
		json_object_set_new(a, "reflection", json_stringn(r, (size_t)(p - r) - 1));
	json_object_set_new(a, "summarised", json_true());
}

static int
apply(json_t *rec, const char *answer, const struct geak_llm_reply *reply, void *ctx)
{
	const struct opts *o = ctx;
	char *refl = reflection_text(answer);
	json_t *hist = json_object_get(rec, "history");
	size_t n;

	trim_end(refl);
	if (!json_is_array(hist)) {
		hist = json_array();
		json_object_set_new(rec, "history", hist);
	}
	json_array_append_new(hist, attempt(rec, refl));
	n = json_array_size(hist);
	for (size_t i = 0; i + (size_t)o->keep < n; i++)
		summarise(json_array_get(hist, i), o->summary_lines);
	json_object_set_new(rec, "reflection", json_string(refl));
	free(refl);
	(void)reply;
	return GEAK_DONE;
}

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: %s [-v] [--history N] [--max-trace BYTES] [--prompts DIR] [LLM options] [FILE...]\n"
	    "      --history N       attempts kept in full in history (default 3)\n"
	    "      --max-trace BYTES error output shown to the model (default 4000)\n"
	    "      --summary-lines N lines of an older attempt's reflection kept (default 3)\n"
	    "      --prompts DIR     look for prompt templates in DIR first\n"
	    "  -v, --verbose         progress and the resolved endpoint on stderr\n"
	    "  -h, --help            this help\n"
	    "      --version         print the version\n"
	    "LLM options:\n", geak_prog);
	geak_llm_usage(fp);
}

int
main(int argc, char **argv)
{
	enum { OPT_VERSION = 0x1000, OPT_KEEP, OPT_TRACE, OPT_LINES, OPT_PROMPTS };
	static const struct option longopts[] = {
		{ "history", required_argument, NULL, OPT_KEEP },
		{ "max-trace", required_argument, NULL, OPT_TRACE },
		{ "summary-lines", required_argument, NULL, OPT_LINES },
		{ "prompts", required_argument, NULL, OPT_PROMPTS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		GEAK_LLM_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .keep = 3, .max_trace = 4000, .summary_lines = 3 };
	struct geak_llm_config cfg;
	struct geak_llm_stage st = { 0 };
	int c;

	geak_setprog(argv[0]);
	geak_llm_config_init(&cfg);
	while ((c = getopt_long(argc, argv, "vh" GEAK_LLM_SHORTOPTS, longopts, NULL)) != -1) {
		if (geak_llm_option(&cfg, c, optarg))
			continue;
		switch (c) {
		case OPT_KEEP: o.keep = geak_parse_long(optarg, "--history", 0, 1000000); break;
		case OPT_TRACE: o.max_trace = geak_parse_long(optarg, "--max-trace", 100, 1 << 24); break;
		case OPT_LINES: o.summary_lines = geak_parse_long(optarg, "--summary-lines", 0, 1000000); break;
		case OPT_PROMPTS: o.prompts = optarg; break;
		case 'v': cfg.verbose = 1; break;
		case 'h': usage(stdout); exit(geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : 0);
		case OPT_VERSION: geak_print_version(); exit(0);
		default: usage(stderr); exit(GEAK_EXIT_USAGE);
		}
	}
	st.prompt = make_prompt;
	st.apply = apply;
	st.ctx = &o;
	st.keep_llm_field = 1;
	st.noun = "reflected on";
	st.pass_why = "no new evaluation";
	return geak_llm_stage_main(&st, &cfg, argv + optind, argc - optind);
}
