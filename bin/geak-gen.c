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
#include "knowledge.h"
#include "llm.h"
#include "prompt.h"
#include "pysig.h"
#include "record.h"
#include "util.h"

#define TRACE_MAX_DEFAULT 3000 /* bytes of test output shown in a debug prompt */

enum mode { MODE_PASS, MODE_FIRST, MODE_DEBUG };

struct opts {
	long samples;
	int signatures;
	int dry_run;
	int verbose;
	long trace_max;
	const char *pack;
	const char *knowledge_dir;
	const char *prompts;
};

/* One input record and what becomes of it. */
struct item {
	json_t *rec;
	enum mode mode;
	json_t *messages;  /* the prompt, shared by the record's samples */
	json_t **out;      /* one output record per sample */
	int status;
};

/* One request: a sample of an item. */
struct job {
	struct item *item;
	long sample_i;
};

struct gen {
	struct opts *o;
	struct geak_llm *llm;
	char *knowledge;
	char *pack_used;
	struct item *items;
	size_t nitems, cap_items;
	size_t pending;    /* requests in the window */
	size_t window;     /* requests to gather before sending */
	struct geak_output out;
	int status;
};

static const struct geak_field input_spec[] = {
	{"code", GEAK_T_STRING, 0},
	{"eval", GEAK_T_OBJECT, 0},
	{"eval.exec", GEAK_T_BOOL, 0},
	{"reflection", GEAK_T_STRING, 0},
	{"oneshot", GEAK_T_OBJECT, 0},
	{"oneshot.code", GEAK_T_STRING, 0},
	{"sample", GEAK_T_INT, 0},
	{"iter", GEAK_T_INT, 0},
	{"task", GEAK_T_OBJECT, 0},
	{"task.instruction", GEAK_T_STRING, 0},
	{"task.reference", GEAK_T_STRING, 0},
	{"task.signatures", GEAK_T_ARRAY, 0},
	{NULL, 0, 0},
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
	    "LLM options (the temperature defaults to 1.0 here):\n", geak_prog,
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
		case 'v': o->verbose = cfg->verbose = 1; break;
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

/* What the generator does with a record (BRIEF loop order: task records
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

/* The last Python traceback in text, or its tail, within max bytes. */
static void
append_trimmed(struct geak_buf *b, const char *text, size_t max)
{
	const char *tb = NULL, *p = text, *start;
	size_t len;

	while ((p = strstr(p, "Traceback (most recent call last)")))
		tb = p++;
	start = tb ? tb : text;
	len = strlen(start);
	if (len > max) {
		/* Keep the end, where the exception and its message are. */
		const char *cut = start + len - max, *nl = strchr(cut, '\n');
		if (nl && nl[1])
			cut = nl + 1;
		geak_buf_printf(b, "[... %zu bytes cut ...]\n", (size_t)(cut - start));
		start = cut;
	}
	geak_buf_puts(b, start);
	if (b->len && b->data[b->len - 1] != '\n')
		geak_buf_puts(b, "\n");
}

/* Lines of stdout that say what mismatched, at most a few. */
static void
append_mismatch_lines(struct geak_buf *b, const char *text, size_t max)
{
	static const char *const marks[] = {"mismatch", "Mismatch", "assert", "Assert",
	    "max abs", "Error", "error:", "differ", NULL};
	const char *line = text;
	size_t start = b->len;
	int i, kept = 0;

	while (*line && kept < 8 && b->len - start < max) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		for (i = 0; marks[i]; i++)
			if (memmem(line, n, marks[i], strlen(marks[i]))) {
				geak_buf_append(b, line, n < 400 ? n : 400);
				geak_buf_puts(b, "\n");
				kept++;
				break;
			}
		line = nl ? nl + 1 : line + n;
	}
}

/* The test output a debug prompt shows: the evaluator's message, the
 * lines that name a mismatch, the last traceback; capped at max. */
static char *
trace_of(json_t *eval, size_t max)
{
	struct geak_buf b = {0};
	const char *msg = geak_get_str(eval, "message");
	const char *out = geak_get_str(eval, "stdout_tail");
	const char *err = geak_get_str(eval, "stderr_tail");

	if (msg && *msg)
		geak_buf_printf(&b, "%.*s\n", (int)(max < 1000 ? max : 1000), msg);
	if (out && *out)
		append_mismatch_lines(&b, out, max / 4);
	if (err && *err && b.len < max)
		append_trimmed(&b, err, max - b.len);
	while (b.len && isspace((unsigned char)b.data[b.len - 1]))
		b.data[--b.len] = '\0';
	if (!b.len) {
		geak_buf_free(&b);
		return NULL;
	}
	geak_utf8_scrub(b.data); /* the cuts may split a character */
	return geak_buf_steal(&b);
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
	json_t *v = json_object(), *sigs;
	const char *oneshot = geak_get_str(rec, "oneshot.code");

	put(v, "mode", json_string(mode == MODE_FIRST ? "first" : "debug"));
	put(v, "instruction", json_string(geak_get_str(rec, "task.instruction")));
	put(v, "task", json_incref(json_object_get(rec, "task")));
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
		char *trace = trace_of(eval, (size_t)g->o->trace_max);
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

static int
bad_input(struct item *it, char *msg, size_t len)
{
	if (geak_check_fields(it->rec, input_spec, msg, len) < 0)
		return 1;
	if (it->mode == MODE_FIRST && geak_absent(it->rec, "task.instruction")) {
		snprintf(msg, len, "field 'task.instruction': missing (want string)");
		return 1;
	}
	return 0;
}

/* Build the item's prompt; 0, or 1 after attaching an error. */
static int
build_prompt(struct gen *g, struct item *it, const char *where)
{
	json_t *vars;
	char *err = NULL, *text;
	char msg[512];

	if (bad_input(it, msg, sizeof msg)) {
		geak_warn("%s: %s", where, msg);
		geak_set_error(it->rec, "input", "field", "%s", msg);
		return 1;
	}
	vars = prompt_vars(g, it->rec, it->mode);
	text = geak_prompt_render_file(g->o->prompts,
	    it->mode == MODE_FIRST ? "gen-first.txt" : "gen-debug.txt", vars, &err);
	json_decref(vars);
	if (!text)
		geak_die(GEAK_EXIT_FATAL, "%s", err);
	geak_utf8_scrub(text); /* a user's template may not be UTF-8 */
	if (g->o->dry_run)
		put(it->rec, "prompt", json_string(text));
	else
		it->messages = geak_llm_messages(NULL, text);
	free(text);
	return 0;
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

/* "prog: id (sample n): kind: message", once per failed sample. */
static void
warn_error(json_t *rec)
{
	const char *id = geak_get_str(rec, "id");

	geak_warn("%s (sample %lld): %s: %s", id ? id : "record",
	    (long long)json_integer_value(json_object_get(rec, "sample")),
	    geak_get_str(rec, "error.kind"), geak_get_str(rec, "error.message"));
}

static void
on_done(size_t index, const struct geak_llm_request *req, const struct geak_llm_reply *reply,
	void *ctx)
{
	struct gen *g = ctx;
	struct job *job = req->user;
	struct item *it = job->item;
	json_t *rec = it->out[job->sample_i];
	struct geak_extract ex;

	(void)index;
	if (!reply->ok) {
		geak_llm_set_error(rec, g->llm, reply);
		warn_error(rec);
		it->status = GEAK_EXIT_RECORDS;
		return;
	}
	geak_llm_account(rec, g->llm, reply);
	if (geak_extract_code(reply->text, &ex) < 0) {
		geak_set_error(rec, "extract", "no_code", "%s%s", ex.why,
		    reply->finish_reason && !strcmp(reply->finish_reason, "length") ?
		    " (the answer was cut at --max-tokens)" : "");
		warn_error(rec);
		it->status = GEAK_EXIT_RECORDS;
	} else {
		set_candidate(g, rec, it->mode, &ex);
	}
	geak_extract_free(&ex);
}

/* The output records of an item: its samples, numbered s*N+i from the
 * input's sample s, so that samples of samples never collide. */
static void
make_outputs(struct gen *g, struct item *it)
{
	long n = g->o->samples, i;
	json_t *s = json_object_get(it->rec, "sample"), *iter;
	long base = json_is_integer(s) ? (long)json_integer_value(s) : 0;

	it->out = geak_xcalloc((size_t)n, sizeof *it->out);
	for (i = 0; i < n; i++) {
		json_t *rec = geak_json_copy(it->rec);
		if (!rec)
			geak_die(GEAK_EXIT_FATAL, "out of memory");
		if (n > 1 || !s)
			put(rec, "sample", json_integer(n > 1 ? base * n + i : 0));
		if (it->mode == MODE_DEBUG) {
			iter = json_object_get(rec, "iter");
			put(rec, "iter", json_integer(json_is_integer(iter) ?
			    json_integer_value(iter) + 1 : 1));
		}
		it->out[i] = rec;
	}
}

static void
write_rec(struct gen *g, json_t *rec)
{
	if (geak_output_write(&g->out, rec) < 0)
		g->status = GEAK_EXIT_FATAL;
}

/* Send the window's requests, then write its records in input order. */
static void
flush(struct gen *g)
{
	struct geak_llm_request *reqs = geak_xcalloc(g->pending + 1, sizeof *reqs);
	struct job *jobs = geak_xcalloc(g->pending + 1, sizeof *jobs);
	size_t i, n = 0;
	long k;

	for (i = 0; i < g->nitems; i++) {
		struct item *it = &g->items[i];
		if (!it->messages)
			continue;
		for (k = 0; k < g->o->samples; k++, n++) {
			jobs[n].item = it;
			jobs[n].sample_i = k;
			reqs[n].messages = it->messages;
			reqs[n].sample = (int)json_integer_value(json_object_get(it->out[k], "sample"));
			reqs[n].temperature = -1;
			reqs[n].user = &jobs[n];
		}
	}
	if (n && geak_llm_run(g->llm, reqs, n, on_done, g) < 0)
		g->status = GEAK_EXIT_FATAL;
	for (i = 0; i < g->nitems; i++) {
		struct item *it = &g->items[i];
		if (it->out)
			for (k = 0; k < g->o->samples; k++) {
				write_rec(g, it->out[k]);
				json_decref(it->out[k]);
			}
		else
			write_rec(g, it->rec);
		if (it->status && !g->status)
			g->status = it->status;
		json_decref(it->rec);
		json_decref(it->messages);
		free(it->out);
	}
	free(reqs);
	free(jobs);
	g->nitems = g->pending = 0;
}

static void
take(struct gen *g, json_t *rec, int read_status, const char *where)
{
	struct item *it;

	if (g->nitems == g->cap_items) {
		g->cap_items = g->cap_items ? 2 * g->cap_items : 64;
		g->items = geak_xrealloc(g->items, g->cap_items * sizeof *g->items);
	}
	it = &g->items[g->nitems++];
	memset(it, 0, sizeof *it);
	it->rec = rec;
	if (read_status == GEAK_READ_BAD) {
		it->status = GEAK_EXIT_RECORDS;
		return;
	}
	if (geak_has_error(rec) || (it->mode = mode_of(rec)) == MODE_PASS)
		return;
	if (build_prompt(g, it, where)) {
		it->status = GEAK_EXIT_RECORDS;
		return;
	}
	if (g->o->dry_run)
		return;
	make_outputs(g, it);
	g->pending += (size_t)g->o->samples;
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

static int
run(struct gen *g, char *const *paths, int npaths)
{
	struct geak_input *in = geak_input_open(paths, npaths);
	json_t *rec;
	int r;

	geak_output_init(&g->out, stdout, "stdout");
	while (g->status != GEAK_EXIT_FATAL && (r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		if (r == GEAK_READ_FAIL) {
			g->status = GEAK_EXIT_FATAL;
			continue;
		}
		take(g, rec, r, geak_input_where(in));
		if (g->pending >= g->window)
			flush(g);
	}
	flush(g);
	geak_input_close(in);
	if (geak_output_close(&g->out) < 0)
		g->status = GEAK_EXIT_FATAL;
	return g->status;
}

static void
summary(const struct geak_llm *llm)
{
	struct geak_llm_totals t;

	geak_llm_totals(llm, &t);
	if (t.cost_known)
		geak_warn("llm: %ld call%s, %ld input and %ld output tokens, cost %.4f",
		    t.calls, t.calls == 1 ? "" : "s", t.input_tokens, t.output_tokens, t.cost);
	else
		geak_warn("llm: %ld call%s, %ld input and %ld output tokens", t.calls,
		    t.calls == 1 ? "" : "s", t.input_tokens, t.output_tokens);
}

int
main(int argc, char **argv)
{
	struct opts o = {.samples = 1, .signatures = 1, .trace_max = TRACE_MAX_DEFAULT,
	    .pack = "generic"};
	struct geak_llm_config cfg;
	struct gen g;
	int status;

	geak_setprog(argv[0]);
	geak_llm_config_init(&cfg);
	cfg.temperature = 1.0; /* GEAK samples every generation at 1.0 */
	parse_args(argc, argv, &o, &cfg);
	memset(&g, 0, sizeof g);
	g.o = &o;
	if (!o.dry_run && !(g.llm = geak_llm_open(&cfg))) {
		if (!cfg.check)
			return GEAK_EXIT_FATAL;
		/* The preflight's answer is yes or no, whatever failed. */
		printf("FAILED: configuration: see the message above\n");
		return geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : GEAK_EXIT_RECORDS;
	}
	if (cfg.check) {
		status = g.llm ? geak_llm_check(g.llm) : GEAK_EXIT_RECORDS;
		geak_llm_close(g.llm);
		return geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : status;
	}
	/* Enough requests to keep every connection busy, few enough that a
	 * long input streams through in bounded memory. */
	g.window = (size_t)(cfg.jobs * 8 > 256 ? cfg.jobs * 8 : 256);
	load_knowledge(&g);
	status = run(&g, argv + optind, argc - optind);
	if (o.verbose && g.llm)
		summary(g.llm);
	geak_llm_close(g.llm);
	free(g.knowledge);
	free(g.pack_used);
	free(g.items);
	return status;
}
