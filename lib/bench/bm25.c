/* bm25.c: the code tokenizer, the index image and BM25 search (see bm25.h).
 *
 * The index image (geak-retrieve(1) documents it for users) is one file
 * of native-endian fixed-size records, every section 8-byte aligned:
 *
 *   header    magic "GEAKBM25", version, byte-order mark 0x01020304, file
 *             size, counts, k1, b, epsilon, the two mean document lengths,
 *             the build flags, and a table of NSEC sections {offset, size}
 *   STRINGS   the bytes of every id, source, description, code and term
 *   ENTRIES   per entry: four {offset, length} string references into
 *             STRINGS, the two document lengths in tokens, and the range
 *             of its shingle sets
 *   TERMS     sorted by their bytes: the term's string reference, and per
 *             field the range of its postings and its idf
 *   POSTINGS  {entry, term frequency}, for the instruction field then the
 *             code field, grouped by term, entries ascending
 *   SETS      {offset, count} ranges into SHINGLES, one per kernel body
 *   SHINGLES  64-bit hashes, each set sorted
 *
 * Loading checks the magic, version, byte order, the file size, that
 * every section lies inside the file and has a whole number of records,
 * and that every reference in ENTRIES, TERMS and SETS lies inside its
 * section; posting entry numbers are checked as they are read. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bm25.h"
#include "bench/pysrc.h"

#define MAGIC "GEAKBM25"
#define VERSION 1
#define BYTE_ORDER_MARK 0x01020304u
#define MAX_TOKEN 128   /* longer words are cut: no real term is that long */

enum { SEC_STRINGS, SEC_ENTRIES, SEC_TERMS, SEC_POSTINGS, SEC_SETS, SEC_SHINGLES, NSEC };

struct ix_section { uint64_t off, size; };
struct ix_strref { uint64_t off, len; };

struct ix_header {
	char magic[8];
	uint32_t version, byte_order;
	uint64_t file_size;
	uint32_t n_entries, n_terms;
	uint64_t n_postings[2];
	uint64_t n_sets, n_shingles;
	double k1, b, epsilon;
	double avgdl[2];
	uint64_t flags;  /* GEAK_INDEX_* the index was built with */
	struct ix_section sec[NSEC];
};

struct ix_entry {
	struct ix_strref id, source, description, code;
	uint32_t doclen[2];
	uint32_t first_set, n_sets;
};

struct ix_term {
	struct ix_strref text;
	uint64_t post_off[2];
	uint32_t post_n[2];
	double idf[2];
};

struct ix_posting { uint32_t doc, tf; };
struct ix_set { uint64_t off, n; };

/* ---- tokenizer ---- */

static int
word_char(unsigned char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c >= 0x80;
}

static int
word_start(unsigned char c)
{
	return word_char(c) && !(c >= '0' && c <= '9');
}

static int
is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static int
is_lower_or_digit(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* English words that say nothing about what a kernel does. */
static int
stop_word(const char *w, size_t n)
{
	static const char *const stop[] = {
		"a", "an", "and", "are", "as", "at", "be", "been", "by", "can", "do",
		"each", "for", "from", "given", "has", "have", "if", "in", "into", "is",
		"it", "its", "not", "of", "on", "or", "provided", "so", "such", "than",
		"that", "the", "then", "these", "this", "those", "to", "was", "we",
		"which", "will", "with", "write", "you", NULL,
	};

	if (n > 8)
		return 0;
	for (int i = 0; stop[i]; i++)
		if (strlen(stop[i]) == n && memcmp(stop[i], w, n) == 0)
			return 1;
	return 0;
}

/* A light suffix stripper, so that "rows" meets "row" and "computing"
 * meets "compute"; applied to words of letters only, the same way to
 * documents and queries. */
static size_t
stem(char *w, size_t n)
{
	if (n > 4 && memcmp(w + n - 3, "ies", 3) == 0)
		w[(n -= 2) - 1] = 'y';
	else if (n > 3 && w[n - 1] == 's' && !strchr("sui", w[n - 2]))
		n--;
	if (n > 5 && memcmp(w + n - 3, "ing", 3) == 0)
		n -= 3;
	else if (n > 4 && memcmp(w + n - 2, "ed", 2) == 0)
		n -= 2;
	if (n > 4 && w[n - 1] == 'e')
		n--;
	return n;
}

static void
emit_lower(const char *w, size_t n, geak_token_fn *fn, void *ctx)
{
	char buf[MAX_TOKEN];
	int letters = 1;

	if (n == 0)
		return;
	if (n > MAX_TOKEN)
		n = MAX_TOKEN;
	for (size_t i = 0; i < n; i++) {
		buf[i] = is_upper(w[i]) ? (char)(w[i] - 'A' + 'a') : w[i];
		letters &= buf[i] >= 'a' && buf[i] <= 'z';
	}
	if (letters && stop_word(buf, n))
		return;
	if (letters)
		n = stem(buf, n);
	fn(buf, n, ctx);
}

/* One identifier: whole (without leading and trailing underscores), then
 * its parts when it has more than one. */
static void
emit_ident(const char *w, size_t n, geak_token_fn *fn, void *ctx)
{
	size_t start = 0, parts = 0;
	struct { size_t off, len; } part[32];

	while (n > 0 && w[0] == '_')
		w++, n--;
	while (n > 0 && w[n - 1] == '_')
		n--;
	if (n == 0)
		return;
	emit_lower(w, n, fn, ctx);
	for (size_t i = 1; i <= n; i++) {
		int cut = i == n || w[i] == '_' ||
			(is_upper(w[i]) && is_lower_or_digit(w[i - 1])) ||
			(is_upper(w[i]) && i + 1 < n && is_upper(w[i - 1]) && w[i + 1] >= 'a' && w[i + 1] <= 'z');
		if (!cut)
			continue;
		if (i > start && parts < sizeof part / sizeof *part) {
			part[parts].off = start;
			part[parts].len = i - start;
			parts++;
		}
		start = i < n && w[i] == '_' ? i + 1 : i;
	}
	if (parts > 1)
		for (size_t p = 0; p < parts; p++)
			emit_lower(w + part[p].off, part[p].len, fn, ctx);
}

static size_t
emit_word(const char *s, size_t n, size_t i, geak_token_fn *fn, void *ctx)
{
	size_t j = i, start = i;
	int dotted = 0;

	for (;;) {
		while (j < n && word_char((unsigned char)s[j]))
			j++;
		if (j + 1 < n && s[j] == '.' && word_start((unsigned char)s[j + 1])) {
			dotted = 1;
			j++;
			continue;
		}
		break;
	}
	if (dotted) {
		emit_lower(s + start, j - start, fn, ctx);
		for (size_t a = start, b; a < j; a = b + 1) {
			for (b = a; b < j && s[b] != '.'; b++)
				;
			emit_ident(s + a, b - a, fn, ctx);
		}
	} else {
		emit_ident(s + start, j - start, fn, ctx);
	}
	return j;
}

void
geak_bm25_tokenize(const char *s, size_t n, int words_only, geak_token_fn *fn, void *ctx)
{
	static const char *const ops2[] = {
		"**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=", "*=", "/=", NULL,
	};
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		if (word_start(c)) {
			i = emit_word(s, n, i, fn, ctx);
		} else if (c >= '0' && c <= '9') {
			size_t j = i;
			while (j < n && (word_char((unsigned char)s[j]) ||
			       (s[j] == '.' && j + 1 < n && s[j + 1] >= '0' && s[j + 1] <= '9')))
				j++;
			if (!words_only)
				emit_lower(s + i, j - i, fn, ctx);
			i = j;
		} else if (c && strchr("+-*/%=!<>&|^~@[", c)) {
			size_t len = 1;
			for (int k = 0; ops2[k]; k++)
				if (i + 1 < n && s[i] == ops2[k][0] && s[i + 1] == ops2[k][1])
					len = 2;
			if (!words_only && (len == 2 || c != '!'))
				fn(s + i, len, ctx);
			i += len;
		} else {
			i++;
		}
	}
}

/* ---- shingle sets ---- */

/* The shingle sets of a scanned source (see geak_code_shingle_sets). */
static size_t
file_shingle_sets(const struct geak_pyfile *f, uint64_t ***sets, size_t **sizes)
{
	size_t n = 0, kernels = 0;

	for (size_t i = 0; i < f->nfunc; i++)
		kernels += f->func[i].is_kernel;
	*sets = geak_xcalloc(f->nfunc + 1, sizeof **sets);
	*sizes = geak_xcalloc(f->nfunc + 1, sizeof **sizes);
	for (size_t i = 0; i < f->nfunc; i++) {
		if (kernels && !f->func[i].is_kernel)
			continue;
		(*sizes)[n] = geak_pyfunc_shingles(f, &f->func[i], &(*sets)[n]);
		if ((*sizes)[n] > 0)
			n++;
	}
	if (f->nfunc == 0) {
		(*sizes)[0] = geak_pytext_shingles(f, &(*sets)[0]);
		n = (*sizes)[0] > 0;
	}
	return n;
}

size_t
geak_code_shingle_sets(const char *code, size_t len, uint64_t ***sets, size_t **sizes)
{
	struct geak_pyfile *f = geak_pyfile_scan(code, len);
	size_t n = file_shingle_sets(f, sets, sizes);

	geak_pyfile_free(f);
	return n;
}

/* ---- builder ---- */

struct doc_terms {
	uint32_t *pairs;   /* term, tf, term, tf, ... */
	size_t npairs, cap;
	size_t *start;     /* per entry: first pair */
	size_t cap_start;
	uint64_t total_len;
};

struct geak_index_builder {
	unsigned flags;
	struct geak_buf strings;
	struct ix_entry *entries;
	size_t nentries, cap_entries;
	/* the vocabulary: open addressing over term ids */
	uint32_t *slots;
	size_t nslots;
	struct ix_strref *terms;
	size_t nterms, cap_terms;
	struct doc_terms field[2];
	struct ix_set *sets;
	size_t nsets, cap_sets;
	uint64_t *shingles;
	size_t nshingles, cap_shingles;
	/* scratch for one document */
	uint32_t *tokens;
	size_t ntokens, cap_tokens;
};

#define GROW(ptr, n, cap, extra) do { \
	if ((n) + (extra) > (cap)) { \
		(cap) = ((n) + (extra)) * 2; \
		(ptr) = geak_xrealloc((ptr), (cap) * sizeof *(ptr)); \
	} \
} while (0)

static void
rehash(struct geak_index_builder *b)
{
	size_t n = b->nslots ? b->nslots * 2 : 4096;

	free(b->slots);
	b->slots = geak_xmalloc(n * sizeof *b->slots);
	memset(b->slots, 0xff, n * sizeof *b->slots);
	b->nslots = n;
	for (size_t t = 0; t < b->nterms; t++) {
		const struct ix_strref *r = &b->terms[t];
		size_t i = geak_fnv1a(b->strings.data + r->off, r->len) & (n - 1);
		while (b->slots[i] != UINT32_MAX)
			i = (i + 1) & (n - 1);
		b->slots[i] = (uint32_t)t;
	}
}

static uint32_t
term_id(struct geak_index_builder *b, const char *tok, size_t len)
{
	size_t i;

	if (2 * (b->nterms + 1) > b->nslots)
		rehash(b);
	i = geak_fnv1a(tok, len) & (b->nslots - 1);
	while (b->slots[i] != UINT32_MAX) {
		const struct ix_strref *r = &b->terms[b->slots[i]];
		if (r->len == len && memcmp(b->strings.data + r->off, tok, len) == 0)
			return b->slots[i];
		i = (i + 1) & (b->nslots - 1);
	}
	GROW(b->terms, b->nterms, b->cap_terms, 1);
	b->terms[b->nterms].off = b->strings.len;
	b->terms[b->nterms].len = len;
	geak_buf_append(&b->strings, tok, len);
	b->slots[i] = (uint32_t)b->nterms;
	return (uint32_t)b->nterms++;
}

static void
collect_token(const char *tok, size_t len, void *ctx)
{
	struct geak_index_builder *b = ctx;
	uint32_t id = term_id(b, tok, len);

	GROW(b->tokens, b->ntokens, b->cap_tokens, 1);
	b->tokens[b->ntokens++] = id;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Tokenize one document of a field; returns its length in tokens. */
static uint32_t
add_document(struct geak_index_builder *b, int fld, const char *text, size_t len)
{
	struct doc_terms *d = &b->field[fld];
	size_t ntok;

	b->ntokens = 0;
	geak_bm25_tokenize(text, len, fld == GEAK_FIELD_INSTRUCTION, collect_token, b);
	ntok = b->ntokens;
	qsort(b->tokens, ntok, sizeof *b->tokens, cmp_u32);
	for (size_t i = 0; i < ntok; ) {
		size_t j = i;
		while (j < ntok && b->tokens[j] == b->tokens[i])
			j++;
		GROW(d->pairs, d->npairs, d->cap, 2);
		d->pairs[d->npairs++] = b->tokens[i];
		d->pairs[d->npairs++] = (uint32_t)(j - i);
		i = j;
	}
	d->total_len += ntok;
	return ntok > UINT32_MAX ? UINT32_MAX : (uint32_t)ntok;
}

struct geak_index_builder *
geak_index_builder_new(unsigned flags)
{
	struct geak_index_builder *b = geak_xcalloc(1, sizeof *b);

	b->flags = flags;
	return b;
}

size_t
geak_index_builder_count(const struct geak_index_builder *b)
{
	return b->nentries;
}

/* The description, else the code (or with GEAK_INDEX_WITH_CODE both),
 * followed by the names of the functions the code defines: a kernel's and
 * its wrapper's names say what it does as well as any sentence. */
static void
instruction_document(struct geak_buf *doc, unsigned flags, const char *description,
	const char *code, const struct geak_pyfile *f)
{
	int described = description && *description;

	if (described)
		geak_buf_puts(doc, description);
	if (!described || (flags & GEAK_INDEX_WITH_CODE)) {
		geak_buf_puts(doc, "\n");
		geak_buf_puts(doc, code);
	}
	for (size_t i = 0; i < f->nfunc; i++) {
		geak_buf_puts(doc, "\n");
		geak_buf_puts(doc, f->func[i].name);
	}
}

static struct ix_strref
add_string(struct geak_index_builder *b, const char *s)
{
	struct ix_strref r = { b->strings.len, s ? strlen(s) : 0 };

	if (s)
		geak_buf_append(&b->strings, s, r.len);
	return r;
}

void
geak_index_add(struct geak_index_builder *b, const char *id, const char *source,
	const char *description, const char *code)
{
	struct ix_entry *e;
	uint64_t **sets;
	size_t *sizes, nsets, codelen = strlen(code);
	struct geak_buf instr = { 0 };
	struct geak_pyfile *f;

	if (b->nentries >= UINT32_MAX - 1)
		geak_die(GEAK_EXIT_FATAL, "index: more than 2^32 entries");
	GROW(b->entries, b->nentries, b->cap_entries, 1);
	for (int f = 0; f < 2; f++) {
		GROW(b->field[f].start, b->nentries, b->field[f].cap_start, 1);
		b->field[f].start[b->nentries] = b->field[f].npairs;
	}
	e = &b->entries[b->nentries];
	memset(e, 0, sizeof *e);
	e->id = add_string(b, id);
	e->source = add_string(b, source);
	e->description = add_string(b, description);
	e->code = add_string(b, code);
	f = geak_pyfile_scan(code, codelen);
	instruction_document(&instr, b->flags, description, code, f);
	e->doclen[GEAK_FIELD_INSTRUCTION] = add_document(b, GEAK_FIELD_INSTRUCTION, instr.data, instr.len);
	geak_buf_free(&instr);
	e->doclen[GEAK_FIELD_CODE] = add_document(b, GEAK_FIELD_CODE, code, codelen);
	nsets = file_shingle_sets(f, &sets, &sizes);
	geak_pyfile_free(f);
	e->first_set = (uint32_t)b->nsets;
	e->n_sets = (uint32_t)nsets;
	for (size_t s = 0; s < nsets; s++) {
		GROW(b->sets, b->nsets, b->cap_sets, 1);
		b->sets[b->nsets].off = b->nshingles;
		b->sets[b->nsets].n = sizes[s];
		b->nsets++;
		GROW(b->shingles, b->nshingles, b->cap_shingles, sizes[s]);
		memcpy(b->shingles + b->nshingles, sets[s], sizes[s] * sizeof *sets[s]);
		b->nshingles += sizes[s];
		free(sets[s]);
	}
	free(sets);
	free(sizes);
	b->nentries++;
}

static const struct geak_index_builder *sort_builder;

static int
cmp_term(const void *a, const void *b)
{
	const struct ix_strref *x = &sort_builder->terms[*(const uint32_t *)a];
	const struct ix_strref *y = &sort_builder->terms[*(const uint32_t *)b];
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(sort_builder->strings.data + x->off, sort_builder->strings.data + y->off, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static size_t
align8(struct geak_buf *out)
{
	static const char zeros[8];

	if (out->len % 8)
		geak_buf_append(out, zeros, 8 - out->len % 8);
	return out->len;
}

static void
put_section(struct geak_buf *out, struct ix_header *h, int sec, const void *p, size_t n)
{
	h->sec[sec].off = align8(out);
	h->sec[sec].size = n;
	if (n)
		geak_buf_append(out, p, n);
}

/* Lay one field's postings out by term (a counting sort: entries come in
 * ascending order, so each term's list stays sorted) and work out idf. */
static struct ix_posting *
field_postings(struct geak_index_builder *b, int fld, const uint32_t *rank,
	struct ix_term *terms, uint64_t base)
{
	struct doc_terms *d = &b->field[fld];
	size_t npost = d->npairs / 2, *fill = geak_xcalloc(b->nterms + 1, sizeof *fill);
	struct ix_posting *post = geak_xmalloc((npost + 1) * sizeof *post);
	double n = (double)b->nentries, idf_sum = 0, floor;
	size_t vocab = 0, off = 0;

	for (size_t i = 0; i < d->npairs; i += 2)
		terms[rank[d->pairs[i]]].post_n[fld]++;
	for (size_t t = 0; t < b->nterms; t++) {
		double df = terms[t].post_n[fld];
		terms[t].post_off[fld] = base + off;
		fill[t] = off;
		off += terms[t].post_n[fld];
		if (df > 0) {
			terms[t].idf[fld] = log((n - df + 0.5) / (df + 0.5));
			idf_sum += terms[t].idf[fld];
			vocab++;
		}
	}
	for (size_t e = 0; e < b->nentries; e++) {
		size_t end = e + 1 < b->nentries ? d->start[e + 1] : d->npairs;
		for (size_t i = d->start[e]; i < end; i += 2) {
			uint32_t t = rank[d->pairs[i]];
			post[fill[t]].doc = (uint32_t)e;
			post[fill[t]].tf = d->pairs[i + 1];
			fill[t]++;
		}
	}
	/* rank_bm25's rule for common terms (see bm25.h), kept positive. */
	floor = vocab && idf_sum > 0 ? GEAK_BM25_EPSILON * idf_sum / (double)vocab
		: GEAK_BM25_EPSILON;
	for (size_t t = 0; t < b->nterms; t++)
		if (terms[t].post_n[fld] > 0 && terms[t].idf[fld] < 0)
			terms[t].idf[fld] = floor;
	free(fill);
	return post;
}

static void
builder_free(struct geak_index_builder *b)
{
	geak_buf_free(&b->strings);
	free(b->entries);
	free(b->slots);
	free(b->terms);
	for (int f = 0; f < 2; f++) {
		free(b->field[f].pairs);
		free(b->field[f].start);
	}
	free(b->sets);
	free(b->shingles);
	free(b->tokens);
	free(b);
}

void
geak_index_finish(struct geak_index_builder *b, struct geak_buf *out)
{
	struct ix_header h = { 0 };
	uint32_t *order = geak_xmalloc((b->nterms + 1) * sizeof *order);
	uint32_t *rank = geak_xmalloc((b->nterms + 1) * sizeof *rank);
	struct ix_term *terms = geak_xcalloc(b->nterms + 1, sizeof *terms);
	struct ix_posting *post[2];

	for (size_t t = 0; t < b->nterms; t++)
		order[t] = (uint32_t)t;
	sort_builder = b;
	qsort(order, b->nterms, sizeof *order, cmp_term);
	sort_builder = NULL;
	for (size_t r = 0; r < b->nterms; r++) {
		rank[order[r]] = (uint32_t)r;
		terms[r].text = b->terms[order[r]];
	}
	post[0] = field_postings(b, 0, rank, terms, 0);
	post[1] = field_postings(b, 1, rank, terms, b->field[0].npairs / 2);

	memcpy(h.magic, MAGIC, 8);
	h.version = VERSION;
	h.byte_order = BYTE_ORDER_MARK;
	h.n_entries = (uint32_t)b->nentries;
	h.n_terms = (uint32_t)b->nterms;
	h.n_sets = b->nsets;
	h.n_shingles = b->nshingles;
	h.k1 = GEAK_BM25_K1;
	h.b = GEAK_BM25_B;
	h.epsilon = GEAK_BM25_EPSILON;
	h.flags = b->flags;
	for (int f = 0; f < 2; f++) {
		h.n_postings[f] = b->field[f].npairs / 2;
		h.avgdl[f] = b->nentries ? (double)b->field[f].total_len / (double)b->nentries : 0;
	}
	geak_buf_reset(out);
	geak_buf_append(out, &h, sizeof h);
	put_section(out, &h, SEC_STRINGS, b->strings.data, b->strings.len);
	put_section(out, &h, SEC_ENTRIES, b->entries, b->nentries * sizeof *b->entries);
	put_section(out, &h, SEC_TERMS, terms, b->nterms * sizeof *terms);
	put_section(out, &h, SEC_POSTINGS, post[0], h.n_postings[0] * sizeof *post[0]);
	geak_buf_append(out, post[1], h.n_postings[1] * sizeof *post[1]);
	h.sec[SEC_POSTINGS].size += h.n_postings[1] * sizeof *post[1];
	put_section(out, &h, SEC_SETS, b->sets, b->nsets * sizeof *b->sets);
	put_section(out, &h, SEC_SHINGLES, b->shingles, b->nshingles * sizeof *b->shingles);
	h.file_size = align8(out);
	memcpy(out->data, &h, sizeof h);
	free(order);
	free(rank);
	free(terms);
	free(post[0]);
	free(post[1]);
	builder_free(b);
}

/* ---- loading ---- */

struct geak_index {
	char *base;
	size_t size;
	int mapped;
	const struct ix_header *h;
	const char *strings;
	const struct ix_entry *entries;
	const struct ix_term *terms;
	const struct ix_posting *postings;
	const struct ix_set *sets;
	const uint64_t *shingles;
};

static int
bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int
geak_index_is_image(const void *head, size_t len)
{
	return len >= 8 && memcmp(head, MAGIC, 8) == 0;
}

static int
ref_ok(const struct ix_strref *r, uint64_t limit)
{
	return r->off <= limit && r->len <= limit - r->off;
}

static int
validate(struct geak_index *ix, char *err, size_t errlen)
{
	static const size_t recsize[NSEC] = {
		1, sizeof(struct ix_entry), sizeof(struct ix_term), sizeof(struct ix_posting),
		sizeof(struct ix_set), sizeof(uint64_t),
	};
	const struct ix_header *h = (const void *)ix->base;
	uint64_t count[NSEC], nstr, npost;

	if (ix->size < sizeof *h || !geak_index_is_image(ix->base, ix->size))
		return bad(err, errlen, "not a geak-retrieve index");
	if (h->version != VERSION)
		return bad(err, errlen, "index format version %u, this program reads %u", h->version, VERSION);
	if (h->byte_order != BYTE_ORDER_MARK)
		return bad(err, errlen, "index written on a machine of another byte order");
	if (h->file_size != ix->size)
		return bad(err, errlen, "index truncated or padded: %llu bytes, header says %llu",
			(unsigned long long)ix->size, (unsigned long long)h->file_size);
	count[SEC_STRINGS] = h->sec[SEC_STRINGS].size;
	count[SEC_ENTRIES] = h->n_entries;
	count[SEC_TERMS] = h->n_terms;
	count[SEC_POSTINGS] = h->n_postings[0] + h->n_postings[1];
	count[SEC_SETS] = h->n_sets;
	count[SEC_SHINGLES] = h->n_shingles;
	if (h->n_postings[0] > UINT64_MAX / 2 || h->n_postings[1] > UINT64_MAX / 2)
		return bad(err, errlen, "index header: bad posting counts");
	for (int s = 0; s < NSEC; s++) {
		const struct ix_section *sec = &h->sec[s];
		if (sec->off % 8 || sec->off < sizeof *h || sec->off > ix->size ||
		    sec->size > ix->size - sec->off || count[s] > sec->size / recsize[s] ||
		    count[s] * recsize[s] != sec->size)
			return bad(err, errlen, "index section %d out of bounds", s);
	}
	if (!(h->k1 >= 0 && h->k1 < 100) || !(h->b >= 0 && h->b <= 1) ||
	    !isfinite(h->avgdl[0]) || !isfinite(h->avgdl[1]) || h->avgdl[0] < 0 || h->avgdl[1] < 0)
		return bad(err, errlen, "index header: bad BM25 parameters");
	ix->h = h;
	ix->strings = ix->base + h->sec[SEC_STRINGS].off;
	ix->entries = (const void *)(ix->base + h->sec[SEC_ENTRIES].off);
	ix->terms = (const void *)(ix->base + h->sec[SEC_TERMS].off);
	ix->postings = (const void *)(ix->base + h->sec[SEC_POSTINGS].off);
	ix->sets = (const void *)(ix->base + h->sec[SEC_SETS].off);
	ix->shingles = (const void *)(ix->base + h->sec[SEC_SHINGLES].off);
	nstr = h->sec[SEC_STRINGS].size;
	npost = count[SEC_POSTINGS];
	for (uint64_t i = 0; i < h->n_entries; i++) {
		const struct ix_entry *e = &ix->entries[i];
		if (!ref_ok(&e->id, nstr) || !ref_ok(&e->source, nstr) ||
		    !ref_ok(&e->description, nstr) || !ref_ok(&e->code, nstr) ||
		    e->first_set > h->n_sets || e->n_sets > h->n_sets - e->first_set)
			return bad(err, errlen, "index entry %llu: reference out of bounds",
				(unsigned long long)i);
	}
	for (uint64_t i = 0; i < h->n_terms; i++) {
		const struct ix_term *t = &ix->terms[i];
		if (!ref_ok(&t->text, nstr))
			return bad(err, errlen, "index term %llu: reference out of bounds",
				(unsigned long long)i);
		for (int f = 0; f < 2; f++)
			if (t->post_off[f] > npost || t->post_n[f] > npost - t->post_off[f] ||
			    !isfinite(t->idf[f]))
				return bad(err, errlen, "index term %llu: postings out of bounds",
					(unsigned long long)i);
	}
	for (uint64_t i = 0; i < h->n_sets; i++)
		if (ix->sets[i].off > h->n_shingles || ix->sets[i].n > h->n_shingles - ix->sets[i].off)
			return bad(err, errlen, "index shingle set %llu out of bounds",
				(unsigned long long)i);
	return 0;
}

struct geak_index *
geak_index_from_memory(char *data, size_t len, char *err, size_t errlen)
{
	struct geak_index *ix = geak_xcalloc(1, sizeof *ix);

	ix->base = data;
	ix->size = len;
	if (validate(ix, err, errlen) < 0) {
		free(data);
		free(ix);
		return NULL;
	}
	return ix;
}

struct geak_index *
geak_index_open(const char *path, char *err, size_t errlen)
{
	struct geak_index *ix;
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char why[200];

	if (fd < 0) {
		bad(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		bad(err, errlen, "%s: %s", path, S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
		close(fd);
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		bad(err, errlen, "%s: mmap: %s", path, strerror(errno));
		return NULL;
	}
	ix = geak_xcalloc(1, sizeof *ix);
	ix->base = map;
	ix->size = (size_t)st.st_size;
	ix->mapped = 1;
	if (validate(ix, why, sizeof why) < 0) {
		bad(err, errlen, "%s: %s", path, why);
		munmap(map, ix->size);
		free(ix);
		return NULL;
	}
	return ix;
}

void
geak_index_close(struct geak_index *ix)
{
	if (!ix)
		return;
	if (ix->mapped)
		munmap(ix->base, ix->size);
	else
		free(ix->base);
	free(ix);
}

size_t
geak_index_count(const struct geak_index *ix)
{
	return ix->h->n_entries;
}

unsigned
geak_index_flags(const struct geak_index *ix)
{
	return (unsigned)ix->h->flags;
}

static struct geak_str
str_at(const struct geak_index *ix, const struct ix_strref *r)
{
	struct geak_str s = { ix->strings + r->off, (size_t)r->len };

	return s;
}

void
geak_index_entry(const struct geak_index *ix, size_t i, struct geak_entry *e)
{
	const struct ix_entry *x = &ix->entries[i];

	e->id = str_at(ix, &x->id);
	e->source = str_at(ix, &x->source);
	e->description = str_at(ix, &x->description);
	e->code = str_at(ix, &x->code);
}

/* ---- search ---- */

static long
find_term(const struct geak_index *ix, const char *tok, size_t len)
{
	size_t lo = 0, hi = ix->h->n_terms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ix_strref *r = &ix->terms[mid].text;
		size_t n = r->len < len ? r->len : len;
		int c = memcmp(ix->strings + r->off, tok, n);
		if (c == 0)
			c = (r->len > len) - (r->len < len);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct query {
	const struct geak_index *ix;
	long *terms;
	size_t n, cap;
};

static void
query_token(const char *tok, size_t len, void *ctx)
{
	struct query *q = ctx;
	long t = find_term(q->ix, tok, len);

	if (t < 0)
		return;
	GROW(q->terms, q->n, q->cap, 1);
	q->terms[q->n++] = t;
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

static void
score_term(const struct geak_index *ix, int fld, long t, double qcount, double *score)
{
	const struct ix_term *term = &ix->terms[t];
	const struct ix_posting *p = ix->postings + term->post_off[fld];
	double k1 = ix->h->k1, b = ix->h->b, avgdl = ix->h->avgdl[fld];
	double w = qcount * term->idf[fld] * (k1 + 1);
	size_t n = ix->h->n_entries;

	for (uint32_t i = 0; i < term->post_n[fld]; i++) {
		double tf, dl;
		if (p[i].doc >= n || p[i].tf == 0)
			continue;  /* a damaged index: never read outside it */
		tf = p[i].tf;
		dl = ix->entries[p[i].doc].doclen[fld];
		score[p[i].doc] += w * tf / (tf + k1 * (1 - b + b * (avgdl > 0 ? dl / avgdl : 1)));
	}
}

size_t
geak_index_search(const struct geak_index *ix, enum geak_doc_field fld,
	const char *query, size_t qlen, const unsigned char *excluded,
	size_t k, struct geak_hit *hits)
{
	struct query q = { .ix = ix };
	size_t n = ix->h->n_entries, nhits = 0;
	double *score;

	if (k == 0 || n == 0)
		return 0;
	geak_bm25_tokenize(query, qlen, fld == GEAK_FIELD_INSTRUCTION, query_token, &q);
	if (q.n == 0) {
		free(q.terms);
		return 0;
	}
	score = geak_xcalloc(n, sizeof *score);
	qsort(q.terms, q.n, sizeof *q.terms, cmp_long);
	for (size_t i = 0; i < q.n; ) {
		size_t j = i;
		while (j < q.n && q.terms[j] == q.terms[i])
			j++;
		score_term(ix, fld, q.terms[i], (double)(j - i), score);
		i = j;
	}
	free(q.terms);
	/* Keep the k best in hits[], best first; a later entry must score
	 * strictly higher to pass an earlier one, so ties go by entry order. */
	for (size_t d = 0; d < n; d++) {
		size_t pos;
		if (!(score[d] > 0) || !isfinite(score[d]) || (excluded && excluded[d]))
			continue;
		if (nhits == k && score[d] <= hits[k - 1].score)
			continue;
		pos = nhits < k ? nhits++ : k - 1;
		while (pos > 0 && hits[pos - 1].score < score[d]) {
			hits[pos] = hits[pos - 1];
			pos--;
		}
		hits[pos].entry = d;
		hits[pos].score = score[d];
	}
	free(score);
	return nhits;
}

/* Prefix filtering: with both sets in one global order (ascending hash),
 * two sets whose Jaccard is at least t share an element within the first
 * |A| - ceil(t |A|) + 1 elements of A and the first |B| - ceil(t |B|) + 1
 * of B.  Pairs that do not are skipped without the full comparison.  The
 * prefix is rounded up, which only makes the filter more permissive. */
static size_t
prefix_len(size_t n, double t)
{
	double need = ceil(t * (double)n - 1e-9);

	return need < 1 ? n : n - (size_t)need + 1;
}

static int
prefixes_meet(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, double t)
{
	size_t i = 0, j = 0, pa = prefix_len(na, t), pb = prefix_len(nb, t);

	while (i < pa && j < pb) {
		if (a[i] == b[j])
			return 1;
		if (a[i] < b[j])
			i++;
		else
			j++;
	}
	return 0;
}

size_t
geak_index_near_duplicates(const struct geak_index *ix, const char *reference,
	size_t reflen, double threshold, unsigned char *excluded)
{
	uint64_t **ref;
	size_t *refn, nref = geak_code_shingle_sets(reference, reflen, &ref, &refn), marked = 0;

	for (size_t e = 0; e < ix->h->n_entries && nref > 0; e++) {
		const struct ix_entry *x = &ix->entries[e];
		int dup = 0;
		for (uint32_t s = 0; s < x->n_sets && !dup; s++) {
			const struct ix_set *set = &ix->sets[x->first_set + s];
			for (size_t r = 0; r < nref && !dup; r++) {
				double small = (double)(set->n < refn[r] ? set->n : refn[r]);
				double large = (double)(set->n < refn[r] ? refn[r] : set->n);
				/* |A ∩ B| / |A ∪ B| <= min / max: skip hopeless pairs. */
				if (large == 0 || small / large < threshold ||
				    !prefixes_meet(ix->shingles + set->off, set->n, ref[r], refn[r], threshold))
					continue;
				dup = geak_shingle_jaccard(ix->shingles + set->off, set->n,
					ref[r], refn[r]) >= threshold;
			}
		}
		if (dup && !excluded[e]) {
			excluded[e] = 1;
			marked++;
		}
	}
	for (size_t r = 0; r < nref; r++)
		free(ref[r]);
	free(ref);
	free(refn);
	return marked;
}
