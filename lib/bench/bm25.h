/* bm25.h: Okapi BM25 search over a corpus of Triton kernels, with a
 * tokenizer made for code and an index image that is built once and then
 * mapped from a file for every later query.
 *
 * Scoring, as rank_bm25's BM25Okapi: for a query q and document d,
 *   score = sum over query tokens t (repeats counted) of
 *           idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
 *   idf(t) = ln((N - n(t) + 0.5) / (n(t) + 0.5))
 * where N is the number of documents and n(t) the number holding t.  A
 * term in more than half the documents gets a negative idf; it is
 * replaced by epsilon * (the mean idf over the vocabulary), so common
 * terms still count a little and never count against a document.  (In a
 * corpus of a handful of documents that mean can itself be negative; the
 * replacement is then epsilon, where rank_bm25 would let common terms
 * count against a document.)
 * Defaults: k1 = 1.5, b = 0.75, epsilon = 0.25.
 *
 * Every entry is indexed twice: its "instruction" document is its
 * description (its code when it has none, or with GEAK_INDEX_WITH_CODE
 * both) followed by the names of the functions its code defines, its
 * "code" document its code. */
#ifndef GEAK_BM25_H
#define GEAK_BM25_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define GEAK_BM25_K1 1.5
#define GEAK_BM25_B 0.75
#define GEAK_BM25_EPSILON 0.25

enum geak_doc_field { GEAK_FIELD_INSTRUCTION = 0, GEAK_FIELD_CODE = 1 };

/* Split text into search tokens, lowercased: identifiers whole and, when
 * they have several parts, also split at underscores and case changes
 * (BLOCK_SIZE -> block_size, block, size); dotted names whole and by
 * component (tl.load -> tl.load, tl, load); numbers; operators
 * (+ - * / % ** // == != <= >= < > & | ^ ~ << >> @ [ =).  Quotes,
 * brackets other than '[', commas, colons and '#' separate tokens.
 * Words of letters only lose a few English suffixes (plural s, -ing,
 * -ed, final e: "rows" -> "row", "computing" -> "comput"), and common
 * English function words ("the", "of", "each", ...) are dropped.  With
 * words_only (the instruction field and its queries, which are prose)
 * numbers and operators are dropped too.  fn gets each token (not
 * NUL-terminated). */
typedef void geak_token_fn(const char *tok, size_t len, void *ctx);
void geak_bm25_tokenize(const char *text, size_t len, int words_only,
	geak_token_fn *fn, void *ctx);

/* ---- building ---- */

struct geak_index_builder;

/* Build flags.  GEAK_INDEX_WITH_CODE: an entry's instruction document
 * holds its code even when it has a description. */
enum { GEAK_INDEX_WITH_CODE = 1 };

struct geak_index_builder *geak_index_builder_new(unsigned flags);
/* Add one entry.  description may be NULL or empty.  shingles: the
 * near-duplicate sets of the entry's kernels (see pysrc.h), computed
 * from code here. */
void geak_index_add(struct geak_index_builder *b, const char *id, const char *source,
	const char *description, const char *code);
size_t geak_index_builder_count(const struct geak_index_builder *b);
/* Write the index image into out and free the builder. */
void geak_index_finish(struct geak_index_builder *b, struct geak_buf *out);

/* ---- searching ---- */

struct geak_index;

/* Map an index file read-only.  NULL with "path: why" in err when it
 * cannot be opened or fails validation. */
struct geak_index *geak_index_open(const char *path, char *err, size_t errlen);
/* Use an image in memory (from geak_index_finish); takes ownership of
 * data, which must come from malloc. */
struct geak_index *geak_index_from_memory(char *data, size_t len, char *err, size_t errlen);
void geak_index_close(struct geak_index *ix);
/* 1 when the first bytes of a file are an index image's magic. */
int geak_index_is_image(const void *head, size_t len);

size_t geak_index_count(const struct geak_index *ix);
unsigned geak_index_flags(const struct geak_index *ix);

struct geak_str {
	const char *p;  /* not NUL-terminated: it points into the image */
	size_t len;
};
struct geak_entry {
	struct geak_str id, source, description, code;
};
void geak_index_entry(const struct geak_index *ix, size_t i, struct geak_entry *e);

struct geak_hit {
	size_t entry;
	double score;
};
/* The k best entries for query (scores > 0 only, best first, ties by
 * entry order), skipping entries whose excluded[i] is set (excluded may
 * be NULL).  Returns how many hits were written. */
size_t geak_index_search(const struct geak_index *ix, enum geak_doc_field field,
	const char *query, size_t qlen, const unsigned char *excluded,
	size_t k, struct geak_hit *hits);

/* Leakage guard: set excluded[i] for every entry one of whose kernel
 * bodies has a shingle Jaccard of at least threshold with one of the
 * kernel bodies of reference (Python source).  Returns how many entries
 * were marked. */
size_t geak_index_near_duplicates(const struct geak_index *ix, const char *reference,
	size_t reflen, double threshold, unsigned char *excluded);

/* The shingle sets of a piece of source, as the index keeps them: one per
 * @triton.jit function, else one per function, else one for the whole
 * text.  sets[i] (caller frees each and the arrays) has sizes[i] hashes. */
size_t geak_code_shingle_sets(const char *code, size_t len, uint64_t ***sets, size_t **sizes);

#endif
