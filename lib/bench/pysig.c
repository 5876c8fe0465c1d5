/* pysig.c: `def` signatures from Python source (see pysig.h).
 *
 * A line-oriented regular expression stops at the first ')' or the end of
 * the line, which cuts `def f(x, shape=(1, 2))` and every signature that
 * spans lines.  This scanner knows just enough Python to avoid that:
 * string literals (with prefixes and triple quotes), comments, bracket
 * depth, line continuations and statement starts. */
#include <stdlib.h>
#include <string.h>

#include "bench/pysig.h"
#include "util.h"

static int
is_ident_char(unsigned char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c >= 0x80;
}

static int
is_ident_start(unsigned char c)
{
	return is_ident_char(c) && !(c >= '0' && c <= '9');
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* 1 when the n bytes at s are a string prefix such as r, b, f, rb, Rb. */
static int
is_string_prefix(const char *s, size_t n)
{
	static const char *const prefixes[] = {
		"r", "u", "b", "f", "br", "rb", "fr", "rf", NULL,
	};
	char low[3];

	if (n == 0 || n > 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)(s[i] | 0x20);
	low[n] = '\0';
	for (int i = 0; prefixes[i]; i++)
		if (strcmp(low, prefixes[i]) == 0)
			return 1;
	return 0;
}

/* See pysig.h.  The first byte after the literal at q.
 * An unterminated one-line literal ends at the newline, as Python's
 * tokenizer would give up there. */
const char *
geak_py_skip_string(const char *q)
{
	char quote = *q;
	int triple = q[1] == quote && q[2] == quote;

	q += triple ? 3 : 1;
	while (*q) {
		if (*q == '\\' && q[1]) {
			q += 2;
			continue;
		}
		if (*q == quote && (!triple || (q[1] == quote && q[2] == quote)))
			return q + (triple ? 3 : 1);
		if (!triple && *q == '\n')
			return q;
		q++;
	}
	return q;
}

static const char *
skip_ident(const char *p)
{
	while (is_ident_char((unsigned char)*p))
		p++;
	return p;
}

/* If p starts a string literal (quote, or prefix then quote), return the
 * first byte after it; else NULL. */
static const char *
string_end(const char *p)
{
	const char *e;

	if (*p == '\'' || *p == '"')
		return geak_py_skip_string(p);
	if (!is_ident_start((unsigned char)*p))
		return NULL;
	e = skip_ident(p);
	if ((*e == '\'' || *e == '"') && is_string_prefix(p, (size_t)(e - p)))
		return geak_py_skip_string(e);
	return NULL;
}

static const char *
skip_blanks(const char *p)
{
	for (;;) {
		if (is_blank(*p))
			p++;
		else if (*p == '\\' && p[1] == '\n')
			p += 2;
		else
			return p;
	}
}

/* Append c to the normalised parameter text, first writing the single
 * space that stands for the white space and comments seen before it,
 * unless it would sit just inside a bracket or before a comma. */
static void
emit(struct geak_buf *b, int *space, const char *s, size_t n)
{
	char last = b->len ? b->data[b->len - 1] : '(';

	if (*space && !strchr("([{", last) && !strchr(")]},:", s[0]))
		geak_buf_append(b, " ", 1);
	*space = 0;
	geak_buf_append(b, s, n);
}

/* q points just past '('.  Collect the parameter list into b; return the
 * byte after the closing ')', or NULL when the source ends first. */
static const char *
collect_params(const char *q, struct geak_buf *b)
{
	int depth = 1, space = 0;
	const char *e;

	while (*q) {
		if (*q == '#') {
			q += strcspn(q, "\n");
			space = 1;
		} else if (*q == '\\' && q[1] == '\n') {
			q += 2;
			space = 1;
		} else if (is_blank(*q) || *q == '\n') {
			q++;
			space = 1;
		} else if ((e = string_end(q))) {
			emit(b, &space, q, (size_t)(e - q));
			q = e;
		} else if (is_ident_start((unsigned char)*q)) {
			e = skip_ident(q);
			emit(b, &space, q, (size_t)(e - q));
			q = e;
		} else {
			if (strchr("([{", *q))
				depth++;
			else if (strchr(")]}", *q) && --depth == 0)
				return q + 1;
			emit(b, &space, q, 1);
			q++;
		}
	}
	return NULL;
}

/* p points just past the keyword `def`.  Return the signature, or NULL
 * when what follows is not a name and a closed parameter list. */
static char *
parse_def(const char *p, int is_async)
{
	struct geak_buf sig = {0};
	const char *name, *end;

	p = skip_blanks(p);
	if (!is_ident_start((unsigned char)*p))
		return NULL;
	name = p;
	p = skip_ident(p);
	end = p;
	p = skip_blanks(p);
	if (*p == '[') { /* type parameters (Python 3.12): not part of the call */
		struct geak_buf ignored = {0};
		p = collect_params(p + 1, &ignored);
		geak_buf_free(&ignored);
		if (!p)
			return NULL;
		p = skip_blanks(p);
	}
	if (*p != '(')
		return NULL;
	geak_buf_printf(&sig, "%sdef %.*s(", is_async ? "async " : "", (int)(end - name), name);
	if (!collect_params(p + 1, &sig)) {
		geak_buf_free(&sig);
		return NULL;
	}
	if (sig.len && sig.data[sig.len - 1] == ',')
		sig.data[--sig.len] = '\0';
	geak_buf_append(&sig, ")", 1);
	return geak_buf_steal(&sig);
}

static void
add_sig(json_t *list, char *sig)
{
	json_t *s = json_string(sig);

	free(sig);
	if (!s || json_array_append_new(list, s) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
}

json_t *
geak_pysig_list(const char *src)
{
	json_t *list = json_array();
	int stmt_start = 1, is_async = 0, depth = 0;
	const char *p = src, *e;

	if (!list)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	while (*p) {
		if (*p == '#') {
			p += strcspn(p, "\n");
		} else if (*p == '\\' && p[1] == '\n') {
			p += 2;
		} else if (*p == '\n') {
			if (depth == 0)
				stmt_start = 1, is_async = 0;
			p++;
		} else if (is_blank(*p)) {
			p++;
		} else if ((e = string_end(p))) {
			stmt_start = is_async = 0;
			p = e;
		} else if (is_ident_start((unsigned char)*p)) {
			e = skip_ident(p);
			size_t n = (size_t)(e - p);
			if (stmt_start && depth == 0 && n == 5 && !memcmp(p, "async", 5)) {
				is_async = 1;
			} else {
				if (stmt_start && depth == 0 && n == 3 && !memcmp(p, "def", 3)) {
					char *sig = parse_def(e, is_async);
					if (sig)
						add_sig(list, sig);
				}
				stmt_start = is_async = 0;
			}
			p = e;
		} else {
			if (strchr("([{", *p))
				depth++;
			else if (strchr(")]}", *p) && depth > 0)
				depth--;
			stmt_start = *p == ';' && depth == 0;
			is_async = 0;
			p++;
		}
	}
	return list;
}
