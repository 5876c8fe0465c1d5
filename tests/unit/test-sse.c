/* Unit tests of the SSE parser (lib/llm/sse.c): every stream is fed whole,
 * in 1-byte chunks and split at every position, and must give the same
 * events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "llm/sse.h"

/* The events seen, as "name=data|" in one string. */
struct seen {
	struct geak_buf log;
	int stop_after; /* stop after this many events; 0: never */
	int count;
};

static int
collect(const char *event, const char *data, size_t len, void *ctx)
{
	struct seen *s = ctx;

	assert_int_equal(strlen(data), len); /* data is NUL-terminated */
	geak_buf_printf(&s->log, "%s=%.*s|", event, (int)len, data);
	s->count++;
	return s->stop_after && s->count >= s->stop_after ? 7 : 0;
}

/* Feed in pieces of size step (0: whole), return the log. */
static char *
parse(const char *stream, size_t len, size_t step, int *pending)
{
	struct seen s = {0};
	struct geak_sse p;
	size_t i;

	geak_sse_init(&p, collect, &s);
	if (!step)
		assert_int_equal(geak_sse_feed(&p, stream, len), 0);
	for (i = 0; step && i < len; i += step)
		assert_int_equal(geak_sse_feed(&p, stream + i, len - i < step ? len - i : step), 0);
	*pending = geak_sse_finish(&p);
	geak_sse_free(&p);
	return s.log.data ? geak_buf_steal(&s.log) : geak_xstrdup("");
}

/* The log must not depend on how the bytes were chunked. */
static void
expect(const char *stream, const char *want, int want_pending)
{
	size_t len = strlen(stream), cut;
	int pending;
	char *got;

	got = parse(stream, len, 0, &pending);
	assert_string_equal(got, want);
	assert_int_equal(pending, want_pending);
	free(got);
	got = parse(stream, len, 1, &pending);
	assert_string_equal(got, want);
	assert_int_equal(pending, want_pending);
	free(got);
	for (cut = 1; cut < len; cut++) {
		struct seen s = {0};
		struct geak_sse p;
		geak_sse_init(&p, collect, &s);
		geak_sse_feed(&p, stream, cut);
		geak_sse_feed(&p, stream + cut, len - cut);
		geak_sse_finish(&p);
		assert_string_equal(s.log.data ? s.log.data : "", want);
		geak_sse_free(&p);
		geak_buf_free(&s.log);
	}
}

static void
test_openai_stream(void **state)
{
	(void)state;
	expect("data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n",
	    "message={\"a\":1}|message={\"b\":2}|message=[DONE]|", 0);
}

static void
test_named_events(void **state)
{
	(void)state;
	expect("event: message_start\ndata: {}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n"
	    "event: message_stop\ndata: {}\n\n",
	    "message_start={}|ping={\"type\":\"ping\"}|message_stop={}|", 0);
}

static void
test_line_ends(void **state)
{
	(void)state;
	/* CRLF, CR alone and LF alone all end lines; CR LF is one end. */
	expect("data: a\r\n\r\ndata: b\r\rdata: c\n\n", "message=a|message=b|message=c|", 0);
}

static void
test_comments_and_fields(void **state)
{
	(void)state;
	expect(": keep-alive\n\nid: 7\nretry: 100\ndata: x\n\n", "message=x|", 0);
	/* No space after the colon, and only one space stripped. */
	expect("data:tight\n\ndata:  two\n\n", "message=tight|message= two|", 0);
	/* A field with no colon is a name with an empty value. */
	expect("data\n\n", "message=|", 0);
}

static void
test_multiline_data(void **state)
{
	(void)state;
	expect("data: one\ndata: two\ndata:\n\n", "message=one\ntwo\n|", 0);
}

static void
test_event_name_resets(void **state)
{
	(void)state;
	/* The name belongs to one event only; an event without data is
	 * not dispatched. */
	expect("event: error\ndata: {}\n\ndata: plain\n\nevent: lonely\n\ndata: z\n\n",
	    "error={}|message=plain|message=z|", 0);
}

static void
test_bom(void **state)
{
	(void)state;
	expect("\xEF\xBB\xBF" "data: bom\n\n", "message=bom|", 0);
}

static void
test_cut_stream(void **state)
{
	(void)state;
	/* No blank line after the last event: it is not dispatched, and
	 * finish reports the cut. */
	expect("data: whole\n\ndata: half", "message=whole|", 1);
	expect("data: whole\n\ndata: half\n", "message=whole|", 1);
	expect("data: whole\n\n", "message=whole|", 0);
}

static void
test_stop(void **state)
{
	struct seen s = {.stop_after = 1};
	struct geak_sse p;
	const char *stream = "data: 1\n\ndata: 2\n\n";

	(void)state;
	geak_sse_init(&p, collect, &s);
	assert_int_equal(geak_sse_feed(&p, stream, strlen(stream)), 7);
	assert_int_equal(s.count, 1);
	geak_sse_free(&p);
	geak_buf_free(&s.log);
}

static void
test_big_event(void **state)
{
	struct geak_buf b = {0};
	char *got, *want;
	int pending, i;

	(void)state;
	geak_buf_puts(&b, "data: ");
	for (i = 0; i < 100000; i++)
		geak_buf_puts(&b, "x");
	geak_buf_puts(&b, "\n\n");
	got = parse(b.data, b.len, 1, &pending);
	want = geak_xasprintf("message=%s|", b.data + 6);
	want[strlen(want) - 3] = '|';
	want[strlen(want) - 2] = '\0';
	assert_string_equal(got, want);
	free(got);
	free(want);
	geak_buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openai_stream),
		cmocka_unit_test(test_named_events),
		cmocka_unit_test(test_line_ends),
		cmocka_unit_test(test_comments_and_fields),
		cmocka_unit_test(test_multiline_data),
		cmocka_unit_test(test_event_name_resets),
		cmocka_unit_test(test_bom),
		cmocka_unit_test(test_cut_stream),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_big_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
