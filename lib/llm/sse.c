/* sse.c: server-sent events, one byte at a time if need be. */
#include <string.h>

#include "llm/sse.h"

void
geak_sse_init(struct geak_sse *p, geak_sse_fn *fn, void *ctx)
{
	memset(p, 0, sizeof *p);
	p->fn = fn;
	p->ctx = ctx;
}

void
geak_sse_free(struct geak_sse *p)
{
	geak_buf_free(&p->line);
	geak_buf_free(&p->event);
	geak_buf_free(&p->data);
}

static void
reset_event(struct geak_sse *p)
{
	geak_buf_reset(&p->event);
	geak_buf_reset(&p->data);
	p->has_data = 0;
}

static int
dispatch(struct geak_sse *p)
{
	int rc = 0;

	/* An event with no data field is not dispatched (the SSE rules). */
	if (p->has_data) {
		const char *name = p->event.len ? p->event.data : "message";
		rc = p->fn(name, p->data.data ? p->data.data : "", p->data.len, p->ctx);
	}
	reset_event(p);
	return rc;
}

static void
field(struct geak_sse *p, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	size_t nlen = colon ? (size_t)(colon - line) : len;
	const char *val = colon ? colon + 1 : line + len;
	size_t vlen = len - (size_t)(val - line);

	if (vlen && *val == ' ')
		val++, vlen--;
	if (nlen == 4 && !memcmp(line, "data", 4)) {
		if (p->has_data)
			geak_buf_append(&p->data, "\n", 1);
		geak_buf_append(&p->data, val, vlen);
		p->has_data = 1;
	} else if (nlen == 5 && !memcmp(line, "event", 5)) {
		geak_buf_reset(&p->event);
		geak_buf_append(&p->event, val, vlen);
	}
}

/* One complete line (without its end). */
static int
line_done(struct geak_sse *p)
{
	const char *s = p->line.data ? p->line.data : "";
	size_t n = p->line.len;
	int rc = 0;

	if (n == 0)
		rc = dispatch(p);
	else if (s[0] != ':')
		field(p, s, n);
	geak_buf_reset(&p->line);
	return rc;
}

int
geak_sse_feed(struct geak_sse *p, const char *chunk, size_t len)
{
	size_t i = 0;
	int rc;

	if (!p->bom_done && len) {
		/* A UTF-8 BOM may open the stream; it can arrive split. */
		static const char bom[] = "\xEF\xBB\xBF";
		while (i < len && p->line.len < 3 && (unsigned char)chunk[i] ==
		    (unsigned char)bom[p->line.len] && !p->after_cr) {
			geak_buf_append(&p->line, chunk + i, 1);
			i++;
		}
		if (p->line.len == 3) {
			geak_buf_reset(&p->line);
			p->bom_done = 1;
		} else if (i < len) {
			p->bom_done = 1; /* not a BOM: the bytes are line text */
		}
	}
	for (; i < len; i++) {
		char c = chunk[i];

		if (p->after_cr) {
			p->after_cr = 0;
			if (c == '\n')
				continue;
		}
		if (c == '\r' || c == '\n') {
			p->after_cr = c == '\r';
			if ((rc = line_done(p)))
				return rc;
			continue;
		}
		geak_buf_append(&p->line, &c, 1);
	}
	return 0;
}

int
geak_sse_finish(struct geak_sse *p)
{
	int pending = p->line.len > 0 || p->has_data || p->event.len > 0;

	geak_buf_reset(&p->line);
	reset_event(p);
	return pending;
}
