/* geak-retrieve: add a one-shot example, the most similar kernel of a
 * corpus by BM25, to each task record (see geak-retrieve(1)). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bm25.h"
#include "bench/corpus.h"
#include "record.h"
#include "recpool.h"
#include "util.h"

#define DEFAULT_THRESHOLD 0.8
#define MAX_K 100

enum mode { MODE_AUTO, MODE_INSTRUCTION, MODE_CODE };

struct retrieve {
	struct geak_index *ix;
	enum mode mode;
	size_t k;
	int guard, show_excluded;
	double threshold;
	unsigned char *excluded;
	struct geak_hit *hits;
};

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
		"usage: %s [--top N] [-m auto|instruction|code] [-c CORPUS]... [-t THRESHOLD | -G] [-wx]\n"
		"       [FILE...]\n"
		"       %s --index INDEX [-w] -c CORPUS...\n"
		"       %s -l [-c CORPUS]...\n"
		"  -c, --corpus SRC        corpus: an index, a JSON array, JSON Lines, a Python file,\n"
		"                          a directory or a tar/zip archive of Python files;\n"
		"                          default: the corpus in the share directory\n"
		"      --index OUT         build an index of the corpora into OUT and exit\n"
		"  -l, --list              print the corpus entries as JSON Lines and exit\n"
		"      --top N             examples per record (default 1; more adds 'oneshots')\n"
		"  -m, --mode MODE         query by 'instruction' or 'code'; 'auto' (default): code\n"
		"                          when the record has a candidate, else the instruction\n"
		"  -t, --guard-threshold X leakage guard: drop entries whose kernel bodies have a\n"
		"                          5-gram Jaccard >= X with the task's reference (default 0.8)\n"
		"  -G, --no-guard          keep near copies of the reference\n"
		"  -w, --with-code         index each entry's code with its description for\n"
		"                          instruction queries (when an index is built)\n"
		"  -x, --show-excluded     list the ids the guard dropped in oneshot.excluded_ids\n"
		"  -h, --help              this help\n"
		"      --version           print the version\n",
		geak_prog, geak_prog, geak_prog);
	exit(status);
}

static int
is_index_file(const char *path)
{
	char head[8];
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (!fp)
		return 0;
	n = fread(head, 1, sizeof head, fp);
	fclose(fp);
	return geak_index_is_image(head, n);
}

/* An index image of raw corpora, made in memory. */
static void
index_corpora(char **corpora, int ncorpora, unsigned flags, struct geak_buf *image)
{
	struct geak_index_builder *b = geak_index_builder_new(flags);
	char err[512];

	for (int i = 0; i < ncorpora; i++) {
		if (is_index_file(corpora[i]))
			geak_die(GEAK_EXIT_USAGE, "%s: an index is used alone, never indexed "
				"again or combined with other corpora", corpora[i]);
		if (geak_corpus_add(b, corpora[i], err, sizeof err) < 0)
			geak_die(GEAK_EXIT_FATAL, "%s", err);
	}
	geak_index_finish(b, image);
}

static struct geak_index *
load_corpus(char **corpora, int ncorpora, unsigned flags)
{
	static char *fallback[1];
	struct geak_index *ix;
	char err[512];

	if (ncorpora == 0) {
		const char *env = getenv("GEAK_CORPUS");
		fallback[0] = env && *env ? geak_xstrdup(env)
			: geak_xasprintf("%s/corpus", geak_sharedir());
		corpora = fallback;
		ncorpora = 1;
	}
	if (ncorpora == 1 && is_index_file(corpora[0])) {
		if (flags)
			geak_die(GEAK_EXIT_USAGE, "%s: -w applies when an index is built", corpora[0]);
		if (!(ix = geak_index_open(corpora[0], err, sizeof err)))
			geak_die(GEAK_EXIT_FATAL, "%s", err);
	} else {
		struct geak_buf image = { 0 };
		index_corpora(corpora, ncorpora, flags, &image);
		if (!(ix = geak_index_from_memory(image.data, image.len, err, sizeof err)))
			geak_die(GEAK_EXIT_FATAL, "index: %s", err);
	}
	free(fallback[0]);
	fallback[0] = NULL;
	return ix;
}

static void
write_index(const char *out, char **corpora, int ncorpora, unsigned flags)
{
	struct geak_buf image = { 0 };
	char *tmp;
	FILE *fp;
	int bad;

	index_corpora(corpora, ncorpora, flags, &image);
	/* Readers of the old index never see a half-written one. */
	tmp = geak_xasprintf("%s.tmp.%ld", out, (long)getpid());
	if (!(fp = fopen(tmp, "wb")))
		geak_die(GEAK_EXIT_FATAL, "%s:", tmp);
	bad = fwrite(image.data, 1, image.len, fp) != image.len;
	bad = geak_fshut(fp, tmp) < 0 || bad;  /* reports a failed write once */
	if (fclose(fp) != 0 && !bad) {
		geak_warn("%s: close:", tmp);
		bad = 1;
	}
	if (bad) {
		unlink(tmp);
		exit(GEAK_EXIT_FATAL);
	}
	if (rename(tmp, out) < 0) {
		int saved = errno;
		unlink(tmp);
		errno = saved;
		geak_die(GEAK_EXIT_FATAL, "%s:", out);
	}
	free(tmp);
	geak_buf_free(&image);
}

static json_t *
str_json(struct geak_str s)
{
	json_t *v = json_stringn(s.p, s.len);

	/* An index entry that is not UTF-8 must not make invalid JSON. */
	return v ? v : json_null();
}

static json_t *
hit_json(const struct retrieve *r, const struct geak_hit *hit)
{
	struct geak_entry e;
	json_t *o = json_object();

	geak_index_entry(r->ix, hit->entry, &e);
	json_object_set_new(o, "id", str_json(e.id));
	json_object_set_new(o, "source", str_json(e.source));
	json_object_set_new(o, "score", json_real(hit->score));
	json_object_set_new(o, "code", str_json(e.code));
	return o;
}

static int
list_entries(const struct geak_index *ix)
{
	struct geak_output out;
	int status = GEAK_EXIT_OK;

	geak_output_init(&out, stdout, "stdout");
	for (size_t i = 0; i < geak_index_count(ix) && status == GEAK_EXIT_OK; i++) {
		struct geak_entry e;
		json_t *o = json_object();
		geak_index_entry(ix, i, &e);
		json_object_set_new(o, "id", str_json(e.id));
		json_object_set_new(o, "source", str_json(e.source));
		json_object_set_new(o, "description", str_json(e.description));
		json_object_set_new(o, "code", str_json(e.code));
		if (geak_output_write(&out, o) < 0)
			status = GEAK_EXIT_FATAL;
		json_decref(o);
	}
	if (geak_output_close(&out) < 0)
		status = GEAK_EXIT_FATAL;
	return status;
}

/* Which query a record gets, or NULL with an error attached. */
static const char *
choose_query(const struct retrieve *r, json_t *rec, const char *where, enum mode *mode)
{
	const char *code = geak_get_str(rec, "code");
	const char *instr = geak_get_str(rec, "task.instruction");

	*mode = r->mode;
	if (*mode == MODE_AUTO)
		*mode = code && *code ? MODE_CODE : MODE_INSTRUCTION;
	if (*mode == MODE_CODE && !code) {
		geak_bad_field(rec, where, "field 'code': missing (want a string)");
		return NULL;
	}
	if (*mode == MODE_INSTRUCTION && !instr) {
		geak_bad_field(rec, where, "field 'task.instruction': missing (want a string)");
		return NULL;
	}
	return *mode == MODE_CODE ? code : instr;
}

static json_t *
excluded_ids(const struct retrieve *r)
{
	json_t *ids = json_array();

	for (size_t i = 0; i < geak_index_count(r->ix); i++) {
		struct geak_entry e;
		if (!r->excluded[i])
			continue;
		geak_index_entry(r->ix, i, &e);
		json_array_append_new(ids, str_json(e.id));
	}
	return ids;
}

static int
retrieve_one(void *ctx, json_t *rec, const char *where)
{
	struct retrieve *r = ctx;
	enum mode mode;
	const char *query = choose_query(r, rec, where, &mode);
	const char *reference = geak_get_str(rec, "task.reference");
	size_t n = geak_index_count(r->ix), nhits;
	json_t *excluded = json_null(), *best, *all;

	if (!query)
		return GEAK_FAILED;
	memset(r->excluded, 0, n);
	if (r->guard && reference)
		excluded = json_integer((json_int_t)geak_index_near_duplicates(r->ix, reference,
			strlen(reference), r->threshold, r->excluded));
	nhits = geak_index_search(r->ix, mode == MODE_CODE ? GEAK_FIELD_CODE : GEAK_FIELD_INSTRUCTION,
		query, strlen(query), r->excluded, r->k, r->hits);
	all = json_array();
	for (size_t i = 0; i < nhits; i++)
		json_array_append_new(all, hit_json(r, &r->hits[i]));
	if (nhits > 0) {
		best = geak_json_copy(json_array_get(all, 0));
		json_object_set_new(best, "mode", json_string(mode == MODE_CODE ? "code" : "instruction"));
		json_object_set_new(best, "excluded", excluded);
		if (r->show_excluded)
			json_object_set_new(best, "excluded_ids", excluded_ids(r));
	} else {
		best = json_null();
		json_decref(excluded);
	}
	geak_set(rec, "oneshot", best);
	if (r->k > 1)
		geak_set(rec, "oneshots", all);
	else {
		json_object_del(rec, "oneshots");
		json_decref(all);
	}
	return GEAK_DONE;
}

int
main(int argc, char **argv)
{
	/* -i and -k, which the loop scripts and geak-select give other
	 * meanings, are long options only here. */
	enum { OPT_INDEX = 0x1000, OPT_TOP };
	static const struct option longopts[] = {
		{ "corpus", required_argument, NULL, 'c' },
		{ "index", required_argument, NULL, OPT_INDEX },
		{ "list", no_argument, NULL, 'l' },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "mode", required_argument, NULL, 'm' },
		{ "guard-threshold", required_argument, NULL, 't' },
		{ "no-guard", no_argument, NULL, 'G' },
		{ "show-excluded", no_argument, NULL, 'x' },
		{ "with-code", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct retrieve r = { .k = 1, .guard = 1, .threshold = DEFAULT_THRESHOLD };
	/* Static: still reachable when a usage error ends the program. */
	static char **corpora;
	const char *index_out = NULL;
	int ncorpora = 0, c, status, list = 0;
	unsigned flags = 0;

	geak_setprog(argv[0]);
	corpora = geak_xcalloc((size_t)argc + 1, sizeof *corpora);
	while ((c = getopt_long(argc, argv, "c:lm:t:Gwxh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			corpora[ncorpora++] = optarg;
			break;
		case OPT_INDEX:
			index_out = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case OPT_TOP:
			r.k = (size_t)geak_parse_long(optarg, "--top", 1, MAX_K);
			break;
		case 'm':
			if (strcmp(optarg, "auto") == 0)
				r.mode = MODE_AUTO;
			else if (strcmp(optarg, "instruction") == 0)
				r.mode = MODE_INSTRUCTION;
			else if (strcmp(optarg, "code") == 0)
				r.mode = MODE_CODE;
			else
				geak_die(GEAK_EXIT_USAGE, "-m: '%s': expected auto, instruction or code", optarg);
			break;
		case 't':
			r.threshold = geak_parse_double(optarg, "-t", 0, 1);
			if (r.threshold <= 0)
				geak_die(GEAK_EXIT_USAGE, "-t: the threshold must be above 0");
			break;
		case 'G':
			r.guard = 0;
			break;
		case 'w':
			flags |= GEAK_INDEX_WITH_CODE;
			break;
		case 'x':
			r.show_excluded = 1;
			break;
		case 'h':
			usage(stdout, GEAK_EXIT_OK);
			break;
		case 'V':
			geak_print_version();
			return GEAK_EXIT_OK;
		default:
			usage(stderr, GEAK_EXIT_USAGE);
		}
	}
	if (index_out) {
		if (ncorpora == 0 || optind < argc)
			geak_die(GEAK_EXIT_USAGE, "--index needs --corpus and takes no record files");
		write_index(index_out, corpora, ncorpora, flags);
		free(corpora);
		return GEAK_EXIT_OK;
	}
	r.ix = load_corpus(corpora, ncorpora, flags);
	free(corpora);
	if (list) {
		if (optind < argc)
			geak_die(GEAK_EXIT_USAGE, "--list takes no record files");
		status = list_entries(r.ix);
		geak_index_close(r.ix);
		return status;
	}
	r.excluded = geak_xcalloc(geak_index_count(r.ix) + 1, 1);
	r.hits = geak_xcalloc(r.k, sizeof *r.hits);
	struct geak_pool pool = {
		.paths = argv + optind, .npaths = argc - optind, .nslots = 1,
		.fn = retrieve_one, .arg = &r,
	};
	status = geak_pool_run(&pool);
	free(r.excluded);
	free(r.hits);
	geak_index_close(r.ix);
	return status;
}
