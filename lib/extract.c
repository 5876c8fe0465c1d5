/* extract.c: find the code in a model's answer, forgiving the usual
 * quirks: the JSON contract inside a ```json fence or followed by prose,
 * raw newlines inside JSON strings, chat-template end tokens, a leading
 * <think> block, a fenced block, or bare code. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "extract.h"
#include "util.h"

static const char *const debris[] = {
	"<|im_end|>", "<|im_start|>assistant", "<|im_start|>", "<|endoftext|>",
	"<|eot_id|>", "<|end|>", "<end_of_turn>", "</s>", NULL,
};

static void
remove_all(char *s, const char *what)
{
	size_t n = strlen(what);
	char *at;

	while ((at = strstr(s, what)))
		memmove(at, at + n, strlen(at + n) + 1);
}

/* A copy of the answer without template tokens and reasoning blocks. */
static char *
clean(const char *reply)
{
	char *s = geak_xstrdup(reply), *open, *close;
	size_t i;

	for (i = 0; debris[i]; i++)
		remove_all(s, debris[i]);
	while ((open = strstr(s, "<think>")) && (close = strstr(open, "</think>")))
		memmove(open, close + 8, strlen(close + 8) + 1);
	return s;
}

static const char *
skip_space(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

static int
blank(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* JSON strings may not hold raw control characters; models write them
 * anyway.  Escape them inside string literals. */
static char *
escape_controls(const char *s, size_t n)
{
	struct geak_buf b = {0};
	int in_str = 0, esc = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!in_str) {
			in_str = c == '"';
		} else if (esc) {
			esc = 0;
		} else if (c == '\\') {
			esc = 1;
		} else if (c == '"') {
			in_str = 0;
		} else if (c == '\n' || c == '\r' || c == '\t') {
			geak_buf_puts(&b, c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t");
			continue;
		}
		geak_buf_append(&b, &c, 1);
	}
	return b.data ? geak_buf_steal(&b) : geak_xstrdup("");
}

static int
blank_n(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	return n == 0;
}

/* Strip a ``` fence that wraps the whole of s, if any. */
static char *
unfence(const char *s)
{
	const char *p = s, *nl, *end;

	while (isspace((unsigned char)*p))
		p++;
	if (strncmp(p, "```", 3) || !(nl = strchr(p, '\n')))
		return geak_xstrdup(s);
	end = s + strlen(s);
	while (end > nl && isspace((unsigned char)end[-1]))
		end--;
	if (end - nl >= 3 && !strncmp(end - 3, "```", 3))
		end -= 3;
	return geak_xstrndup(nl + 1, (size_t)(end - nl - 1));
}

static int
take_json(json_t *obj, struct geak_extract *ex)
{
	json_t *code = json_object_get(obj, "code");
	json_t *thought = json_object_get(obj, "thought");

	if (!json_is_string(thought))
		thought = json_object_get(obj, "strategy");
	if (json_is_string(thought))
		ex->thought = geak_xstrdup(json_string_value(thought));
	if (!json_is_string(code) || blank(json_string_value(code))) {
		ex->why = "the JSON answer has no code (or an empty one)";
		return -1;
	}
	ex->code = unfence(json_string_value(code));
	ex->how = "json";
	return 0;
}

/* Parse a JSON object that starts at s, ignoring what follows it. */
static json_t *
load_object(const char *s)
{
	json_t *j = json_loads(s, JSON_DISABLE_EOF_CHECK, NULL);
	char *fixed;

	if (json_is_object(j))
		return j;
	json_decref(j);
	fixed = escape_controls(s, strlen(s));
	j = json_loads(fixed, JSON_DISABLE_EOF_CHECK, NULL);
	free(fixed);
	if (json_is_object(j))
		return j;
	json_decref(j);
	return NULL;
}

/* The JSON contract: the first object that has a "code" key. */
static int
from_json(const char *s, struct geak_extract *ex)
{
	const char *p = s;

	while ((p = strchr(p, '{'))) {
		const char *q = p + 1;
		while (isspace((unsigned char)*q))
			q++;
		if (*q == '"') {
			json_t *j = load_object(p);
			if (j && json_object_get(j, "code")) {
				int rc = take_json(j, ex);
				json_decref(j);
				return rc;
			}
			json_decref(j);
		}
		p++;
	}
	return 1; /* not found: try the other forms */
}

struct fence {
	const char *body;
	size_t len;
	char lang[16];
};

/* The next ``` block from p; 0 when there is none.  An unterminated
 * last block (an answer cut by the token limit) runs to the end. */
static int
next_fence(const char *p, struct fence *f)
{
	const char *open = strstr(p, "```"), *nl, *close;
	size_t n = 0;

	if (!open)
		return 0;
	open += 3;
	while (open[n] && !isspace((unsigned char)open[n]) && n < sizeof f->lang - 1)
		n++;
	memcpy(f->lang, open, n);
	f->lang[n] = '\0';
	if (!(nl = strchr(open, '\n')))
		return 0;
	f->body = nl + 1;
	close = strstr(f->body, "```");
	f->len = close ? (size_t)(close - f->body) : strlen(f->body);
	return 1;
}

static int
code_lang(const char *lang)
{
	static const char *const ok[] = {"", "python", "py", "python3", "triton", NULL};
	int i;

	for (i = 0; ok[i]; i++)
		if (!strcasecmp(lang, ok[i]))
			return 1;
	return 0;
}

/* The longest fenced block of code, or a ```json one with the contract. */
static int
from_fences(const char *s, struct geak_extract *ex)
{
	struct fence f, best = {0};
	const char *p = s;

	while (next_fence(p, &f)) {
		if (!strcasecmp(f.lang, "json")) {
			/* The object may itself hold ``` in its code: parse from
			 * the fence's start, not up to the next ```. */
			int rc = from_json(f.body, ex);
			if (rc <= 0)
				return rc;
		} else if (code_lang(f.lang) && f.len > best.len) {
			best = f;
		}
		p = f.body + f.len + (f.body[f.len] ? 3 : 0);
	}
	if (!best.body || blank_n(best.body, best.len))
		return 1;
	ex->code = geak_xstrndup(best.body, best.len);
	ex->how = "fence";
	return 0;
}

/* Bare code: the answer is Python when a line starts like Python. */
static int
looks_like_python(const char *s)
{
	static const char *const starts[] = {"import ", "from ", "def ", "@triton", "class ", NULL};
	const char *line = s;
	int i;

	while (line && *line) {
		while (*line == ' ' || *line == '\t')
			line++;
		for (i = 0; starts[i]; i++)
			if (!strncmp(line, starts[i], strlen(starts[i])))
				return 1;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 0;
}

int
geak_extract_code(const char *reply, struct geak_extract *ex)
{
	char *s;
	int rc;

	memset(ex, 0, sizeof *ex);
	if (!reply || blank(reply)) {
		ex->why = "the answer is empty";
		return -1;
	}
	s = clean(reply);
	/* An answer that opens with '{' is the JSON contract, whatever
	 * fences its code string holds; otherwise fences come first. */
	rc = *skip_space(s) == '{' ? from_json(s, ex) : 1;
	if (rc > 0)
		rc = from_fences(s, ex);
	if (rc > 0)
		rc = from_json(s, ex);
	if (rc > 0 && looks_like_python(s)) {
		ex->code = geak_xstrdup(s);
		ex->how = "raw";
		rc = 0;
	}
	if (rc > 0)
		ex->why = "no code in the answer: no JSON \"code\", no fenced block, no Python";
	free(s);
	return rc == 0 ? 0 : -1;
}

void
geak_extract_free(struct geak_extract *ex)
{
	free(ex->code);
	free(ex->thought);
	memset(ex, 0, sizeof *ex);
}
