/* failtext.c: the part of an evaluation a prompt shows.
 *
 * geak-eval gives eval.message (the exception line, or the judge's
 * account of a mismatch) and eval.traceback (the frames in the
 * candidate's own code and the exception; for a Triton compile error its
 * message with the source line).  An older record has only the captured
 * stderr, whose last Python traceback stands in for it. */
#include <ctype.h>
#include <string.h>

#include "record.h"
#include "failtext.h"
#include "util.h"

#define MESSAGE_MAX 1000   /* bytes of the message shown */
#define LINE_MAX_SHOWN 400 /* bytes of one output line shown */
#define MISMATCH_LINES 8

/* The last Python traceback in text, or the whole text. */
static const char *
last_traceback(const char *text)
{
	const char *tb = NULL, *p = text;

	while ((p = strstr(p, "Traceback (most recent call last)")))
		tb = p++;
	return tb ? tb : text;
}

/* The end of s within max bytes, from a line start, marked when cut. */
static void
append_tail(struct geak_buf *b, const char *s, size_t max)
{
	size_t len = strlen(s);

	if (len > max) {
		const char *cut = s + len - max, *nl = strchr(cut, '\n');
		if (nl && nl[1])
			cut = nl + 1;
		geak_buf_printf(b, "[... %zu bytes cut ...]\n", (size_t)(cut - s));
		s = cut;
	}
	geak_buf_puts(b, s);
	if (b->len && b->data[b->len - 1] != '\n')
		geak_buf_puts(b, "\n");
}

/* Lines of the candidate's output that say what mismatched, a few. */
static void
append_mismatch_lines(struct geak_buf *b, const char *text, size_t max)
{
	static const char *const marks[] = {"mismatch", "Mismatch", "assert", "Assert",
	    "max abs", "Error", "error:", "differ", NULL};
	const char *line = text;
	size_t start = b->len;
	int kept = 0;

	while (*line && kept < MISMATCH_LINES && b->len - start < max) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		for (int i = 0; marks[i]; i++)
			if (memmem(line, n, marks[i], strlen(marks[i]))) {
				geak_buf_append(b, line, n < LINE_MAX_SHOWN ? n : LINE_MAX_SHOWN);
				geak_buf_puts(b, "\n");
				kept++;
				break;
			}
		line = nl ? nl + 1 : line + n;
	}
}

char *
geak_fail_text(json_t *eval, size_t max)
{
	struct geak_buf b = {0};
	const char *msg = geak_get_str(eval, "message");
	const char *tb = geak_get_str(eval, "traceback");
	const char *out = geak_get_str(eval, "stdout_tail");
	const char *err = geak_get_str(eval, "stderr_tail");

	if (!tb && err && *err)
		tb = last_traceback(err);
	/* The traceback ends in the exception: the message would say it twice. */
	if (msg && *msg && !(tb && strstr(tb, msg)))
		geak_buf_printf(&b, "%.*s\n", (int)(max < MESSAGE_MAX ? max : MESSAGE_MAX), msg);
	if (out && *out)
		append_mismatch_lines(&b, out, max / 4);
	if (tb && *tb && b.len < max)
		append_tail(&b, tb, max - b.len);
	while (b.len && isspace((unsigned char)b.data[b.len - 1]))
		b.data[--b.len] = '\0';
	if (!b.len || !max) {
		geak_buf_free(&b);
		return NULL;
	}
	geak_utf8_scrub(b.data); /* the cuts may split a character */
	return geak_buf_steal(&b);
}
