/* geak-gen: the Generator.  Turns task records without code into first
 * attempts and records whose evaluation failed into debug attempts, by
 * asking the model with a prompt built from the record; passes every
 * other record through.  See geak-gen(1). */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "failtext.h"
#include "knowledge.h"
#include "llm/llm.h"
#include "llm/llmstage.h"
#include "prompt.h"
#include "bench/pysig.h"
#include "record.h"
#include "util.h"

#define TRACE_MAX_DEFAULT 3000 /* bytes of test output shown in a debug prompt */

enum mode { MODE_PASS, MODE_FIRST, MODE_DEBUG };

struct opts {
	long samples;
	int signatures;
	int dry_run;
	long trace_max;
	const char *pack;
	const char *knowledge_dir;
	const char *prompts;
};

struct gen {
	struct opts *o;
	char *knowledge;
	char *pack_used;
};

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: %s [options] [file ...]\n"
	    "Write a kernel for each task record without code (first attempt) and a\n"
	    "fix for each record whose evaluation failed (debug attempt); pass every\n"
	    "other record through.\n"
	    "  -n, --samples N         candidates per record (default 1)\n"
	    "      --knowledge PACK    knowledge pack to inject (default generic;\n"
	    "                          auto: from the GPU; none: no knowledge)\n"
	    "      --knowledge-dir DIR look for knowledge packs in DIR first\n"
	    "      --prompts DIR       look for prompt templates in DIR first\n"
	    "      --no-signatures     leave the reference's signatures out of the prompt\n"
	    "      --trace-max N       bytes of test output in a debug prompt (default %d)\n"
	    "      --dry-run           add the prompt to each record as `prompt`; no calls\n"
	    "  -v, --verbose           the endpoint, retries and each call on stderr\n"
	    "  -h, --help              this help\n"
	    "      --version           print the version\n"
	    "LLM options:\n", geak_prog,
	    TRACE_MAX_DEFAULT);
	geak_llm_usage(fp);
}

static void
parse_args(int argc, char **argv, struct opts *o, struct geak_llm_config *cfg)
{
	enum { OPT_VERSION = 0x1000, OPT_KNOWLEDGE, OPT_KNOWLEDGE_DIR, OPT_PROMPTS,
	    OPT_NO_SIGNATURES, OPT_TRACE_MAX, OPT_DRY_RUN };
	static const struct option longopts[] = {
		{"samples", required_argument, NULL, 'n'},
		{"knowledge", required_argument, NULL, OPT_KNOWLEDGE},
		{"knowledge-dir", required_argument, NULL, OPT_KNOWLEDGE_DIR},
		{"prompts", required_argument, NULL, OPT_PROMPTS},
		{"no-signatures", no_argument, NULL, OPT_NO_SIGNATURES},
		{"trace-max", required_argument, NULL, OPT_TRACE_MAX},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		GEAK_LLM_LONGOPTS,
		{NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:vh" GEAK_LLM_SHORTOPTS, longopts, NULL)) != -1) {
		if (geak_llm_option(cfg, c, optarg))
			continue;
		switch (c) {
		case 'n': o->samples = geak_parse_long(optarg, "-n", 1, 10000); break;
		case OPT_KNOWLEDGE: o->pack = optarg; break;
		case OPT_KNOWLEDGE_DIR: o->knowledge_dir = optarg; break;
		case OPT_PROMPTS: o->prompts = optarg; break;
		case OPT_NO_SIGNATURES: o->signatures = 0; break;
		case OPT_TRACE_MAX:
			o->trace_max = geak_parse_long(optarg, "--trace-max", 0, 1 << 20);
			break;
		case OPT_DRY_RUN: o->dry_run = 1; break;
		case 'v': cfg->verbose = 1; break;
		case 'h':
			usage(stdout);
			exit(geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : GEAK_EXIT_OK);
		case OPT_VERSION:
			geak_print_version();
			exit(geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : GEAK_EXIT_OK);
		default:
			usage(stderr);
			exit(GEAK_EXIT_USAGE);
		}
	}
}

/* What the generator does with a record (the loop's order: task records
 * without code, and records whose current code failed its evaluation). */
static enum mode
mode_of(json_t *rec)
{
	json_t *eval = json_object_get(rec, "eval");
	const char *sha = geak_get_str(rec, "code_sha");
	const char *eval_sha = geak_get_str(rec, "eval.code_sha");
	const char *reason = geak_get_str(rec, "eval.reason");

	if (geak_absent(rec, "code"))
		return MODE_FIRST;
	if (!json_is_object(eval) || !json_is_false(json_object_get(eval, "exec")))
		return MODE_PASS;
	/* An evaluation of older code says nothing about this code; a
	 * harness failure is the evaluator's, not the candidate's. */
	if (sha && eval_sha && strcmp(sha, eval_sha))
		return MODE_PASS;
	if (reason && !strcmp(reason, "harness"))
		return MODE_PASS;
	return MODE_DEBUG;
}

static json_t *
signatures_of(json_t *rec)
{
	json_t *given = geak_get(rec, "task.signatures");
	const char *ref = geak_get_str(rec, "task.reference");

	if (json_is_array(given))
		return json_incref(given);
	return ref ? geak_pysig_list(ref) : json_array();
}

static void
put(json_t *obj, const char *key, json_t *val)
{
	if (!val || json_object_set_new(obj, key, val) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
}

/* The template's variables (geak-gen(1), TEMPLATES). */
static json_t *
prompt_vars(struct gen *g, json_t *rec, enum mode mode)
{
	json_t *v = json_object(), *sigs, *task = json_object_get(rec, "task");
	const char *oneshot = geak_get_str(rec, "oneshot.code");
	const char *instruction = geak_get_str(rec, "task.instruction");

	/* A debug attempt needs neither: its record may lack them. */
	put(v, "mode", json_string(mode == MODE_FIRST ? "first" : "debug"));
	put(v, "instruction", json_string(instruction ? instruction : ""));
	put(v, "task", task ? json_incref(task) : json_object());
	if (oneshot)
		put(v, "oneshot", json_string(oneshot));
	if (g->knowledge)
		put(v, "knowledge", json_string(g->knowledge));
	if (g->o->signatures) {
		sigs = signatures_of(rec);
		put(v, "has_signatures", json_boolean(json_array_size(sigs) > 0));
		put(v, "signatures", sigs);
	}
	if (mode == MODE_DEBUG) {
		json_t *eval = json_object_get(rec, "eval");
		char *trace = geak_fail_text(eval, (size_t)g->o->trace_max);
		const char *reason = geak_get_str(eval, "reason");
		put(v, "code", json_incref(json_object_get(rec, "code")));
		put(v, "eval", json_incref(eval));
		put(v, "ran", json_boolean(reason && !strcmp(reason, "mismatch")));
		if (trace && g->o->trace_max > 0)
			put(v, "trace", json_string(trace));
		free(trace);
		if (json_is_string(json_object_get(rec, "reflection")))
			put(v, "reflection", json_incref(json_object_get(rec, "reflection")));
	}
	return v;
}

/* The records a record becomes: its samples, numbered s*N+i from the
 * input's sample s, so that samples of samples never collide; a debug
 * attempt belongs to the next iteration.  With -n 1 the record itself. */
static size_t
split(void *ctx, json_t *rec, const char *where, json_t ***parts)
{
	struct gen *g = ctx;
	enum mode mode = mode_of(rec);
	long n = g->o->samples;
	json_t *s = json_object_get(rec, "sample"), *iter;
	long base = json_is_integer(s) ? (long)json_integer_value(s) : 0;

	if (mode == MODE_PASS)
		return 0;
	if (mode == MODE_FIRST && geak_absent(rec, "task.instruction")) {
		geak_bad_field(rec, where, "field 'task.instruction': missing (want a string)");
		return 0;
	}
	if (g->o->dry_run)
		return 1;
	if (mode == MODE_DEBUG) {
		iter = json_object_get(rec, "iter");
		put(rec, "iter", json_integer(json_is_integer(iter) ? json_integer_value(iter) + 1 : 1));
	}
	if (n == 1) {
		if (!s)
			put(rec, "sample", json_integer(0));
		return 1;
	}
	*parts = geak_xcalloc((size_t)n, sizeof **parts);
	for (long i = 0; i < n; i++) {
		(*parts)[i] = geak_json_copy(rec);
		put((*parts)[i], "sample", json_integer(base * n + i));
	}
	return (size_t)n;
}

/* The prompt for a sample (all the samples of a record get the same). */
static int
make_prompt(json_t *rec, const char *where, void *ctx, char **prompt)
{
	struct gen *g = ctx;
	enum mode mode = mode_of(rec);
	json_t *vars;
	char *err = NULL, *text;

	(void)where;
	vars = prompt_vars(g, rec, mode);
	text = geak_prompt_render_file(g->o->prompts,
	    mode == MODE_FIRST ? "gen-first.txt" : "gen-debug.txt", vars, &err);
	json_decref(vars);
	if (!text)
		geak_die(GEAK_EXIT_FATAL, "%s", err);
	geak_utf8_scrub(text); /* a user's template may not be UTF-8 */
	if (!g->o->dry_run) {
		*prompt = text;
		return GEAK_DONE;
	}
	put(rec, "prompt", json_string(text));
	free(text);
	return GEAK_DONE;
}

static void
set_candidate(struct gen *g, json_t *rec, enum mode mode, const struct geak_extract *ex)
{
	char sha[65];

	geak_sha256_hex(ex->code, strlen(ex->code), sha);
	put(rec, "code", json_string(ex->code));
	put(rec, "code_sha", json_string(sha));
	put(rec, "mode", json_string(mode == MODE_FIRST ? "first" : "debug"));
	if (ex->thought)
		put(rec, "thought", json_string(ex->thought));
	else
		json_object_del(rec, "thought");
	if (g->pack_used)
		put(rec, "knowledge", json_pack("{s:s}", "pack", g->pack_used));
	/* The evaluation and the reflection were about the old code. */
	json_object_del(rec, "eval");
	json_object_del(rec, "reflection");
}

static int
apply(json_t *rec, const char *answer, const struct geak_llm_reply *reply, void *ctx)
{
	struct gen *g = ctx;
	enum mode mode = mode_of(rec);
	struct geak_extract ex;
	int v = GEAK_DONE;

	if (geak_extract_code(answer, &ex) < 0) {
		geak_set_error(rec, "extract", "no_code", "%s%s", ex.why,
		    reply->finish_reason && !strcmp(reply->finish_reason, "length") ?
		    " (the answer was cut at --max-tokens)" : "");
		v = GEAK_FAILED;
	} else {
		set_candidate(g, rec, mode, &ex);
	}
	geak_extract_free(&ex);
	return v;
}

static void
load_knowledge(struct gen *g)
{
	char err[512];
	size_t n;

	if (!strcmp(g->o->pack, "none"))
		return;
	g->knowledge = geak_knowledge_load(strcmp(g->o->pack, "auto") ? g->o->pack : NULL,
	    g->o->knowledge_dir, &g->pack_used, err, sizeof err);
	if (!g->knowledge)
		geak_die(GEAK_EXIT_USAGE, "--knowledge %s: %s", g->o->pack, err);
	/* The template sets the spacing around it. */
	n = strlen(g->knowledge);
	while (n && isspace((unsigned char)g->knowledge[n - 1]))
		g->knowledge[--n] = '\0';
}

int
main(int argc, char **argv)
{
	struct opts o = {.samples = 1, .signatures = 1, .trace_max = TRACE_MAX_DEFAULT,
	    .pack = "generic"};
	struct geak_llm_config cfg;
	struct geak_llm_stage st = {0};
	struct gen g = {.o = &o};
	int status;

	geak_setprog(argv[0]);
	geak_llm_config_init(&cfg);
	parse_args(argc, argv, &o, &cfg);
	st.split = split;
	st.prompt = make_prompt;
	st.apply = apply;
	st.ctx = &g;
	st.noun = "generated";
	st.pass_why = "nothing to generate";
	if (!cfg.check)
		load_knowledge(&g);
	if (o.dry_run && !cfg.check)
		status = geak_llm_stage_run(&st, argv + optind, argc - optind);
	else
		status = geak_llm_stage_main(&st, &cfg, argv + optind, argc - optind);
	free(g.knowledge);
	free(g.pack_used);
	return status;
}
