/* pysrc.c: a Python lexer and function scanner (see pysrc.h).
 *
 * The lexer follows the language reference closely enough for source
 * that CPython accepts: string literals with prefixes and triple quotes,
 * comments, implicit line joining inside brackets, backslash
 * continuations, indentation with tabs to multiples of 8.  It does not
 * build a syntax tree; functions are found from logical lines that start
 * with `def` and end where a logical line is indented no deeper. */
#include <stdlib.h>
#include <string.h>

#include "bench/pysrc.h"
#include "util.h"

struct lexer {
	const char *s;
	size_t len, p;
	int line, depth, line_has_tokens, pending_indent;
	struct geak_pytok *tok;
	size_t ntok, cap;
};

static void
emit(struct lexer *lx, enum geak_pytok_type type, size_t off, size_t len, int line)
{
	struct geak_pytok *t;

	if (lx->ntok == lx->cap) {
		lx->cap = lx->cap ? lx->cap * 2 : 256;
		lx->tok = geak_xrealloc(lx->tok, lx->cap * sizeof *lx->tok);
	}
	t = &lx->tok[lx->ntok++];
	t->type = type;
	t->off = off;
	t->len = len;
	t->line = line;
	t->indent = -1;
	if (type == GEAK_PY_COMMENT || type == GEAK_PY_NEWLINE)
		return;
	t->indent = lx->pending_indent;
	lx->pending_indent = -1;
	lx->line_has_tokens = 1;
}

static int
is_name_start(unsigned char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static int
is_name_char(unsigned char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* Length of a string prefix (r, b, u, f, rb, br, fr, rf in any case) at
 * p that is followed by a quote; -1 when p does not start a string. */
static int
string_prefix(const struct lexer *lx, size_t p)
{
	for (int n = 0; n <= 2 && p + n < lx->len; n++) {
		char c = lx->s[p + n];
		if (c == '\'' || c == '"')
			return n;
		if (!strchr("rRbBuUfF", c))
			return -1;
	}
	return -1;
}

static void
lex_string(struct lexer *lx, int prefix)
{
	size_t start = lx->p, j = lx->p + prefix;
	int line = lx->line;
	char q = lx->s[j];
	int triple = j + 2 < lx->len && lx->s[j + 1] == q && lx->s[j + 2] == q;

	j += triple ? 3 : 1;
	while (j < lx->len) {
		char c = lx->s[j];
		if (c == '\\' && j + 1 < lx->len) {
			if (lx->s[j + 1] == '\n')
				lx->line++;
			j += 2;
			continue;
		}
		if (c == '\n') {
			if (!triple)
				break;  /* unterminated: end the token here */
			lx->line++;
		}
		if (c == q) {
			if (!triple) {
				j++;
				break;
			}
			if (j + 2 < lx->len && lx->s[j + 1] == q && lx->s[j + 2] == q) {
				j += 3;
				break;
			}
		}
		j++;
	}
	if (j > lx->len)
		j = lx->len;
	lx->p = j;
	emit(lx, GEAK_PY_STRING, start, j - start, line);
}

static void
lex_number(struct lexer *lx)
{
	size_t j = lx->p;
	int hex = lx->s[j] == '0' && j + 1 < lx->len && strchr("xXoObB", lx->s[j + 1]);

	while (j < lx->len) {
		unsigned char c = lx->s[j];
		if (is_name_char(c) || c == '.')
			j++;
		else if ((c == '+' || c == '-') && !hex && (lx->s[j - 1] == 'e' || lx->s[j - 1] == 'E'))
			j++;
		else
			break;
	}
	emit(lx, GEAK_PY_NUMBER, lx->p, j - lx->p, lx->line);
	lx->p = j;
}

static void
lex_op(struct lexer *lx)
{
	static const char *const ops3[] = { "**=", "//=", ">>=", "<<=", "...", NULL };
	static const char *const ops2[] = {
		"**", "//", ">>", "<<", "<=", ">=", "==", "!=", "->", "+=", "-=",
		"*=", "/=", "%=", "&=", "|=", "^=", "@=", ":=", NULL,
	};
	size_t n = 1, left = lx->len - lx->p;
	const char *s = lx->s + lx->p;

	for (int i = 0; ops3[i]; i++)
		if (left >= 3 && memcmp(s, ops3[i], 3) == 0)
			n = 3;
	for (int i = 0; n == 1 && ops2[i]; i++)
		if (left >= 2 && memcmp(s, ops2[i], 2) == 0)
			n = 2;
	if (n == 1 && strchr("([{", *s))
		lx->depth++;
	else if (n == 1 && strchr(")]}", *s) && lx->depth > 0)
		lx->depth--;
	emit(lx, GEAK_PY_OP, lx->p, n, lx->line);
	lx->p += n;
}

/* At the start of a physical line outside brackets: measure the indent;
 * blank lines and comment-only lines start no logical line. */
static void
line_start(struct lexer *lx)
{
	int col = 0;

	while (lx->p < lx->len) {
		char c = lx->s[lx->p];
		if (c == ' ' || c == '\f')
			col++;
		else if (c == '\t')
			col += 8 - col % 8;
		else
			break;
		lx->p++;
	}
	if (lx->p < lx->len && !strchr("\r\n#", lx->s[lx->p]))
		lx->pending_indent = col;
}

static void
end_line(struct lexer *lx, size_t off, size_t len)
{
	if (lx->line_has_tokens)
		emit(lx, GEAK_PY_NEWLINE, off, len, lx->line);
	lx->line_has_tokens = 0;
	lx->pending_indent = -1;
}

static void
lex(struct lexer *lx)
{
	int bol = 1;

	while (lx->p < lx->len) {
		unsigned char c;
		if (bol) {
			line_start(lx);
			bol = 0;
			continue;
		}
		c = lx->s[lx->p];
		if (c == ' ' || c == '\t' || c == '\f') {
			lx->p++;
		} else if (c == '\\' && lx->p + 1 < lx->len && strchr("\r\n", lx->s[lx->p + 1])) {
			lx->p += 2;
			if (lx->s[lx->p - 1] == '\r' && lx->p < lx->len && lx->s[lx->p] == '\n')
				lx->p++;
			lx->line++;
		} else if (c == '\n' || c == '\r') {
			size_t off = lx->p++;
			if (c == '\r' && lx->p < lx->len && lx->s[lx->p] == '\n')
				lx->p++;
			if (lx->depth == 0) {
				end_line(lx, off, lx->p - off);
				bol = 1;
			}
			lx->line++;
		} else if (c == '#') {
			size_t e = lx->p;
			while (e < lx->len && lx->s[e] != '\n' && lx->s[e] != '\r')
				e++;
			emit(lx, GEAK_PY_COMMENT, lx->p, e - lx->p, lx->line);
			lx->p = e;
		} else if (is_name_start(c)) {
			int prefix = string_prefix(lx, lx->p);
			size_t e = lx->p;
			if (prefix >= 0) {
				lex_string(lx, prefix);
				continue;
			}
			while (e < lx->len && is_name_char(lx->s[e]))
				e++;
			emit(lx, GEAK_PY_NAME, lx->p, e - lx->p, lx->line);
			lx->p = e;
		} else if (c == '\'' || c == '"') {
			lex_string(lx, 0);
		} else if (is_digit(c) || (c == '.' && lx->p + 1 < lx->len && is_digit(lx->s[lx->p + 1]))) {
			lex_number(lx);
		} else {
			lex_op(lx);
		}
	}
	end_line(lx, lx->len, 0);
}

/* ---- functions ---- */

static int
tok_is(const struct geak_pyfile *f, size_t i, enum geak_pytok_type type, const char *text)
{
	const struct geak_pytok *t;

	if (i >= f->ntok)
		return 0;
	t = &f->tok[i];
	return t->type == type && (!text || (t->len == strlen(text) && memcmp(f->src + t->off, text, t->len) == 0));
}

static size_t
line_begin(const char *s, size_t off)
{
	while (off > 0 && s[off - 1] != '\n')
		off--;
	return off;
}

/* The string literal's body: prefix and quotes removed. */
static char *
string_body(const char *s, size_t len)
{
	size_t i = 0, q;

	while (i < len && s[i] != '\'' && s[i] != '"')
		i++;
	q = i + 2 < len && s[i + 1] == s[i] && s[i + 2] == s[i] ? 3 : 1;
	if (i + 2 * q > len)
		return geak_xstrdup("");
	return geak_xstrndup(s + i + q, len - i - 2 * q);
}

/* Like Python's inspect.cleandoc: drop the common indentation of the
 * lines after the first, trailing blanks, and blank lines at both ends. */
static char *
clean_doc(char *raw)
{
	struct geak_buf out = { 0 };
	size_t common = SIZE_MAX, keep = 0;
	char *p, *line;

	for (p = strchr(raw, '\n'); p; p = strchr(p, '\n')) {
		size_t n = 0;
		p++;
		while (p[n] == ' ' || p[n] == '\t')
			n++;
		if (p[n] && p[n] != '\n' && p[n] != '\r' && n < common)
			common = n;
	}
	for (line = raw; line; ) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line), cut = 0;
		if (line == raw)
			while (cut < n && (line[cut] == ' ' || line[cut] == '\t'))
				cut++;
		else
			while (cut < n && cut < common && (line[cut] == ' ' || line[cut] == '\t'))
				cut++;
		while (n > cut && strchr(" \t\r", line[n - 1]))
			n--;
		if (out.len > 0 || n > cut) {
			if (out.len > 0)
				geak_buf_puts(&out, "\n");
			geak_buf_append(&out, line + cut, n - cut);
			if (n > cut)
				keep = out.len;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(raw);
	if (keep == 0) {
		geak_buf_free(&out);
		return NULL;
	}
	out.len = keep;
	out.data[keep] = '\0';
	return geak_buf_steal(&out);
}

/* Comment lines that say nothing about the code: tool pragmas, shebangs,
 * encodings and separators made of punctuation only. */
static int
noise_comment(const char *text, size_t n)
{
	static const char *const pragmas[] = {
		"type:", "noqa", "fmt:", "pylint:", "pragma", "mypy:", "-*-",
		"isort:", "ruff:", "yapf:", "!", NULL,
	};
	size_t i = 0;
	int letters = 0;

	while (i < n && (text[i] == ' ' || text[i] == '\t'))
		i++;
	for (int k = 0; pragmas[k]; k++)
		if (n - i >= strlen(pragmas[k]) && strncmp(text + i, pragmas[k], strlen(pragmas[k])) == 0)
			return 1;
	for (; i < n; i++)
		if (is_name_char((unsigned char)text[i]))
			letters++;
	return letters == 0;
}

/* The block of # lines directly above the line that starts at off. */
static char *
comment_above(const char *s, size_t off)
{
	size_t top = off, b;
	struct geak_buf out = { 0 };

	while (top > 0) {
		size_t prev = line_begin(s, top - 1), i = prev;
		while (s[i] == ' ' || s[i] == '\t')
			i++;
		if (s[i] != '#')
			break;
		top = prev;
	}
	for (b = top; b < off; ) {
		size_t e = b, i;
		while (e < off && s[e] != '\n')
			e++;
		for (i = b; i < e && s[i] != '#'; i++)
			;
		while (i < e && s[i] == '#')
			i++;
		if (i < e && s[i] == ' ')
			i++;
		if (!noise_comment(s + i, e - i)) {
			size_t n = e - i;
			while (n > 0 && (s[i + n - 1] == ' ' || s[i + n - 1] == '\r'))
				n--;
			if (out.len)
				geak_buf_puts(&out, "\n");
			geak_buf_append(&out, s + i, n);
		}
		b = e + 1;
	}
	if (out.len == 0) {
		geak_buf_free(&out);
		return NULL;
	}
	return geak_buf_steal(&out);
}

/* Is the decorator that starts at token i `@jit`, `@triton.jit` or one of
 * them called with arguments? */
static int
kernel_decorator(const struct geak_pyfile *f, size_t i)
{
	struct geak_buf name = { 0 };
	int yes;

	for (i++; i < f->ntok; i += 2) {
		if (!tok_is(f, i, GEAK_PY_NAME, NULL))
			break;
		geak_buf_append(&name, f->src + f->tok[i].off, f->tok[i].len);
		if (!tok_is(f, i + 1, GEAK_PY_OP, "."))
			break;
		geak_buf_puts(&name, ".");
	}
	yes = name.data && (strcmp(name.data, "triton.jit") == 0 || strcmp(name.data, "jit") == 0);
	geak_buf_free(&name);
	return yes;
}

/* Index of the ':' that ends the signature of the def at token i, or 0. */
static size_t
signature_end(const struct geak_pyfile *f, size_t i)
{
	int depth = 0;

	for (; i < f->ntok && f->tok[i].type != GEAK_PY_NEWLINE; i++) {
		const struct geak_pytok *t = &f->tok[i];
		char c = f->src[t->off];
		if (t->type != GEAK_PY_OP)
			continue;
		if (t->len == 1 && strchr("([{", c))
			depth++;
		else if (t->len == 1 && strchr(")]}", c))
			depth--;
		else if (t->len == 1 && c == ':' && depth == 0)
			return i;
	}
	return 0;
}

static void
add_func(struct geak_pyfile *f, struct geak_pyfunc *fn)
{
	f->func = geak_xrealloc(f->func, (f->nfunc + 1) * sizeof *f->func);
	f->func[f->nfunc++] = *fn;
}

/* The function whose `def` is token d; lines[] are the logical line
 * starts seen so far, the last being d itself. */
static void
scan_def(struct geak_pyfile *f, size_t d, const size_t *lines, size_t nlines)
{
	struct geak_pyfunc fn = { 0 };
	size_t name = d + 1, colon, k, first = d, last_nl = 0;
	int indent = f->tok[d].indent;

	if (tok_is(f, d, GEAK_PY_NAME, "async"))
		name++;
	if (!tok_is(f, name, GEAK_PY_NAME, NULL) || !(colon = signature_end(f, name)))
		return;
	/* Decorators: the logical lines right above, at the same indent. */
	for (size_t l = nlines - 1; l-- > 0; ) {
		size_t t = lines[l];
		if (f->tok[t].indent != indent || !tok_is(f, t, GEAK_PY_OP, "@"))
			break;
		first = t;
		if (kernel_decorator(f, t))
			fn.is_kernel = 1;
	}
	fn.name = geak_xstrndup(f->src + f->tok[name].off, f->tok[name].len);
	fn.indent = indent;
	fn.start = line_begin(f->src, f->tok[first].off);
	fn.body_tok = colon + 1;
	fn.doc_tok = SIZE_MAX;
	/* The body ends before the next logical line no deeper than the def,
	 * or with the def's own line when the body follows the colon. */
	k = colon + 1;
	while (tok_is(f, k, GEAK_PY_COMMENT, NULL))
		k++;
	if (tok_is(f, k, GEAK_PY_NEWLINE, NULL)) {
		for (last_nl = k++; k < f->ntok; k++) {
			if (f->tok[k].indent >= 0 && f->tok[k].indent <= indent)
				break;
			if (f->tok[k].type == GEAK_PY_NEWLINE)
				last_nl = k;
		}
	} else {
		while (k < f->ntok && f->tok[k].type != GEAK_PY_NEWLINE)
			k++;
		last_nl = k < f->ntok ? k : 0;
	}
	fn.body_end = last_nl ? last_nl + 1 : f->ntok;
	fn.end = last_nl ? f->tok[last_nl].off + f->tok[last_nl].len : f->len;
	for (k = colon + 1; k < fn.body_end && (f->tok[k].type == GEAK_PY_COMMENT ||
	     f->tok[k].type == GEAK_PY_NEWLINE); k++)
		;
	if (k < fn.body_end && tok_is(f, k, GEAK_PY_STRING, NULL) && tok_is(f, k + 1, GEAK_PY_NEWLINE, NULL)) {
		fn.doc_tok = k;
		fn.docstring = clean_doc(string_body(f->src + f->tok[k].off, f->tok[k].len));
	}
	fn.comment = comment_above(f->src, fn.start);
	add_func(f, &fn);
}

static void
scan_functions(struct geak_pyfile *f)
{
	size_t *lines = geak_xmalloc((f->ntok + 1) * sizeof *lines), nlines = 0;

	for (size_t i = 0; i < f->ntok; i++) {
		if (f->tok[i].indent < 0)
			continue;
		lines[nlines++] = i;
		if (tok_is(f, i, GEAK_PY_NAME, "def") ||
		    (tok_is(f, i, GEAK_PY_NAME, "async") && tok_is(f, i + 1, GEAK_PY_NAME, "def")))
			scan_def(f, i, lines, nlines);
	}
	free(lines);
}

struct geak_pyfile *
geak_pyfile_scan(const char *src, size_t len)
{
	struct lexer lx = { .s = src, .len = len, .line = 1, .pending_indent = -1 };
	struct geak_pyfile *f = geak_xcalloc(1, sizeof *f);

	lex(&lx);
	f->src = src;
	f->len = len;
	f->tok = lx.tok;
	f->ntok = lx.ntok;
	scan_functions(f);
	return f;
}

void
geak_pyfile_free(struct geak_pyfile *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nfunc; i++) {
		free(f->func[i].name);
		free(f->func[i].docstring);
		free(f->func[i].comment);
	}
	free(f->func);
	free(f->tok);
	free(f);
}

char *
geak_pyfunc_text(const struct geak_pyfile *f, const struct geak_pyfunc *fn)
{
	struct geak_buf out = { 0 };
	size_t p = fn->start;

	while (p < fn->end) {
		size_t e = p;
		int col = 0;
		while (e < fn->end && f->src[e] != '\n')
			e++;
		while (p < e && col < fn->indent && (f->src[p] == ' ' || f->src[p] == '\t'))
			col += f->src[p++] == '\t' ? 8 - col % 8 : 1;
		size_t blank = strspn(f->src + p, " \t");
		/* Lines of blanks only come out empty (a CR of a CRLF line
		 * ending stays), as textwrap.dedent makes them. */
		if (p + blank >= e)
			;
		else if (p + blank + 1 == e && f->src[p + blank] == '\r')
			geak_buf_puts(&out, "\r");
		else
			geak_buf_append(&out, f->src + p, e - p);
		geak_buf_puts(&out, "\n");
		p = e + 1;
	}
	/* Keep exactly one final newline. */
	while (out.len > 1 && out.data[out.len - 1] == '\n' && out.data[out.len - 2] == '\n')
		out.data[--out.len] = '\0';
	return geak_buf_steal(&out);
}

long
geak_pyfunc_wrapper(const struct geak_pyfile *f, size_t k)
{
	const struct geak_pyfunc *kern = &f->func[k];
	size_t namelen = strlen(kern->name);
	long ref = -1;

	for (size_t w = 0; w < f->nfunc; w++) {
		const struct geak_pyfunc *fn = &f->func[w];
		if (w == k || fn->is_kernel)
			continue;
		for (size_t i = fn->body_tok; i < fn->body_end && i < f->ntok; i++) {
			const struct geak_pytok *t = &f->tok[i];
			if (t->type != GEAK_PY_NAME || t->len != namelen ||
			    memcmp(f->src + t->off, kern->name, namelen) != 0)
				continue;
			/* Neither a nested definition of the same name nor an
			 * attribute (torch.nn.functional.gelu) is the kernel. */
			if (i > 0 && (tok_is(f, i - 1, GEAK_PY_NAME, "def") ||
			    tok_is(f, i - 1, GEAK_PY_OP, ".")))
				continue;
			if (tok_is(f, i + 1, GEAK_PY_OP, "["))
				return (long)w;
			if (ref < 0)
				ref = (long)w;
		}
	}
	return ref;
}

/* ---- shingles ---- */

/* splitmix64's finaliser: spreads a combined hash over all bits. */
static uint64_t
mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t
shingles(const struct geak_pyfile *f, size_t from, size_t to, size_t skip, uint64_t **out)
{
	uint64_t *h = geak_xmalloc((to - from + 1) * sizeof *h), *sh;
	size_t n = 0, ns, u;

	for (size_t i = from; i < to && i < f->ntok; i++) {
		const struct geak_pytok *t = &f->tok[i];
		if (i == skip || t->type == GEAK_PY_COMMENT || t->type == GEAK_PY_NEWLINE)
			continue;
		h[n++] = geak_fnv1a(f->src + t->off, t->len);
	}
	*out = NULL;
	if (n == 0) {
		free(h);
		return 0;
	}
	ns = n < GEAK_SHINGLE_N ? 1 : n - GEAK_SHINGLE_N + 1;
	sh = geak_xmalloc(ns * sizeof *sh);
	for (size_t i = 0; i < ns; i++) {
		uint64_t x = 0;
		for (size_t j = i; j < i + GEAK_SHINGLE_N && j < n; j++)
			x = mix(x ^ h[j]) + j - i;
		sh[i] = x;
	}
	free(h);
	qsort(sh, ns, sizeof *sh, cmp_u64);
	for (u = 0, n = 0; u < ns; u++)
		if (n == 0 || sh[n - 1] != sh[u])
			sh[n++] = sh[u];
	*out = sh;
	return n;
}

size_t
geak_pyfunc_shingles(const struct geak_pyfile *f, const struct geak_pyfunc *fn, uint64_t **out)
{
	return shingles(f, fn->body_tok, fn->body_end, fn->doc_tok, out);
}

size_t
geak_pytext_shingles(const struct geak_pyfile *f, uint64_t **out)
{
	return shingles(f, 0, f->ntok, SIZE_MAX, out);
}

double
geak_shingle_jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	size_t i = 0, j = 0, common = 0;

	if (na + nb == 0)
		return 0;
	while (i < na && j < nb) {
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
			common++, i++, j++;
	}
	return (double)common / (double)(na + nb - common);
}
