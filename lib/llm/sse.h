/* sse.h: a server-sent events parser fed arbitrary byte chunks.
 *
 * Lines end in CRLF, LF or CR (a CR at the end of one chunk and an LF at
 * the start of the next are one line end); a line starting with ':' is a
 * comment; "field: value" has one leading space of the value stripped;
 * several data lines join with '\n'; a blank line dispatches the event.
 * Fields other than event and data are ignored. */
#ifndef GEAK_SSE_H
#define GEAK_SSE_H

#include <stddef.h>

#include "util.h"

/* Called per dispatched event; event is "message" when none was named.
 * Return 0 to go on, non-zero to stop: geak_sse_feed then returns it. */
typedef int geak_sse_fn(const char *event, const char *data, size_t len, void *ctx);

struct geak_sse {
	struct geak_buf line;  /* the line being read */
	struct geak_buf event; /* event name of the event being read */
	struct geak_buf data;  /* its data lines */
	int has_data;          /* a data field was seen */
	int after_cr;          /* the last byte was CR: skip one LF */
	int bom_done;          /* the leading BOM, if any, is handled */
	geak_sse_fn *fn;
	void *ctx;
};

void geak_sse_init(struct geak_sse *p, geak_sse_fn *fn, void *ctx);
/* Feed a chunk; returns 0, or the callback's non-zero result. */
int geak_sse_feed(struct geak_sse *p, const char *chunk, size_t len);
/* End of stream: a pending event without its blank line is dropped, as
 * the SSE rules say.  Returns 1 when bytes of an incomplete event were
 * pending (a cut stream), 0 otherwise. */
int geak_sse_finish(struct geak_sse *p);
void geak_sse_free(struct geak_sse *p);

#endif
