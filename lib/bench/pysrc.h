/* pysrc.h: Python source scanning for the retrieval corpus: a lexer that
 * knows strings, comments, brackets and indentation, the functions it
 * finds (decorators, docstrings, comment blocks above them, Triton
 * kernels and the wrappers that launch them), and token shingles of
 * function bodies for near-duplicate detection. */
#ifndef GEAK_PYSRC_H
#define GEAK_PYSRC_H

#include <stddef.h>
#include <stdint.h>

enum geak_pytok_type {
	GEAK_PY_NAME, GEAK_PY_NUMBER, GEAK_PY_STRING, GEAK_PY_OP,
	GEAK_PY_COMMENT, GEAK_PY_NEWLINE, /* end of a logical line */
};

struct geak_pytok {
	enum geak_pytok_type type;
	size_t off, len;  /* bytes in the source */
	int line;         /* 1-based physical line */
	int indent;       /* columns of indentation when it starts a logical
	                   * line, else -1 */
};

struct geak_pyfunc {
	char *name;
	int is_kernel;        /* decorated with triton.jit or jit */
	int indent;           /* columns before `def` */
	size_t start, end;    /* source bytes: first decorator's line start to
	                       * the end of the last body line */
	size_t body_tok, body_end;  /* tokens of the body: after the
	                             * signature's ':' up to body_end */
	size_t doc_tok;       /* token index of the docstring, or SIZE_MAX */
	char *docstring;      /* cleaned docstring, or NULL */
	char *comment;        /* the # block right above it, or NULL */
};

struct geak_pyfile {
	const char *src;
	size_t len;
	struct geak_pytok *tok;
	size_t ntok;
	struct geak_pyfunc *func;  /* in source order, nested ones included */
	size_t nfunc;
};

/* Scan src (not copied: it must outlive the result).  Never fails: text
 * that is not valid Python yields what could be recognised. */
struct geak_pyfile *geak_pyfile_scan(const char *src, size_t len);
void geak_pyfile_free(struct geak_pyfile *f);

/* The function's source text, dedented to column 0.  Caller frees. */
char *geak_pyfunc_text(const struct geak_pyfile *f, const struct geak_pyfunc *fn);

/* The plain (not kernel) function that launches kernel k, `k[grid](...)`,
 * else the first that names it at all; -1 when none does. */
long geak_pyfunc_wrapper(const struct geak_pyfile *f, size_t k);

/* Near-duplicate detection of function bodies.  A body's tokens are its
 * Python tokens without comments, the docstring and layout; its shingles
 * are the hashes of every run of GEAK_SHINGLE_N consecutive tokens (a
 * body of fewer tokens is one shingle), sorted and unique.  Returns the
 * count and sets *out (caller frees; NULL when the count is 0). */
#define GEAK_SHINGLE_N 5
size_t geak_pyfunc_shingles(const struct geak_pyfile *f, const struct geak_pyfunc *fn,
	uint64_t **out);
/* The same for a whole text that holds no function. */
size_t geak_pytext_shingles(const struct geak_pyfile *f, uint64_t **out);
/* |A ∩ B| / |A ∪ B| of two sorted unique sets; 0 when both are empty. */
double geak_shingle_jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);

#endif
