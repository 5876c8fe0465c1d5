/* geak-opt: the Optimizer.  Folds every evaluated candidate into the
 * record's list of best correct candidates and its debugging-trap
 * counter, and asks the model for a faster kernel from that list when the
 * candidate passed or its lineage is stuck. */
#include <getopt.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "kprofile.h"
#include "llm/llm.h"
#include "llm/llmstage.h"
#include "memory.h"
#include "prompt.h"
#include "record.h"
#include "roofline.h"

struct opts {
	struct geak_memory_opts mem;
	long iter;          /* iteration of the new candidates; < 0: iter + 1 */
	const char *prompts;
	int unmeasured;     /* optimize what no speed was measured for */
	atomic_size_t optimized, restarted, fresh, unasked;
};

static json_t *
num_text(json_t *v, const char *fmt)
{
	return json_is_number(v) ? json_sprintf(fmt, json_number_value(v)) : json_null();
}

/* How many entries of best have a measured speedup. */
static size_t
measured(json_t *best)
{
	json_t *e;
	size_t i, n = 0;

	json_array_foreach(best, i, e)
		n += json_is_number(json_object_get(e, "speedup"));
	return n;
}

/* The best list as the template shows it: slowest first, numbered. */
static json_t *
ancestors(json_t *best)
{
	json_t *list = json_array(), *e;
	size_t i;

	json_array_foreach(best, i, e) {
		char *roof = geak_roof_text(json_object_get(e, "perf"), GEAK_ROOF_CASES);
		char *kp = geak_kprofile_text(geak_get(e, "perf.profile"), GEAK_KPROFILE_KERNELS);
		json_array_append_new(list, json_pack("{s:I, s:O, s:o, s:o, s:O, s:o, s:o}",
		    "number", (json_int_t)i + 1, "code", json_object_get(e, "code"),
		    "speedup", num_text(json_object_get(e, "speedup"), "%.3f"),
		    "ms", num_text(json_object_get(e, "ms"), "%.4f"),
		    "reflection", json_object_get(e, "reflection") ?
		    json_object_get(e, "reflection") : json_null(),
		    "roofline", roof ? json_string(roof) : json_null(),
		    "kernel_profile", kp ? json_string(kp) : json_null()));
		free(roof);
		free(kp);
	}
	return list;
}

static char *
render(json_t *rec, const char *where, const struct opts *o, int restart)
{
	json_t *best = json_object_get(rec, "best"), *sigs = geak_get(rec, "task.signatures");
	size_t n = json_array_size(best), timed = measured(best);
	/* best is ordered by speed only as far as speed was measured: the
	 * prompt says which order the model is shown. */
	json_t *vars = json_pack("{s:O, s:O, s:b, s:I, s:b, s:I, s:o, s:b, s:b, s:b}",
	    "task", json_object_get(rec, "task") ? json_object_get(rec, "task") : json_null(),
	    "signatures", sigs ? sigs : json_null(), "has_signatures", json_array_size(sigs) > 0,
	    "count", (json_int_t)n, "restart", restart,
	    "max_debug", (json_int_t)o->mem.max_debug, "ancestors", ancestors(best),
	    "by_speed", timed == n, "by_age", timed == 0, "partly_by_speed", timed > 0 && timed < n);
	char *err = NULL, *text = geak_prompt_render_file(o->prompts, "opt.txt", vars, &err);

	json_decref(vars);
	if (!text) {
		geak_warn("%s: prompt: %s", where, err ? err : "cannot render");
		geak_set_error(rec, "prompt", "template", "%s", err ? err : "cannot render");
		free(err);
		return NULL;
	}
	geak_utf8_scrub(text); /* a user's template may not be UTF-8 */
	return text;
}

/* New code belongs to the next iteration. */
static void
set_iter(json_t *rec, const struct opts *o)
{
	json_t *iter = json_object_get(rec, "iter");

	json_object_set_new(rec, "iter", json_integer(o->iter >= 0 ? o->iter :
	    (json_is_integer(iter) ? json_integer_value(iter) : 0) + 1));
}

/* A lineage dropped before any correct kernel exists starts over: without
 * code, geak-gen makes a first attempt from the task. */
static void
start_over(json_t *rec, const struct opts *o)
{
	static const char *const stale[] = {
		"code", "code_sha", "eval", "reflection", "mode", "strategy",
	};

	for (size_t i = 0; i < sizeof stale / sizeof *stale; i++)
		json_object_del(rec, stale[i]);
	set_iter(rec, o);
}

/* A speed to beat, or a request to optimize without one (--unmeasured). */
static int
worth_optimizing(json_t *rec, const struct opts *o)
{
	return o->unmeasured || measured(json_object_get(rec, "best")) > 0;
}

static int
make_prompt(json_t *rec, const char *where, void *ctx, char **prompt)
{
	struct opts *o = ctx;

	switch (geak_memory_update(rec, &o->mem)) {
	case GEAK_NEXT_OPTIMIZE:
		if (!worth_optimizing(rec, o)) {
			/* Nothing says a new kernel would be faster: the lineage
			 * rests on its correct kernel. */
			atomic_fetch_add(&o->unasked, 1);
			return GEAK_DONE;
		}
		atomic_fetch_add(&o->optimized, 1);
		break;
	case GEAK_NEXT_RESTART:
		if (json_array_size(json_object_get(rec, "best")) == 0 || !worth_optimizing(rec, o)) {
			atomic_fetch_add(&o->fresh, 1);
			start_over(rec, o);
			return GEAK_DONE;
		}
		atomic_fetch_add(&o->restarted, 1);
		*prompt = render(rec, where, o, 1);
		return *prompt ? GEAK_DONE : GEAK_FAILED;
	case GEAK_NEXT_DEBUG:
		return GEAK_DONE; /* the counter moved; geak-gen debugs it */
	default:
		return GEAK_PASS; /* not evaluated: untouched */
	}
	*prompt = render(rec, where, o, 0);
	return *prompt ? GEAK_DONE : GEAK_FAILED;
}

static int
apply(json_t *rec, const char *answer, const struct geak_llm_reply *reply, void *ctx)
{
	const struct opts *o = ctx;
	struct geak_extract ex;
	char sha[65];

	if (geak_extract_code(answer, &ex) < 0) {
		geak_set_error(rec, "extract", "no_code", "no code in the model's answer: %s%s",
		    ex.why ? ex.why : "unknown", reply->finish_reason &&
		    !strcmp(reply->finish_reason, "length") ? " (the answer was cut at --max-tokens)" : "");
		geak_extract_free(&ex);
		return GEAK_FAILED;
	}
	geak_sha256_hex(ex.code, strlen(ex.code), sha);
	json_object_set_new(rec, "code", json_string(ex.code));
	json_object_set_new(rec, "code_sha", json_string(sha));
	json_object_set_new(rec, "mode", json_string("optimize"));
	if (ex.thought)
		json_object_set_new(rec, "strategy", json_string(ex.thought));
	else
		json_object_del(rec, "strategy");
	set_iter(rec, o);
	json_object_del(rec, "eval");
	json_object_del(rec, "reflection");
	geak_extract_free(&ex);
	return GEAK_DONE;
}

/* For the summary: what became of the records it updated. */
static void
tally(void *ctx, struct geak_buf *b, int final)
{
	struct opts *o = ctx;
	const struct { atomic_size_t *n; const char *what; } parts[] = {
		{ &o->optimized, "optimized" },
		{ &o->unasked, "correct left as they are (no speed measured)" },
		{ &o->restarted, "restarted from best" },
		{ &o->fresh, "started over" },
	};

	for (size_t i = 0; final && i < sizeof parts / sizeof *parts; i++)
		if (atomic_load(parts[i].n))
			geak_buf_printf(b, ", %zu %s", atomic_load(parts[i].n), parts[i].what);
}

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: %s [-v] [--ancestors N] [--max-debug N] [--count-rule v1|v2] [--iter N]\n"
	    "       [--prompts DIR] [LLM options] [FILE...]\n"
	    "      --ancestors N     best candidates kept and shown (default 5)\n"
	    "      --max-debug N     failed rounds before a lineage is dropped (default 5)\n"
	    "      --count-rule R    v2: count every failed round (default);\n"
	    "                        v1: count only once a correct candidate exists\n"
	    "      --iter N          iteration number of the new candidates (default iter+1)\n"
	    "      --unmeasured      optimize also when no speed was measured (CPU)\n"
	    "      --prompts DIR     look for prompt templates in DIR first\n"
	    "  -v, --verbose         progress and the resolved endpoint on stderr\n"
	    "  -h, --help            this help\n"
	    "      --version         print the version\n"
	    "LLM options:\n", geak_prog);
	geak_llm_usage(fp);
}

static void
parse_args(int argc, char **argv, struct opts *o, struct geak_llm_config *cfg)
{
	enum { OPT_VERSION = 0x1000, OPT_ANCESTORS, OPT_MAX_DEBUG, OPT_RULE, OPT_ITER, OPT_PROMPTS,
	    OPT_UNMEASURED };
	static const struct option longopts[] = {
		{ "ancestors", required_argument, NULL, OPT_ANCESTORS },
		{ "max-debug", required_argument, NULL, OPT_MAX_DEBUG },
		{ "count-rule", required_argument, NULL, OPT_RULE },
		{ "iter", required_argument, NULL, OPT_ITER },
		{ "prompts", required_argument, NULL, OPT_PROMPTS },
		{ "unmeasured", no_argument, NULL, OPT_UNMEASURED },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		GEAK_LLM_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "vh" GEAK_LLM_SHORTOPTS, longopts, NULL)) != -1) {
		if (geak_llm_option(cfg, c, optarg))
			continue;
		switch (c) {
		case OPT_ANCESTORS:
			o->mem.ancestors = (size_t)geak_parse_long(optarg, "--ancestors", 1, 1000);
			break;
		case OPT_MAX_DEBUG:
			o->mem.max_debug = geak_parse_long(optarg, "--max-debug", 1, 1000000);
			break;
		case OPT_RULE:
			if (strcmp(optarg, "v1") == 0)
				o->mem.rule = GEAK_COUNT_V1;
			else if (strcmp(optarg, "v2") == 0)
				o->mem.rule = GEAK_COUNT_V2;
			else {
				geak_warn("--count-rule: want v1 or v2, not '%s'", optarg);
				exit(GEAK_EXIT_USAGE);
			}
			break;
		case OPT_ITER: o->iter = geak_parse_long(optarg, "--iter", 0, 1000000000); break;
		case OPT_PROMPTS: o->prompts = optarg; break;
		case OPT_UNMEASURED: o->unmeasured = 1; break;
		case 'v': cfg->verbose = 1; break;
		case 'h': usage(stdout); exit(geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : 0);
		case OPT_VERSION: geak_print_version(); exit(0);
		default: usage(stderr); exit(GEAK_EXIT_USAGE);
		}
	}
}

int
main(int argc, char **argv)
{
	struct opts o = { .mem = { 5, 5, GEAK_COUNT_V2 }, .iter = -1 };
	struct geak_llm_config cfg;
	struct geak_llm_stage st = { 0 };
	int status;

	geak_setprog(argv[0]);
	geak_llm_config_init(&cfg);
	parse_args(argc, argv, &o, &cfg);
	st.prompt = make_prompt;
	st.apply = apply;
	st.ctx = &o;
	st.noun = "updated";
	st.pass_why = "not evaluated";
	st.tally = tally;
	status = geak_llm_stage_main(&st, &cfg, argv + optind, argc - optind);
	return status;
}
