/* Unit tests of the code tokenizer, BM25 scores against the formula
 * worked by hand, the index image's validation (every byte of an image
 * damaged in turn), the Python scanner and the near-duplicate measure. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench/bm25.h"
#include "bench/pysrc.h"
#include "util.h"

#define EPS 1e-9

static void
join(const char *tok, size_t len, void *ctx)
{
	struct geak_buf *b = ctx;

	if (b->len)
		geak_buf_puts(b, " ");
	geak_buf_append(b, tok, len);
}

static char *
tokens(const char *text, int words_only)
{
	struct geak_buf b = { 0 };

	geak_bm25_tokenize(text, strlen(text), words_only, join, &b);
	return geak_buf_steal(&b);
}

static void
check_tokens(const char *text, int words_only, const char *want)
{
	char *got = tokens(text, words_only);

	assert_string_equal(got, want);
	free(got);
}

static void
tokenizer_splits_code(void **state)
{
	(void)state;
	check_tokens("tl.load(x_ptr + offs)", 0, "tl.load tl load x_ptr x ptr + off");
	check_tokens("BLOCK_SIZE: tl.constexpr", 0, "block_size block size tl.constexpr tl constexpr");
	check_tokens("fusedAddRMSNorm", 0, "fusedaddrmsnorm fus add rms norm");
	check_tokens("_row_kernel[grid](n)", 0, "row_kernel row kernel [ grid n");
	check_tokens("y = x ** 2 // 3 != 4", 0, "y = x ** 2 // 3 != 4");
	check_tokens("triton.language.sum", 0,
		"triton.language.sum triton languag sum");
	check_tokens("1.5e-3 0x1F", 0, "1.5e - 3 0x1f");
}

static void
tokenizer_prose(void **state)
{
	(void)state;
	/* Stop words go, plurals and -ing meet their stems, numbers and
	 * operators go in prose mode. */
	check_tokens("The rows of a 2-D tensor", 1, "row d tensor");
	check_tokens("computing computes compute computed", 1, "comput comput comput comput");
	check_tokens("entries matrices class", 1, "entry matric class");
}

/* A three-document corpus: idf and scores by the formula in bm25.h. */
static struct geak_index *
tiny_index(void)
{
	struct geak_index_builder *b = geak_index_builder_new(0);
	struct geak_buf img = { 0 };
	struct geak_index *ix;
	char err[200];

	geak_index_add(b, "d0", "s", NULL, "alpha beta");
	geak_index_add(b, "d1", "s", NULL, "alpha gamma gamma");
	geak_index_add(b, "d2", "s", "about delta", "delta");
	assert_int_equal(geak_index_builder_count(b), 3);
	geak_index_finish(b, &img);
	ix = geak_index_from_memory(img.data, img.len, err, sizeof err);
	assert_non_null(ix);
	return ix;
}

static double
term(double idf, double tf, double dl, double avgdl)
{
	return idf * tf * (1.5 + 1) / (tf + 1.5 * (1 - 0.75 + 0.75 * dl / avgdl));
}

static void
bm25_scores_by_hand(void **state)
{
	struct geak_index *ix = tiny_index();
	struct geak_hit hits[3];
	double avgdl = (2.0 + 3.0 + 1.0) / 3.0, rare = log(2.5 / 1.5);
	/* alpha is in 2 of 3 documents: ln(1.5 / 2.5) < 0 is replaced by
	 * 0.25 times the mean idf of alpha, beta, gamma and delta. */
	double common = 0.25 * (log(1.5 / 2.5) + 3 * rare) / 4;
	size_t n;

	(void)state;
	n = geak_index_search(ix, GEAK_FIELD_CODE, "gamma", 5, NULL, 3, hits);
	assert_int_equal(n, 1);
	assert_int_equal(hits[0].entry, 1);
	assert_float_equal(hits[0].score, term(rare, 2, 3, avgdl), EPS);

	n = geak_index_search(ix, GEAK_FIELD_CODE, "alpha", 5, NULL, 3, hits);
	assert_int_equal(n, 2);
	assert_int_equal(hits[0].entry, 0);  /* the shorter document wins */
	assert_float_equal(hits[0].score, term(common, 1, 2, avgdl), EPS);
	assert_float_equal(hits[1].score, term(common, 1, 3, avgdl), EPS);

	/* Repeated query tokens count again, as in rank_bm25. */
	n = geak_index_search(ix, GEAK_FIELD_CODE, "beta beta", 9, NULL, 3, hits);
	assert_int_equal(n, 1);
	assert_float_equal(hits[0].score, 2 * term(rare, 1, 2, avgdl), EPS);

	/* Exclusion, k, and a query with no known word. */
	unsigned char excluded[3] = { 1, 0, 0 };
	n = geak_index_search(ix, GEAK_FIELD_CODE, "alpha", 5, excluded, 3, hits);
	assert_int_equal(n, 1);
	assert_int_equal(hits[0].entry, 1);
	assert_int_equal(geak_index_search(ix, GEAK_FIELD_CODE, "alpha", 5, NULL, 1, hits), 1);
	assert_int_equal(geak_index_search(ix, GEAK_FIELD_CODE, "omega", 5, NULL, 3, hits), 0);

	/* The instruction field reads the description where there is one. */
	n = geak_index_search(ix, GEAK_FIELD_INSTRUCTION, "about", 5, NULL, 3, hits);
	assert_int_equal(n, 1);
	assert_int_equal(hits[0].entry, 2);
	geak_index_close(ix);
}

static void
entries_round_trip(void **state)
{
	struct geak_index *ix = tiny_index();
	struct geak_entry e;

	(void)state;
	assert_int_equal(geak_index_count(ix), 3);
	geak_index_entry(ix, 2, &e);
	assert_int_equal(e.id.len, 2);
	assert_memory_equal(e.id.p, "d2", 2);
	assert_int_equal(e.description.len, 11);
	assert_memory_equal(e.code.p, "delta", 5);
	geak_index_entry(ix, 0, &e);
	assert_int_equal(e.description.len, 0);
	geak_index_close(ix);
}

/* Damage every byte of an image in turn: each copy is either refused or
 * answers queries without reading outside itself (run under ASan). */
static void
damaged_images_are_safe(void **state)
{
	struct geak_index_builder *b = geak_index_builder_new(0);
	struct geak_buf img = { 0 };
	static const char kernel[] =
		"@triton.jit\ndef k(x_ptr, n):\n    tl.store(x_ptr, tl.load(x_ptr) + n)\n";
	char err[200];
	size_t refused = 0;

	(void)state;
	geak_index_add(b, "k", "s", "store one value", kernel);
	geak_index_add(b, "j", "s", NULL, "tl.load(y) * 2");
	geak_index_finish(b, &img);
	for (size_t i = 0; i < img.len; i++) {
		for (int v = 0; v < 2; v++) {
			char *copy = geak_xmalloc(img.len);
			struct geak_index *ix;
			memcpy(copy, img.data, img.len);
			copy[i] = v ? (char)0xff : (char)(copy[i] ^ 0x40);
			ix = geak_index_from_memory(copy, img.len, err, sizeof err);
			if (!ix) {
				refused++;
				continue;
			}
			struct geak_hit hits[2];
			unsigned char excluded[2] = { 0, 0 };
			struct geak_entry e;
			geak_index_search(ix, GEAK_FIELD_CODE, "tl.load store x_ptr", 19, NULL, 2, hits);
			geak_index_search(ix, GEAK_FIELD_INSTRUCTION, "store value", 11, NULL, 2, hits);
			geak_index_near_duplicates(ix, kernel, sizeof kernel - 1, 0.8, excluded);
			for (size_t k = 0; k < geak_index_count(ix); k++) {
				geak_index_entry(ix, k, &e);
				assert_true(e.code.p + e.code.len <= copy + img.len);
			}
			geak_index_close(ix);
		}
	}
	assert_true(refused > 0);
	/* Truncation and a wrong version are named. */
	char *copy = geak_xmalloc(img.len);
	memcpy(copy, img.data, img.len);
	assert_null(geak_index_from_memory(copy, img.len - 8, err, sizeof err));
	assert_non_null(strstr(err, "truncated"));
	copy = geak_xmalloc(img.len);
	memcpy(copy, img.data, img.len);
	copy[8] = 2;
	assert_null(geak_index_from_memory(copy, img.len, err, sizeof err));
	assert_non_null(strstr(err, "version 2"));
	geak_buf_free(&img);
}

static const char source[] =
	"\"\"\"Module.\"\"\"\n"
	"import triton\n"
	"S = '''@triton.jit\n"
	"def fake(x):\n"
	"    pass'''\n"
	"\n"
	"# Adds one.\n"
	"# -----\n"
	"@triton.autotune(configs=[], key=[\"n\"])\n"
	"@triton.jit(do_not_specialize=[\"n\"])\n"
	"def add_one(x_ptr, n,\n"
	"            BLOCK: tl.constexpr):  # the kernel\n"
	"    \"\"\"Add one\n"
	"\n"
	"       to every element.\n"
	"    \"\"\"\n"
	"    offs = tl.arange(0, BLOCK) + \\\n"
	"        tl.program_id(0) * BLOCK\n"
	"    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)\n"
	"\n"
	"class Launcher:\n"
	"    def run(self, x):\n"
	"        def inner(): return add_one\n"
	"        add_one[(1,)](x, x.numel(), BLOCK=128)\n"
	"\n"
	"def tiny(): return 1\n";

static void
scanner_finds_functions(void **state)
{
	struct geak_pyfile *f = geak_pyfile_scan(source, sizeof source - 1);
	char *text;

	(void)state;
	assert_int_equal(f->nfunc, 4);
	assert_string_equal(f->func[0].name, "add_one");
	assert_true(f->func[0].is_kernel);
	assert_string_equal(f->func[0].docstring, "Add one\n\nto every element.");
	assert_string_equal(f->func[0].comment, "Adds one.");
	assert_string_equal(f->func[1].name, "run");
	assert_false(f->func[1].is_kernel);
	assert_int_equal(f->func[1].indent, 4);
	assert_string_equal(f->func[2].name, "inner");
	assert_string_equal(f->func[3].name, "tiny");
	assert_null(f->func[3].docstring);
	/* The launch in run() wins over the mere reference in inner(). */
	assert_int_equal(geak_pyfunc_wrapper(f, 0), 1);
	text = geak_pyfunc_text(f, &f->func[1]);
	assert_string_equal(text,
		"def run(self, x):\n"
		"    def inner(): return add_one\n"
		"    add_one[(1,)](x, x.numel(), BLOCK=128)\n");
	free(text);
	text = geak_pyfunc_text(f, &f->func[0]);
	assert_true(strncmp(text, "@triton.autotune(", 17) == 0);
	assert_non_null(strstr(text, "+ 1)\n"));
	free(text);
	geak_pyfile_free(f);
}

/* The guard's filters never change its answer: compare it with the full
 * Jaccard of every pair, over variants of one kernel with more and more
 * of its statements changed, at several thresholds. */
static void
guard_matches_brute_force(void **state)
{
	struct geak_index_builder *b = geak_index_builder_new(0);
	struct geak_buf img = { 0 }, ref = { 0 };
	struct geak_index *ix;
	char *codes[40], err[200];
	static const double thresholds[] = { 0.3, 0.5, 0.7, 0.8, 0.9, 1.0 };
	uint64_t **rs;
	size_t *rn;

	(void)state;
	srand(7);
	geak_buf_puts(&ref, "@triton.jit\ndef k(p, q):\n");
	for (int i = 0; i < 30; i++)
		geak_buf_printf(&ref, "    x%d = tl.load(p + %d) * %d\n", i, i, i);
	for (int e = 0; e < 40; e++) {
		struct geak_buf code = { 0 };
		geak_buf_puts(&code, "@triton.jit\ndef k(p, q):\n");
		for (int i = 0; i < 30; i++) {
			if (rand() % 40 < e)
				geak_buf_printf(&code, "    y%d = tl.exp(q - %d)\n", i, rand() % 9);
			else
				geak_buf_printf(&code, "    x%d = tl.load(p + %d) * %d\n", i, i, i);
		}
		codes[e] = geak_buf_steal(&code);
		geak_index_add(b, "e", "s", NULL, codes[e]);
	}
	geak_index_finish(b, &img);
	ix = geak_index_from_memory(img.data, img.len, err, sizeof err);
	assert_non_null(ix);
	assert_int_equal(geak_code_shingle_sets(ref.data, ref.len, &rs, &rn), 1);
	for (size_t t = 0; t < sizeof thresholds / sizeof *thresholds; t++) {
		unsigned char excluded[40] = { 0 };
		size_t want = 0, got = geak_index_near_duplicates(ix, ref.data, ref.len,
			thresholds[t], excluded);
		for (int e = 0; e < 40; e++) {
			uint64_t **es;
			size_t *en;
			assert_int_equal(geak_code_shingle_sets(codes[e], strlen(codes[e]), &es, &en), 1);
			int dup = geak_shingle_jaccard(es[0], en[0], rs[0], rn[0]) >= thresholds[t];
			assert_int_equal(excluded[e], dup);
			want += dup;
			free(es[0]), free(es), free(en);
		}
		assert_int_equal(got, want);
	}
	for (int e = 0; e < 40; e++)
		free(codes[e]);
	free(rs[0]), free(rs), free(rn);
	geak_buf_free(&ref);
	geak_index_close(ix);
}

/* Every truncation of the source, and every byte of it changed to a
 * quote, a newline or a backslash in turn, scans without reading outside
 * the text (run under ASan). */
static void
scanner_survives_damage(void **state)
{
	static const char change[] = "'\n\\\r#";
	size_t n = sizeof source - 1;
	char *copy = geak_xmalloc(n);

	(void)state;
	for (size_t cut = 0; cut <= n; cut++) {
		for (int c = -1; c < (int)sizeof change - 1; c++) {
			struct geak_pyfile *f;
			memcpy(copy, source, n);
			if (c >= 0 && cut < n)
				copy[cut] = change[c];
			f = geak_pyfile_scan(copy, c >= 0 ? n : cut);
			for (size_t i = 0; i < f->nfunc; i++) {
				uint64_t *sh = NULL;
				free(geak_pyfunc_text(f, &f->func[i]));
				geak_pyfunc_shingles(f, &f->func[i], &sh);
				free(sh);
				geak_pyfunc_wrapper(f, i);
			}
			geak_pyfile_free(f);
		}
	}
	free(copy);
}

static void
shingles_ignore_layout(void **state)
{
	static const char a[] =
		"@triton.jit\ndef k(x, y):\n    \"\"\"Doc.\"\"\"\n    # note\n"
		"    z = tl.load(x) + 1\n    tl.store(y, z * 2)\n";
	static const char b[] =
		"@triton.jit\ndef k(x,\n      y):\n    z = tl.load( x ) + 1  # same\n\n"
		"    tl.store(y,\n             z * 2)\n";
	static const char c[] =
		"@triton.jit\ndef k(x, y):\n    z = tl.load(x) - 1\n    tl.store(y, z * 3)\n";
	uint64_t **sa, **sb, **sc;
	size_t *na, *nb, *nc;

	(void)state;
	assert_int_equal(geak_code_shingle_sets(a, sizeof a - 1, &sa, &na), 1);
	assert_int_equal(geak_code_shingle_sets(b, sizeof b - 1, &sb, &nb), 1);
	assert_int_equal(geak_code_shingle_sets(c, sizeof c - 1, &sc, &nc), 1);
	/* z = tl . load ( x ) + 1 tl . store ( y , z * 2 ): 20 tokens */
	assert_int_equal(na[0], 20 - GEAK_SHINGLE_N + 1);
	assert_float_equal(geak_shingle_jaccard(sa[0], na[0], sb[0], nb[0]), 1.0, EPS);
	assert_true(geak_shingle_jaccard(sa[0], na[0], sc[0], nc[0]) < 0.5);
	assert_float_equal(geak_shingle_jaccard(NULL, 0, NULL, 0), 0.0, EPS);
	free(sa[0]), free(sb[0]), free(sc[0]);
	free(sa), free(sb), free(sc), free(na), free(nb), free(nc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tokenizer_splits_code),
		cmocka_unit_test(tokenizer_prose),
		cmocka_unit_test(bm25_scores_by_hand),
		cmocka_unit_test(entries_round_trip),
		cmocka_unit_test(damaged_images_are_safe),
		cmocka_unit_test(scanner_finds_functions),
		cmocka_unit_test(scanner_survives_damage),
		cmocka_unit_test(shingles_ignore_layout),
		cmocka_unit_test(guard_matches_brute_force),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
