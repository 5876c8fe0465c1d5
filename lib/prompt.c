/* prompt.c: a small logic-less template language for prompts (the syntax
 * is in prompt.h).  A template is rendered in two steps: lines that hold
 * nothing but a section, comment or include tag lose their indentation
 * and line end (so sections do not leave blank lines behind), then tags
 * are expanded against a stack of JSON values. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prompt.h"
#include "util.h"

#define MAX_DEPTH 32   /* nested sections */
#define MAX_INCLUDE 8  /* nested {{> file}} */

struct frame {
	json_t *val;
	long index; /* position in the array being repeated, or -1 */
};

struct render {
	struct frame stack[MAX_DEPTH];
	int depth;
	int includes;
	const char *dir;
	struct geak_buf out;
	char *err;
};

/* A tag: the text between {{ and }}, trimmed, with its sigil apart. */
struct tag {
	const char *start, *end; /* the whole {{...}} */
	char sigil;              /* '#', '^', '/', '!', '>', or 0 */
	const char *name;
	size_t nlen;
};

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Find the next tag at or after p; 0 when there is none. */
static int
next_tag(const char *p, const char *end, struct tag *t)
{
	const char *open, *close, *s, *e;

	for (open = p; open + 1 < end; open++)
		if (open[0] == '{' && open[1] == '{')
			break;
	if (open + 1 >= end)
		return 0;
	for (close = open + 2; close + 1 < end; close++)
		if (close[0] == '}' && close[1] == '}')
			break;
	if (close + 1 >= end)
		return 0;
	s = open + 2;
	e = close;
	while (s < e && is_blank(*s))
		s++;
	t->sigil = 0;
	if (s < e && strchr("#^/!>", *s))
		t->sigil = *s++;
	while (s < e && is_blank(*s))
		s++;
	while (e > s && is_blank(e[-1]))
		e--;
	t->start = open;
	t->end = close + 2;
	t->name = s;
	t->nlen = (size_t)(e - s);
	return 1;
}

/* Drop the indentation and line end of lines that hold only a
 * section, comment or include tag. */
static char *
strip_standalone(const char *tmpl)
{
	struct geak_buf b = {0};
	const char *line = tmpl;

	while (*line) {
		const char *nl = strchr(line, '\n');
		const char *lend = nl ? nl : line + strlen(line);
		const char *s = line, *e = lend, *close;
		struct tag t;

		while (s < e && is_blank(*s))
			s++;
		if (!strncmp(s, "{{!", 3) && (close = strstr(s, "}}")) && close > lend) {
			/* A comment over several lines, alone on them: drop it. */
			const char *after = close + 2;
			while (is_blank(*after))
				after++;
			if (*after == '\n' || !*after) {
				line = *after ? after + 1 : after;
				continue;
			}
		}
		while (e > s && is_blank(e[-1]))
			e--;
		if (e - s >= 5 && next_tag(s, e, &t) && t.start == s && t.end == e && t.sigil)
			geak_buf_append(&b, s, (size_t)(e - s));
		else
			geak_buf_append(&b, line, (size_t)(lend - line) + (nl ? 1 : 0));
		line = nl ? nl + 1 : lend;
	}
	return b.data ? geak_buf_steal(&b) : geak_xstrdup("");
}

static int
name_is(const struct tag *t, const char *name, size_t nlen)
{
	return t->nlen == nlen && !memcmp(t->name, name, nlen);
}

static json_t *
lookup_in(json_t *obj, const char *name, size_t nlen)
{
	const char *dot;
	char key[256];

	while (json_is_object(obj) && nlen) {
		dot = memchr(name, '.', nlen);
		size_t klen = dot ? (size_t)(dot - name) : nlen;
		if (klen >= sizeof key)
			return NULL;
		memcpy(key, name, klen);
		key[klen] = '\0';
		obj = json_object_get(obj, key);
		if (!dot)
			return obj;
		nlen -= klen + 1;
		name = dot + 1;
	}
	return NULL;
}

/* The value of a name, innermost frame first. */
static json_t *
lookup(struct render *r, const char *name, size_t nlen, long *index)
{
	int i;

	*index = -1;
	if (nlen == 1 && name[0] == '.')
		return r->depth ? r->stack[r->depth - 1].val : NULL;
	if (nlen && name[0] == '@') {
		for (i = r->depth - 1; i >= 0; i--)
			if (r->stack[i].index >= 0) {
				*index = r->stack[i].index;
				break;
			}
		return NULL;
	}
	for (i = r->depth - 1; i >= 0; i--) {
		json_t *v = lookup_in(r->stack[i].val, name, nlen);
		if (v)
			return v;
	}
	return NULL;
}

static int
truthy(json_t *v)
{
	if (!v)
		return 0;
	switch (json_typeof(v)) {
	case JSON_STRING: return json_string_length(v) > 0;
	case JSON_INTEGER: return json_integer_value(v) != 0;
	case JSON_REAL: return json_real_value(v) != 0;
	case JSON_TRUE: return 1;
	case JSON_ARRAY: return json_array_size(v) > 0;
	case JSON_OBJECT: return 1;
	default: return 0;
	}
}

static void
put_value(struct render *r, const char *name, size_t nlen)
{
	long index;
	json_t *v = lookup(r, name, nlen, &index);
	char *dump;

	if (nlen && name[0] == '@') {
		if (index >= 0)
			geak_buf_printf(&r->out, "%ld", index +
			    (nlen == 7 && !memcmp(name, "@number", 7)));
		return;
	}
	if (!v)
		return;
	switch (json_typeof(v)) {
	case JSON_STRING:
		geak_buf_append(&r->out, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		geak_buf_printf(&r->out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		geak_buf_printf(&r->out, "%.6g", json_real_value(v));
		break;
	case JSON_TRUE: geak_buf_puts(&r->out, "true"); break;
	case JSON_FALSE: geak_buf_puts(&r->out, "false"); break;
	case JSON_NULL: break;
	default:
		if ((dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY))) {
			geak_buf_puts(&r->out, dump);
			free(dump);
		}
	}
}

static int render_text(struct render *r, const char *p, const char *end);

static int
fail(struct render *r, const char *fmt, const char *name, size_t nlen)
{
	if (!r->err)
		r->err = geak_xasprintf(fmt, (int)nlen, name);
	return -1;
}

/* The tag that closes the section opened by t, searching from p. */
static int
find_close(const char *p, const char *end, const struct tag *open, struct tag *close)
{
	int depth = 1;

	while (next_tag(p, end, close)) {
		if (name_is(close, open->name, open->nlen)) {
			if (close->sigil == '#' || close->sigil == '^')
				depth++;
			else if (close->sigil == '/' && --depth == 0)
				return 1;
		}
		p = close->end;
	}
	return 0;
}

static int
push(struct render *r, json_t *val, long index)
{
	if (r->depth == MAX_DEPTH)
		return fail(r, "sections nested too deep at '%.*s'", "", 0);
	r->stack[r->depth].val = val;
	r->stack[r->depth].index = index;
	r->depth++;
	return 0;
}

static int
section(struct render *r, const struct tag *t, const char *in, const char *in_end)
{
	long index;
	json_t *v = lookup(r, t->name, t->nlen, &index);
	int rc = 0;

	if (t->sigil == '^')
		return truthy(v) ? 0 : render_text(r, in, in_end);
	if (!truthy(v))
		return 0;
	if (json_is_array(v)) {
		size_t i;
		json_t *el;
		json_array_foreach(v, i, el) {
			if (push(r, el, (long)i) < 0)
				return -1;
			rc = render_text(r, in, in_end);
			r->depth--;
			if (rc)
				return rc;
		}
		return 0;
	}
	if (push(r, v, -1) < 0)
		return -1;
	rc = render_text(r, in, in_end);
	r->depth--;
	return rc;
}

static int
include(struct render *r, const struct tag *t)
{
	char *name = geak_xstrndup(t->name, t->nlen), *path, *text, *clean;
	int rc;

	if (r->includes == MAX_INCLUDE) {
		free(name);
		return fail(r, "{{> %.*s}}: includes nested too deep", t->name, t->nlen);
	}
	path = geak_prompt_path(r->dir, name);
	text = geak_read_file(path, NULL);
	free(name);
	if (!text) {
		if (!r->err)
			r->err = geak_xasprintf("{{> %.*s}}: %s: cannot read it", (int)t->nlen,
			    t->name, path);
		free(path);
		return -1;
	}
	free(path);
	clean = strip_standalone(text);
	free(text);
	r->includes++;
	rc = render_text(r, clean, clean + strlen(clean));
	r->includes--;
	free(clean);
	return rc;
}

static int
render_text(struct render *r, const char *p, const char *end)
{
	struct tag t, close;

	while (p < end) {
		if (!next_tag(p, end, &t)) {
			geak_buf_append(&r->out, p, (size_t)(end - p));
			break;
		}
		geak_buf_append(&r->out, p, (size_t)(t.start - p));
		p = t.end;
		switch (t.sigil) {
		case '!':
			break;
		case '#':
		case '^':
			if (!find_close(p, end, &t, &close))
				return fail(r, "{{#%.*s}} is never closed", t.name, t.nlen);
			if (section(r, &t, p, close.start) < 0)
				return -1;
			p = close.end;
			break;
		case '/':
			return fail(r, "{{/%.*s}} closes no section", t.name, t.nlen);
		case '>':
			if (include(r, &t) < 0)
				return -1;
			break;
		default:
			put_value(r, t.name, t.nlen);
		}
	}
	return 0;
}

char *
geak_prompt_path(const char *dir, const char *name)
{
	const char *env = getenv("GEAK_PROMPTS");
	char *p;

	if (dir && *dir) {
		p = geak_xasprintf("%s/%s", dir, name);
		if (access(p, R_OK) == 0)
			return p;
		free(p);
	}
	return geak_share_path(env, "prompts", name);
}

char *
geak_prompt_render(const char *tmpl, json_t *vars, const char *dir, char **err)
{
	struct render r;
	char *clean = strip_standalone(tmpl);
	int rc;

	memset(&r, 0, sizeof r);
	r.dir = dir;
	r.stack[0].val = vars;
	r.stack[0].index = -1;
	r.depth = 1;
	rc = render_text(&r, clean, clean + strlen(clean));
	free(clean);
	if (rc < 0) {
		geak_buf_free(&r.out);
		*err = r.err;
		return NULL;
	}
	return r.out.data ? geak_buf_steal(&r.out) : geak_xstrdup("");
}

char *
geak_prompt_render_file(const char *dir, const char *name, json_t *vars, char **err)
{
	char *path = geak_prompt_path(dir, name);
	char *text = geak_read_file(path, NULL), *out;

	if (!text) {
		*err = geak_xasprintf("%s: cannot read the template", path);
		free(path);
		return NULL;
	}
	out = geak_prompt_render(text, vars, dir, err);
	if (!out) {
		char *msg = geak_xasprintf("%s: %s", path, *err);
		free(*err);
		*err = msg;
	}
	free(text);
	free(path);
	return out;
}
