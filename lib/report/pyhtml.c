/* pyhtml.c: a lexer of Python's tokens just good enough to colour them:
 * strings (with prefixes, triple quotes and escapes), comments, numbers,
 * names and decorators; everything else is copied, escaped. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "report/pyhtml.h"
#include "report/svgplot.h"

static const char *const keywords[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
	"continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
	"if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
	"return", "try", "while", "with", "yield",
};

static int
is_keyword(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
		if (strlen(keywords[i]) == n && !strncmp(keywords[i], s, n))
			return 1;
	return 0;
}

static int
name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

static void
span(struct geak_buf *b, const char *cls, const char *s, size_t n)
{
	char *text = geak_xstrndup(s, n);

	geak_buf_printf(b, "<span class=\"%s\">", cls);
	geak_svg_escape(b, text);
	geak_buf_puts(b, "</span>");
	free(text);
}

/* Length of the string literal at s (its quote at s[q]), to its
 * closing quote or the end of the text. */
static size_t
string_len(const char *s, size_t q)
{
	char quote = s[q];
	int triple = s[q + 1] == quote && s[q + 2] == quote;
	size_t i = q + (triple ? 3 : 1);

	while (s[i]) {
		if (s[i] == '\\' && s[i + 1]) {
			i += 2;
			continue;
		}
		if (!triple && s[i] == '\n')
			return i;
		if (s[i] == quote && (!triple || (s[i + 1] == quote && s[i + 2] == quote)))
			return i + (triple ? 3 : 1);
		i++;
	}
	return i;
}

/* How many letters of a string prefix (r, b, f, u, rb, ...) start s
 * before a quote; 0 where s starts no string. */
static size_t
prefix_len(const char *s)
{
	size_t n = 0;

	while (n < 2 && strchr("rRbBuUfF", s[n]) && s[n])
		n++;
	return s[n] == '"' || s[n] == '\'' ? n + 1 : 0;
}

void
geak_html_python(struct geak_buf *b, const char *src)
{
	const char *s = src ? src : "";
	int line_start = 1, defines = 0;

	while (*s) {
		size_t n = 0, p;
		if (*s == '#') {
			n = strcspn(s, "\n");
			span(b, "cm", s, n);
		} else if ((p = prefix_len(s))) { /* a name never ends just before it */
			n = string_len(s, p - 1);
			span(b, "st", s, n);
		} else if (*s == '@' && line_start) {
			for (n = 1; name_char(s[n]) || s[n] == '.'; n++)
				;
			span(b, "de", s, n);
		} else if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
			for (n = 1; name_char(s[n]) || s[n] == '.' ||
			    ((s[n] == '+' || s[n] == '-') && (s[n - 1] == 'e' || s[n - 1] == 'E')); n++)
				;
			span(b, "nu", s, n);
		} else if (name_char(*s)) {
			for (n = 1; name_char(s[n]); n++)
				;
			if (is_keyword(s, n)) {
				span(b, "kw", s, n);
				defines = (n == 3 && !strncmp(s, "def", 3)) || (n == 5 && !strncmp(s, "class", 5));
				line_start = 0;
				s += n;
				continue;
			}
			if (defines)
				span(b, "fn", s, n);
			else
				geak_buf_append(b, s, n);
		} else {
			n = 1;
			geak_svg_escape(b, (char[]){ *s, 0 });
		}
		if (!isspace((unsigned char)*s))
			defines = 0;
		line_start = *s == '\n' || (line_start && (*s == ' ' || *s == '\t'));
		s += n;
	}
}
