/* kbprob.c: read a KernelBench problem file statically (see kbprob.h).
 *
 * The source is cut into logical lines (brackets and backslashes joined,
 * comments dropped, string literals kept whole), each with its indent.
 * Module-level assignments are evaluated by a small integer and float
 * arithmetic over the names seen before; the two get_ functions are read
 * statement by statement. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/kbprob.h"
#include "bench/pysig.h"
#include "util.h"

#define MAX_OPERATORS 48
#define MAX_DESCRIPTION 800

struct line {
	int indent;
	char *text;
};

struct lines {
	struct line *v;
	size_t n;
};

static int
is_ident_char(unsigned char c)
{
	return c == '_' || isalnum(c) || c >= 0x80;
}

static int
is_ident_start(unsigned char c)
{
	return is_ident_char(c) && !isdigit(c);
}

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\f')
		p++;
	return p;
}

static const char *
skip_ws_inline(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static void
add_line(struct lines *ls, int indent, struct geak_buf *b)
{
	size_t n = b->len;

	while (n && (b->data[n - 1] == ' ' || b->data[n - 1] == '\t' || b->data[n - 1] == '\r'))
		n--;
	if (n) {
		ls->v = geak_xrealloc(ls->v, (ls->n + 1) * sizeof *ls->v);
		ls->v[ls->n++] = (struct line){indent, geak_xstrndup(b->data, n)};
	}
	geak_buf_reset(b);
}

static void
split_lines(const char *src, struct lines *ls)
{
	struct geak_buf b = {0};
	const char *p = src, *e;
	int depth = 0, indent = 0, at_start = 1;

	while (*p) {
		if (at_start) {
			for (indent = 0; *p == ' ' || *p == '\t'; p++)
				indent += *p == '\t' ? 8 - indent % 8 : 1;
			at_start = 0;
			continue;
		}
		if (*p == '#') {
			p += strcspn(p, "\n");
		} else if (*p == '\\' && p[1] == '\n') {
			geak_buf_puts(&b, " ");
			p += 2;
		} else if (*p == '\n') {
			p++;
			if (depth > 0) {
				geak_buf_puts(&b, " ");
			} else {
				add_line(ls, indent, &b);
				at_start = 1;
			}
		} else if (*p == '\'' || *p == '"') {
			e = geak_py_skip_string(p);
			geak_buf_append(&b, p, (size_t)(e - p));
			p = e;
		} else if (*p == ';' && depth == 0) {
			/* a; b: two statements at the same indent */
			add_line(ls, indent, &b);
			p = skip_ws_inline(p + 1);
		} else {
			if (strchr("([{", *p))
				depth++;
			else if (strchr(")]}", *p) && depth > 0)
				depth--;
			geak_buf_append(&b, p, 1);
			p++;
		}
	}
	add_line(ls, indent, &b);
	geak_buf_free(&b);
}

static void
free_lines(struct lines *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free(ls->v[i].text);
	free(ls->v);
}

/* ---- values: integer and float arithmetic, tuples ---- */

struct ev {
	const char *p;
	json_t *scope, *local; /* names to values; local may be NULL */
	json_t *tensors;       /* names to input objects, for NAME.shape */
	int depth;             /* nesting, bounded: the text is anyone's */
};

#define MAX_NESTING 64

static json_t *ev_expr(struct ev *e);

static json_t *
lookup(struct ev *e, const char *name)
{
	json_t *v = e->local ? json_object_get(e->local, name) : NULL;

	return v ? v : json_object_get(e->scope, name);
}

static json_t *
ev_number(struct ev *e)
{
	char digits[64];
	size_t n = 0;
	int real = 0;
	const char *p = e->p;

	while (n + 1 < sizeof digits && (isalnum((unsigned char)*p) || *p == '_' || *p == '.' ||
	    ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E')))) {
		if (*p == '.' || *p == 'e' || *p == 'E')
			real = 1;
		if (*p != '_')
			digits[n++] = *p;
		p++;
	}
	digits[n] = '\0';
	e->p = p;
	char *end;
	if (real) {
		double d = strtod(digits, &end);
		return *end ? NULL : json_real(d);
	}
	long long v = strtoll(digits, &end, 10);
	return *end ? NULL : json_integer(v);
}

/* A tuple or list after its opening bracket; a parenthesised single
 * expression without a comma is that value. */
static json_t *
ev_group(struct ev *e, char close)
{
	json_t *arr = json_array(), *v;
	int comma = 0;

	for (;;) {
		e->p = skip_ws(e->p);
		if (*e->p == close) {
			e->p++;
			break;
		}
		int star = *e->p == '*';
		if (star)
			e->p++;
		if (!(v = ev_expr(e))) {
			json_decref(arr);
			return NULL;
		}
		if (star && json_is_array(v))
			json_array_extend(arr, v);
		else
			json_array_append(arr, v);
		json_decref(v);
		e->p = skip_ws(e->p);
		if (*e->p == ',') {
			comma = 1;
			e->p++;
		} else if (*e->p != close) {
			json_decref(arr);
			return NULL;
		}
	}
	if (close == ')' && !comma && json_array_size(arr) == 1) {
		v = json_incref(json_array_get(arr, 0));
		json_decref(arr);
		return v;
	}
	return arr;
}

static json_t *
ev_atom(struct ev *e)
{
	const char *p = e->p = skip_ws(e->p);

	if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1])))
		return ev_number(e);
	if (*p == '(' || *p == '[') {
		e->p++;
		return ev_group(e, *p == '(' ? ')' : ']');
	}
	if (!is_ident_start((unsigned char)*p))
		return NULL;
	while (is_ident_char((unsigned char)*e->p))
		e->p++;
	char *name = geak_xstrndup(p, (size_t)(e->p - p));
	json_t *v = NULL, *t;
	if (strcmp(name, "True") == 0 || strcmp(name, "False") == 0) {
		v = json_boolean(name[0] == 'T');
	} else if (strncmp(e->p, ".shape", 6) == 0 && !is_ident_char((unsigned char)e->p[6])) {
		e->p += 6;
		t = e->tensors ? json_object_get(e->tensors, name) : NULL;
		v = json_is_array(json_object_get(t, "shape")) ? json_incref(json_object_get(t, "shape")) : NULL;
	} else if ((v = lookup(e, name))) {
		json_incref(v);
	}
	free(name);
	return v;
}

static int
both_int(json_t *a, json_t *b)
{
	return json_is_integer(a) && json_is_integer(b);
}

/* a op b for numbers; NULL where Python would not give a number here or
 * an integer would overflow. */
static json_t *
arith(json_t *a, json_t *b, char op)
{
	if (!json_is_number(a) || !json_is_number(b)) {
		json_t *r;
		if (op == '*' && json_is_array(a) && json_is_integer(b) &&
		    json_integer_value(b) >= 0 && json_integer_value(b) <= 4096) {
			/* [16] * 8 */
			r = json_array();
			for (long long k = 0; k < json_integer_value(b); k++)
				json_array_extend(r, a);
			return r;
		}
		if (op != '+' || !json_is_array(a) || !json_is_array(b))
			return NULL;
		r = json_copy(a); /* a may be a constant's own value */
		json_array_extend(r, b);
		return r;
	}
	if (both_int(a, b) && op != '/') {
		long long x = json_integer_value(a), y = json_integer_value(b), r;
		switch (op) {
		case '+': if (__builtin_add_overflow(x, y, &r)) return NULL; break;
		case '-': if (__builtin_sub_overflow(x, y, &r)) return NULL; break;
		case '*': if (__builtin_mul_overflow(x, y, &r)) return NULL; break;
		case 'f': /* // */
		case '%':
			if (y == 0)
				return NULL;
			r = x / y;
			if ((x % y != 0) && ((x < 0) != (y < 0)))
				r--;
			if (op == '%')
				r = x - r * y;
			break;
		case 'p': /* ** */
			if (y < 0)
				return json_real(pow((double)x, (double)y));
			r = 1;
			for (long long i = 0; i < y; i++)
				if (__builtin_mul_overflow(r, x, &r))
					return NULL;
			break;
		default: return NULL;
		}
		return json_integer(r);
	}
	double x = json_number_value(a), y = json_number_value(b);
	switch (op) {
	case '+': return json_real(x + y);
	case '-': return json_real(x - y);
	case '*': return json_real(x * y);
	case '/': return y == 0 ? NULL : json_real(x / y);
	case 'f': return y == 0 ? NULL : json_real(floor(x / y));
	case '%': return y == 0 ? NULL : json_real(x - floor(x / y) * y);
	case 'p': return json_real(pow(x, y));
	}
	return NULL;
}

static json_t *
binary(json_t *a, json_t *b, char op)
{
	json_t *r = a && b ? arith(a, b, op) : NULL;

	json_decref(a);
	json_decref(b);
	return r;
}

static json_t *ev_unary(struct ev *e);

static json_t *
ev_power(struct ev *e)
{
	json_t *a = ev_atom(e);

	e->p = skip_ws(e->p);
	if (a && e->p[0] == '*' && e->p[1] == '*') {
		e->p += 2;
		return binary(a, ev_unary(e), 'p');
	}
	return a;
}

static json_t *
ev_unary(struct ev *e)
{
	json_t *v;

	if (++e->depth > MAX_NESTING) {
		e->depth--;
		return NULL;
	}
	e->p = skip_ws(e->p);
	if (*e->p == '-' || *e->p == '+') {
		char op = *e->p++;
		v = ev_unary(e);
		v = op == '+' ? v : binary(json_integer(0), v, '-');
	} else {
		v = ev_power(e);
	}
	e->depth--;
	return v;
}

static json_t *
ev_term(struct ev *e)
{
	json_t *a = ev_unary(e);

	for (;;) {
		const char *p = e->p = skip_ws(e->p);
		char op;
		if (p[0] == '*' && p[1] != '*')
			op = '*', e->p += 1;
		else if (p[0] == '/' && p[1] == '/')
			op = 'f', e->p += 2;
		else if (p[0] == '/' || p[0] == '%')
			op = p[0], e->p += 1;
		else
			return a;
		if (*e->p == '=') /* an augmented assignment: not an expression */
			return json_decref(a), NULL;
		a = binary(a, ev_unary(e), op);
	}
}

static json_t *
ev_expr(struct ev *e)
{
	json_t *a = ev_term(e);

	for (;;) {
		e->p = skip_ws(e->p);
		if ((*e->p != '+' && *e->p != '-') || e->p[1] == '=')
			return a;
		char op = *e->p++;
		a = binary(a, ev_term(e), op);
	}
}

/* The value of the whole of text, or NULL when it is not one. */
static json_t *
eval_text(const char *text, json_t *scope, json_t *local, json_t *tensors)
{
	struct ev e = {text, scope, local, tensors, 0};
	json_t *v = ev_expr(&e);

	if (v && *skip_ws(e.p)) {
		/* "a, b" at the top: a tuple without brackets */
		if (*skip_ws(e.p) == ',') {
			char *wrapped = geak_xasprintf("(%s)", text);
			json_decref(v);
			v = eval_text(wrapped, scope, local, tensors);
			free(wrapped);
			return v;
		}
		json_decref(v);
		return NULL;
	}
	return v;
}

/* ---- text helpers ---- */

/* The byte after the bracket group that starts at p. */
static const char *
skip_group(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '\'' || *p == '"') {
			p = geak_py_skip_string(p) - 1;
			continue;
		}
		if (strchr("([{", *p))
			depth++;
		else if (strchr(")]}", *p) && --depth == 0)
			return p + 1;
	}
	return p;
}

static char *
trimmed(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return geak_xstrndup(s, n);
}

/* The comma-separated items of text (no enclosing brackets), each
 * trimmed; an empty trailing item goes. */
static json_t *
split_items(const char *text)
{
	json_t *items = json_array();
	const char *p = text, *start = text;

	for (;;) {
		if (*p == '(' || *p == '[' || *p == '{') {
			p = skip_group(p);
			continue;
		}
		if (*p == '\'' || *p == '"') {
			p = geak_py_skip_string(p);
			continue;
		}
		if (*p == ',' || !*p) {
			char *item = trimmed(start, (size_t)(p - start));
			if (*item)
				json_array_append_new(items, json_string(item));
			free(item);
			if (!*p)
				return items;
			start = p + 1;
		}
		p++;
	}
}

/* "NAME = rest" (not ==, not an augmented assignment): the name, with
 * *rest set; NULL otherwise. */
static char *
assignment(const char *text, const char **rest)
{
	const char *p = text;

	if (!is_ident_start((unsigned char)*p))
		return NULL;
	while (is_ident_char((unsigned char)*p))
		p++;
	const char *end = p;
	p = skip_ws(p);
	if (*p != '=' || p[1] == '=')
		return NULL;
	*rest = skip_ws(p + 1);
	return geak_xstrndup(text, (size_t)(end - text));
}

/* "a, b, c = rest": the names, with *rest set; NULL otherwise. */
static json_t *
tuple_target(const char *text, const char **rest)
{
	json_t *names = json_array();
	const char *p = text;

	for (;;) {
		const char *start = p = skip_ws(p);
		if (!is_ident_start((unsigned char)*p))
			break;
		while (is_ident_char((unsigned char)*p))
			p++;
		json_array_append_new(names, json_stringn(start, (size_t)(p - start)));
		p = skip_ws(p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '=' && p[1] != '=' && json_array_size(names) > 1) {
			*rest = skip_ws(p + 1);
			return names;
		}
		break;
	}
	json_decref(names);
	return NULL;
}

static int
starts_word(const char *text, const char *word)
{
	size_t n = strlen(word);

	return strncmp(text, word, n) == 0 && !is_ident_char((unsigned char)text[n]);
}

/* ---- tensors made by torch calls ---- */

static const char *
dtype_of_method(const char *m)
{
	static const char *const map[][2] = {
		{"bool", "bool"}, {"half", "float16"}, {"float", "float32"},
		{"double", "float64"}, {"long", "int64"}, {"int", "int32"},
		{"bfloat16", "bfloat16"}, {"short", "int16"}, {"byte", "uint8"},
	};

	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(m, map[i][0]) == 0)
			return map[i][1];
	return NULL;
}

/* "torch.X" in an argument: the dtype name X, or NULL. */
static const char *
torch_dtype(const char *arg, char *out, size_t outlen)
{
	arg = skip_ws(arg);
	if (strncmp(arg, "torch.", 6) != 0)
		return NULL;
	size_t n = strspn(arg + 6, "abcdefghijklmnopqrstuvwxyz0123456789_");
	if (n == 0 || n >= outlen)
		return NULL;
	memcpy(out, arg + 6, n);
	out[n] = '\0';
	return out;
}

/* The shape given by positional arguments pos of a maker such as
 * torch.rand: the dims, or one tuple of them. */
static json_t *
shape_of_args(json_t *pos, struct ev *scope)
{
	json_t *shape = json_array(), *item, *v;
	size_t i;

	json_array_foreach(pos, i, item) {
		const char *t = json_string_value(item);
		int star = *t == '*';
		v = eval_text(star ? t + 1 : t, scope->scope, scope->local, scope->tensors);
		if (v && json_is_array(v) && (star || json_array_size(pos) == 1))
			json_array_extend(shape, v);
		else if (v && json_is_integer(v) && !star)
			json_array_append(shape, v);
		else {
			json_decref(v);
			json_decref(shape);
			return NULL;
		}
		json_decref(v);
	}
	json_array_foreach(shape, i, item)
		if (!json_is_integer(item) || json_integer_value(item) < 0) {
			json_decref(shape);
			return NULL;
		}
	return shape;
}

/* Trailing conversions at p (.bool(), .half(), .to(torch.float16))
 * change dtype; the tensor {dtype, shape}, shape taken. */
static json_t *
with_methods(const char *p, const char *dtype, json_t *shape)
{
	char cdt[32];
	json_t *t;

	while (*p == '.') {
		const char *m = ++p;
		while (is_ident_char((unsigned char)*p))
			p++;
		char *meth = geak_xstrndup(m, (size_t)(p - m));
		const char *conv = dtype_of_method(meth);
		if (*p == '(') {
			const char *end = skip_group(p);
			if (strcmp(meth, "to") == 0) {
				const char *arg = skip_ws(p + 1);
				if (strncmp(arg, "dtype", 5) == 0)
					arg = skip_ws(skip_ws(arg + 5) + 1);
				conv = torch_dtype(arg, cdt, sizeof cdt);
			}
			p = end;
		}
		if (conv)
			dtype = conv;
		free(meth);
	}
	t = json_pack("{s:s, s:o}", "dtype", dtype, "shape", shape ? shape : json_null());
	if (!t)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	return t;
}

/* A tensor from text that starts with "torch.NAME(": {dtype, shape},
 * or NULL when text is not such a call. */
static json_t *
tensor_call(const char *text, struct ev *scope)
{
	static const char *const makers[] = {"rand", "randn", "ones", "zeros", "empty", NULL};
	const char *p = text + 6, *open, *close, *name;
	json_t *items, *pos, *item, *shape = NULL, *base;
	char dt[32], bdt[32], fn[32];
	const char *dtype = NULL, *kw_dtype = NULL;
	size_t i;

	if (*text == '(') {
		/* (torch.rand(...) * scale).softmax(dim=-1) */
		close = skip_group(text);
		char *inner = close > text + 1 && scope->depth < MAX_NESTING ?
		    geak_xstrndup(text + 1, (size_t)(close - text - 2)) : NULL;
		scope->depth++;
		json_t *in = inner ? tensor_call(skip_ws(inner), scope) : NULL;
		scope->depth--;
		free(inner);
		if (!in)
			return NULL;
		snprintf(bdt, sizeof bdt, "%s", json_string_value(json_object_get(in, "dtype")));
		shape = json_incref(json_object_get(in, "shape"));
		json_decref(in);
		if (json_is_null(shape))
			json_decref(shape), shape = NULL;
		return with_methods(close, bdt, shape);
	}
	if (strncmp(text, "torch.", 6) != 0)
		return NULL;
	name = p;
	while (is_ident_char((unsigned char)*p))
		p++;
	if (*p != '(' || (size_t)(p - name) >= sizeof fn)
		return NULL;
	memcpy(fn, name, (size_t)(p - name));
	fn[p - name] = '\0';
	open = p;
	close = skip_group(open);
	if (close[-1] != ')')
		return NULL;
	char *inner = geak_xstrndup(open + 1, (size_t)(close - open - 2));
	items = split_items(inner);
	free(inner);
	pos = json_array();
	json_array_foreach(items, i, item) {
		const char *rest, *t = json_string_value(item);
		char *kw = assignment(t, &rest);
		if (!kw) {
			json_array_append(pos, item);
			continue;
		}
		if (strcmp(kw, "dtype") == 0)
			kw_dtype = torch_dtype(rest, dt, sizeof dt);
		else if (strcmp(kw, "size") == 0)
			json_array_append_new(pos, json_string(rest));
		free(kw);
	}
	for (i = 0; makers[i]; i++)
		if (strcmp(fn, makers[i]) == 0)
			break;
	size_t npos = json_array_size(pos);
	if (makers[i]) {
		shape = shape_of_args(pos, scope);
	} else if (strcmp(fn, "randint") == 0 && npos >= 2) {
		json_t *last = json_pack("[O]", json_array_get(pos, npos - 1));
		shape = shape_of_args(last, scope);
		json_decref(last);
		dtype = "int64";
	} else if (strcmp(fn, "full") == 0 && npos >= 1) {
		json_t *first = json_pack("[O]", json_array_get(pos, 0));
		shape = shape_of_args(first, scope);
		json_decref(first);
	} else if (npos >= 1) {
		/* rand_like(x), tril(x), triu(torch.rand(N, N)): the shape
		 * and dtype of the tensor it is given */
		const char *arg = json_string_value(json_array_get(pos, 0));
		if ((base = json_object_get(scope->tensors, arg))) {
			json_incref(base);
		} else if (scope->depth < MAX_NESTING) {
			scope->depth++;
			base = tensor_call(arg, scope);
			scope->depth--;
		}
		if (json_is_array(json_object_get(base, "shape")))
			shape = json_deep_copy(json_object_get(base, "shape"));
		if (json_is_string(json_object_get(base, "dtype"))) {
			snprintf(bdt, sizeof bdt, "%s", json_string_value(json_object_get(base, "dtype")));
			dtype = bdt;
		}
		json_decref(base);
	}
	json_decref(items);
	json_decref(pos);
	if (kw_dtype)
		dtype = kw_dtype;
	return with_methods(close, dtype ? dtype : "float32", shape);
}

/* ---- the parts of the file ---- */

struct problem {
	struct lines ls;
	json_t *scope;    /* module-level constants */
	json_t *out;
};

/* The body of the top-level def or class whose line starts with head:
 * lines [*from, *to). 0 when there is none. */
static int
find_body(const struct lines *ls, const char *head, size_t *from, size_t *to)
{
	for (size_t i = 0; i < ls->n; i++) {
		if (ls->v[i].indent != 0 || strncmp(ls->v[i].text, head, strlen(head)) != 0)
			continue;
		size_t j = i + 1;
		while (j < ls->n && ls->v[j].indent > 0)
			j++;
		*from = i + 1, *to = j;
		return 1;
	}
	return 0;
}

static void
read_constants(struct problem *pb)
{
	for (size_t i = 0; i < pb->ls.n; i++) {
		const char *rest = pb->ls.v[i].text;
		json_t *names, *name, *v, *tuple;
		char *n;
		size_t k;
		if (pb->ls.v[i].indent != 0)
			continue;
		names = json_array();
		/* height = width = 128: every name of the chain */
		while ((n = assignment(rest, &rest))) {
			json_array_append_new(names, json_string(n));
			free(n);
		}
		if (!json_array_size(names) && (tuple = tuple_target(rest, &rest))) {
			/* depth, height, width = 24, 48, 48 */
			v = eval_text(rest, pb->scope, NULL, NULL);
			json_array_foreach(tuple, k, name) {
				json_t *item = json_is_array(v) && json_array_size(v) == json_array_size(tuple) ?
				    json_array_get(v, k) : NULL;
				if (item)
					json_object_set(pb->scope, json_string_value(name), item);
				else
					json_object_del(pb->scope, json_string_value(name));
			}
			json_decref(v);
			json_decref(tuple);
			json_decref(names);
			continue;
		}
		v = json_array_size(names) ? eval_text(rest, pb->scope, NULL, NULL) : NULL;
		json_array_foreach(names, k, name) {
			if (v)
				json_object_set(pb->scope, json_string_value(name), v);
			else
				json_object_del(pb->scope, json_string_value(name));
		}
		json_decref(v);
		json_decref(names);
	}
}

/* The text after "return" in lines [from, to), its list brackets gone. */
static char *
return_list(const struct lines *ls, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		const char *t = ls->v[i].text;
		if (!starts_word(t, "return"))
			continue;
		t = skip_ws(t + 6);
		size_t n = strlen(t);
		if (n >= 2 && ((t[0] == '[' && t[n - 1] == ']') || (t[0] == '(' && t[n - 1] == ')')) &&
		    skip_group(t) == t + n)
			return geak_xstrndup(t + 1, n - 2);
		return geak_xstrdup(t);
	}
	return NULL;
}

/* Local assignments of a get_ function: tensors into tensors, values
 * into local. */
static void
read_locals(struct problem *pb, size_t from, size_t to, json_t *local, json_t *tensors)
{
	struct ev scope = {NULL, pb->scope, local, tensors, 0};

	for (size_t i = from; i < to; i++) {
		const char *rest;
		char *name = assignment(pb->ls.v[i].text, &rest);
		json_t *t, *v;
		if (!name)
			continue;
		if ((t = tensor_call(rest, &scope))) {
			json_object_set_new(t, "text", json_string(rest));
			json_object_set_new(tensors, name, t);
		} else if (!json_object_get(tensors, name)) {
			/* a tensor assigned again (A = (A + A.T) / 2) keeps its shape */
			if ((v = eval_text(rest, pb->scope, local, tensors)))
				json_object_set_new(local, name, v);
			else
				json_object_del(local, name);
		}
		free(name);
	}
}

/* Model's "def NAME(params)", or NULL. */
static char *
model_def(const struct lines *ls, const char *name)
{
	size_t from, to, n = strlen(name);
	char *sig = NULL;

	if (!find_body(ls, "class Model", &from, &to))
		return NULL;
	for (size_t i = from; i < to && !sig; i++) {
		const char *t = ls->v[i].text;
		if (strncmp(t, "def ", 4) != 0 || strncmp(skip_ws(t + 4), name, n) != 0)
			continue;
		json_t *sigs = geak_pysig_list(t);
		if (json_array_size(sigs))
			sig = geak_xstrdup(json_string_value(json_array_get(sigs, 0)));
		json_decref(sigs);
	}
	return sig;
}

/* The parameter names of Model.forward, self left out. */
static json_t *
forward_params(const struct lines *ls)
{
	size_t from, to;
	json_t *names = json_array();

	if (!find_body(ls, "class Model", &from, &to))
		return names;
	for (size_t i = from; i < to; i++) {
		const char *t = ls->v[i].text, *open;
		if (strncmp(t, "def forward", 11) != 0 || !(open = strchr(t, '(')))
			continue;
		const char *close = skip_group(open);
		char *inner = geak_xstrndup(open + 1, close > open + 1 ? (size_t)(close - open - 2) : 0);
		json_t *items = split_items(inner), *item;
		size_t k;
		free(inner);
		json_array_foreach(items, k, item) {
			const char *s = json_string_value(item);
			size_t n = strspn(s, "*");
			s += n;
			size_t len = 0;
			while (is_ident_char((unsigned char)s[len]))
				len++;
			if (len && !(k == 0 && len == 4 && strncmp(s, "self", 4) == 0))
				json_array_append_new(names, json_stringn(s, len));
		}
		json_decref(items);
		break;
	}
	return names;
}

static json_t *
product(json_t *shape)
{
	long long n = 1;
	size_t i;
	json_t *d;

	json_array_foreach(shape, i, d)
		if (__builtin_mul_overflow(n, (long long)json_integer_value(d), &n))
			return NULL;
	return json_integer(n);
}

static void
read_inputs(struct problem *pb)
{
	json_t *local = json_object(), *tensors = json_object(), *inputs = json_array();
	json_t *params = forward_params(&pb->ls), *items = NULL, *item, *t;
	struct ev scope = {NULL, pb->scope, local, tensors, 0};
	long long total = 0;
	int known = 1;
	size_t from, to, i;
	char *list;

	if (find_body(&pb->ls, "def get_inputs", &from, &to) &&
	    (read_locals(pb, from, to, local, tensors), list = return_list(&pb->ls, from, to))) {
		items = split_items(list);
		free(list);
	}
	json_array_foreach(items, i, item) {
		const char *text = json_string_value(item);
		const char *pname = json_string_value(json_array_get(params, i));
		json_t *in;
		if ((t = json_object_get(tensors, text)))
			in = json_deep_copy(t);
		else if (!(in = tensor_call(text, &scope)))
			in = json_pack("{s:o}", "value",
			    (t = eval_text(text, pb->scope, local, tensors)) ? t : json_null());
		json_object_set_new(in, "name", json_string(pname ? pname : text));
		if (!json_object_get(in, "text"))
			json_object_set_new(in, "text", json_string(text));
		if (json_object_get(in, "dtype")) {
			json_t *shape = json_object_get(in, "shape"), *n;
			long long add;
			if (known && json_is_array(shape) && (n = product(shape))) {
				add = json_integer_value(n);
				json_decref(n);
				if (__builtin_add_overflow(total, add, &total))
					known = 0;
			} else {
				known = 0;
			}
		}
		json_array_append_new(inputs, in);
	}
	json_object_set_new(pb->out, "inputs", inputs);
	json_object_set_new(pb->out, "input_elements", known && items ? json_integer(total) : json_null());
	json_decref(items);
	json_decref(local);
	json_decref(tensors);
	json_decref(params);
}

static void
read_init(struct problem *pb)
{
	json_t *local = json_object(), *tensors = json_object(), *init = json_array();
	json_t *items = NULL, *item, *v;
	size_t from, to, i;
	char *list;

	if (find_body(&pb->ls, "def get_init_inputs", &from, &to) &&
	    (read_locals(pb, from, to, local, tensors), list = return_list(&pb->ls, from, to))) {
		items = split_items(list);
		free(list);
	}
	json_array_foreach(items, i, item) {
		v = eval_text(json_string_value(item), pb->scope, local, tensors);
		json_array_append_new(init, json_pack("{s:O, s:o}", "text", item, "value", v ? v : json_null()));
	}
	json_object_set_new(pb->out, "init", init);
	json_decref(items);
	json_decref(local);
	json_decref(tensors);
}

/* A string literal's contents with its white space folded. */
static char *
folded(const char *lit)
{
	struct geak_buf b = {0};
	const char *p = lit;
	char q;

	while (*p && *p != '\'' && *p != '"')
		p++;
	if (!*p)
		return NULL;
	q = *p;
	p += p[1] == q && p[2] == q ? 3 : 1;
	for (int space = 0; *p && *p != q && b.len < MAX_DESCRIPTION; p++) {
		if (isspace((unsigned char)*p)) {
			space = b.len > 0;
			continue;
		}
		if (space)
			geak_buf_puts(&b, " ");
		space = 0;
		geak_buf_append(&b, p, 1);
	}
	if (!b.len) {
		geak_buf_free(&b);
		return NULL;
	}
	return geak_buf_steal(&b);
}

static void
read_description(struct problem *pb)
{
	size_t from, to;
	char *d;

	if (!find_body(&pb->ls, "class Model", &from, &to) || from == to)
		return;
	const char *t = pb->ls.v[from].text;
	if ((*t == '"' || *t == '\'') && geak_py_skip_string(t) == t + strlen(t) && (d = folded(t))) {
		/* the sentences before the argument list */
		static const char *const cuts[] = {" Args:", " Parameters:", " Returns:", NULL};
		for (int i = 0; cuts[i]; i++) {
			char *at = strstr(d, cuts[i]);
			if (at && at > d)
				*at = '\0';
		}
		json_object_set_new(pb->out, "description", json_string(d));
		free(d);
	}
}

/* "torch.nn.functional.relu" -> "F.relu", "torch.nn.Conv2d" -> "nn.Conv2d". */
static char *
operator_name(const char *chain, size_t n)
{
	static const char *const skip[] = {
		"Module", "Parameter", "ModuleList", "ModuleDict", "Sequential", "Tensor",
		"device", "no_grad", "Size", "manual_seed", "tensor", "empty", "zeros",
		"ones", "empty_like", "zeros_like", "ones_like", NULL,
	};
	const char *last;
	char *s;

	if (n > 19 && strncmp(chain, "torch.nn.functional.", 20) == 0)
		s = geak_xasprintf("F.%.*s", (int)(n - 20), chain + 20);
	else if (n > 9 && strncmp(chain, "torch.nn.", 9) == 0)
		s = geak_xasprintf("nn.%.*s", (int)(n - 9), chain + 9);
	else if ((n > 3 && strncmp(chain, "nn.", 3) == 0) || (n > 2 && strncmp(chain, "F.", 2) == 0) ||
	    (n > 6 && strncmp(chain, "torch.", 6) == 0))
		s = geak_xstrndup(chain, n);
	else
		return NULL;
	last = strrchr(s, '.') + 1;
	for (int i = 0; skip[i]; i++)
		if (strcmp(last, skip[i]) == 0) {
			free(s);
			return NULL;
		}
	return s;
}

static void
add_operator(json_t *ops, char *name)
{
	json_t *v;
	size_t i;

	json_array_foreach(ops, i, v)
		if (strcmp(json_string_value(v), name) == 0) {
			free(name);
			return;
		}
	if (json_array_size(ops) < MAX_OPERATORS)
		json_array_append_new(ops, json_string(name));
	free(name);
}

/* Tensor methods that are operators rather than bookkeeping. */
static int
is_tensor_op(const char *m, size_t n)
{
	static const char *const ops[] = {
		"sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod",
		"cumsum", "cumprod", "softmax", "log_softmax", "matmul", "mm", "bmm", "norm",
		"clamp", "abs", "exp", "log", "sqrt", "rsqrt", "pow", "tanh", "sigmoid", "relu",
		"var", "std", "logsumexp", "masked_fill", "flip", "tril", "triu", "diag", NULL,
	};

	for (int i = 0; ops[i]; i++)
		if (strlen(ops[i]) == n && strncmp(ops[i], m, n) == 0)
			return 1;
	return 0;
}

/* The operators called anywhere but in the get_ functions. */
static void
read_operators(struct problem *pb)
{
	json_t *ops = json_array();
	size_t gf = 0, gt = 0, if_ = 0, it = 0;

	find_body(&pb->ls, "def get_inputs", &gf, &gt);
	find_body(&pb->ls, "def get_init_inputs", &if_, &it);
	for (size_t i = 0; i < pb->ls.n; i++) {
		if ((i + 1 >= gf && i < gt) || (i + 1 >= if_ && i < it))
			continue;
		const char *p = pb->ls.v[i].text;
		while (*p) {
			if (*p == '\'' || *p == '"') {
				p = geak_py_skip_string(p);
				continue;
			}
			if (!is_ident_start((unsigned char)*p)) {
				p++;
				continue;
			}
			const char *start = p;
			int after_dot = start > pb->ls.v[i].text && start[-1] == '.';
			while (is_ident_char((unsigned char)*p) || (*p == '.' && is_ident_start((unsigned char)p[1])))
				p++;
			size_t n = (size_t)(p - start);
			char *name;
			if (*skip_ws(p) != '(')
				continue;
			if (!after_dot && (name = operator_name(start, n))) {
				add_operator(ops, name);
			} else {
				/* x.sum(...): the last part of the chain */
				const char *dot = memrchr(start, '.', n);
				const char *m = dot ? dot + 1 : start;
				size_t mn = (size_t)(p - m);
				if ((dot || after_dot) && is_tensor_op(m, mn))
					add_operator(ops, geak_xasprintf("Tensor.%.*s", (int)mn, m));
			}
		}
	}
	json_object_set_new(pb->out, "operators", ops);
}

json_t *
geak_kbprob_read(const char *src)
{
	struct problem pb = {{0}, json_object(), json_object()};

	if (!pb.scope || !pb.out)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	split_lines(src, &pb.ls);
	read_constants(&pb);
	read_description(&pb);
	read_operators(&pb);
	read_inputs(&pb);
	read_init(&pb);
	static const char *const defs[][2] = {
		{"__init__", "init_signature"}, {"forward", "forward_signature"},
	};
	for (size_t i = 0; i < 2; i++) {
		char *sig = model_def(&pb.ls, defs[i][0]);
		if (sig)
			json_object_set_new(pb.out, defs[i][1], json_string(sig));
		free(sig);
	}
	free_lines(&pb.ls);
	json_decref(pb.scope);
	return pb.out;
}
