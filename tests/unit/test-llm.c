/* Unit tests of the LLM client's parts: retry policy and Retry-After,
 * the price table, provider error bodies, stream events of both API
 * families, and the exchange key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <curl/curl.h>

#include "llm/llmint.h"

static void
test_retryable(void **state)
{
	static const long yes[] = {408, 409, 429, 500, 502, 503, 504, 529};
	static const long no[] = {200, 400, 401, 403, 404, 422, 413};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof yes / sizeof *yes; i++)
		assert_true(geak_llm_retryable_status(yes[i]));
	for (i = 0; i < sizeof no / sizeof *no; i++)
		assert_false(geak_llm_retryable_status(no[i]));
}

static void
test_retry_after(void **state)
{
	char date[64];
	time_t t = time(NULL) + 30;
	double d;
	int i;

	(void)state;
	/* retry-after-ms first, then Retry-After seconds, both clamped. */
	assert_float_equal(geak_llm_retry_delay(2, "250", "9", 60), 0.25, 1e-9);
	assert_float_equal(geak_llm_retry_delay(2, NULL, "7", 60), 7, 1e-9);
	assert_float_equal(geak_llm_retry_delay(2, NULL, "7200", 60), 60, 1e-9);
	assert_float_equal(geak_llm_retry_delay(2, "0", NULL, 60), 0, 1e-9);
	/* An HTTP date: in the future, and in the past (never negative). */
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&t));
	d = geak_llm_retry_delay(2, NULL, date, 60);
	assert_true(d > 27 && d <= 30);
	assert_float_equal(geak_llm_retry_delay(2, NULL, "Wed, 21 Oct 2015 07:28:00 GMT", 60),
	    0, 1e-9);
	/* Garbage, or a negative delay: back-off. */
	d = geak_llm_retry_delay(2, "soon", "later", 60);
	assert_true(d > 0.3 && d <= 0.5);
	d = geak_llm_retry_delay(2, "-5", NULL, 60);
	assert_true(d > 0.3 && d <= 0.5);
	/* Back-off doubles, with at most a quarter of jitter, up to the cap. */
	for (i = 0; i < 50; i++) {
		d = geak_llm_backoff(4, 60);
		assert_true(d >= 1.5 && d <= 2.0);
		d = geak_llm_backoff(20, 8);
		assert_true(d >= 6 && d <= 8);
	}
}

static void
test_prices(void **state)
{
	char path[] = "/tmp/geak-unit-pricesXXXXXX";
	const char table[] = "# comment\n\nopenai\tgpt-4.1-mini*\t0.4\t0.1\t1.6\n"
	    "openai\tgpt-4.1*\t2\t0.5\t8\n*\tlocal-*\t0\t0\t0\n";
	struct geak_llm_price p;
	struct geak_llm_usage u = {1000000, 500000, 200000, 0};
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(geak_write_all(fd, table, sizeof table - 1), 0);
	close(fd);
	assert_int_equal(geak_llm_price_load(path, "openai", "gpt-4.1-2025", &p), 0);
	assert_true(p.known);
	/* 800k fresh input at 2, 200k cached at 0.5, 500k output at 8. */
	assert_float_equal(geak_llm_cost(&p, &u), 1.6 + 0.1 + 4.0, 1e-9);
	assert_int_equal(geak_llm_price_load(path, "openai", "gpt-4.1-mini", &p), 0);
	assert_float_equal(p.output, 1.6, 1e-9);
	assert_int_equal(geak_llm_price_load(path, "anthropic", "local-llama", &p), 0);
	assert_true(p.known);
	assert_int_equal(geak_llm_price_load(path, "anthropic", "gpt-4.1", &p), 0);
	assert_false(p.known);
	assert_float_equal(geak_llm_cost(&p, &u), 0, 1e-9);
	unlink(path);
	assert_int_equal(geak_llm_price_load(path, "openai", "x", &p), -1);
}

static void
test_error_bodies(void **state)
{
	const char *openai = "{\"error\": {\"message\": \"Incorrect model\", \"type\": "
	    "\"invalid_request_error\", \"code\": \"model_not_found\"}}";
	const char *anthropic = "{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", "
	    "\"message\": \"Overloaded\"}}";
	const char *ollama = "{\"error\": \"model 'x' not found\"}";
	char *m;

	(void)state;
	m = geak_llm_error_message(openai, strlen(openai));
	assert_string_equal(m, "invalid_request_error: Incorrect model");
	free(m);
	m = geak_llm_error_message(anthropic, strlen(anthropic));
	assert_string_equal(m, "overloaded_error: Overloaded");
	free(m);
	m = geak_llm_error_message(ollama, strlen(ollama));
	assert_string_equal(m, "model 'x' not found");
	free(m);
	assert_null(geak_llm_error_message("<html>502</html>", 16));
	assert_null(geak_llm_error_message(NULL, 0));
}

/* A client object good enough for the wire functions. */
static void
fake_llm(struct geak_llm *llm, enum geak_llm_provider provider)
{
	memset(llm, 0, sizeof *llm);
	llm->provider = provider;
	llm->model = "m";
	llm->temperature = 1.0;
	llm->max_tokens = -1;
	llm->record_fd = -1;
}

static int
feed(const struct geak_llm *llm, struct geak_llm_answer *a, const char *event, const char *data)
{
	return geak_llm_stream_event(llm, a, event, data, strlen(data));
}

static void
test_openai_stream(void **state)
{
	struct geak_llm llm;
	struct geak_llm_answer a = {0};

	(void)state;
	fake_llm(&llm, GEAK_LLM_OPENAI);
	assert_int_equal(feed(&llm, &a, "message", "{\"id\":\"c1\",\"choices\":[{\"delta\":"
	    "{\"role\":\"assistant\",\"content\":\"Hel\"}}]}"), 0);
	assert_int_equal(feed(&llm, &a, "message", "{\"id\":\"c1\",\"choices\":[{\"delta\":"
	    "{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}"), 0);
	assert_int_equal(feed(&llm, &a, "message", "{\"choices\":[],\"usage\":{\"prompt_tokens\":"
	    "10,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":4},"
	    "\"completion_tokens_details\":{\"reasoning_tokens\":1}}}"), 0);
	assert_false(a.done);
	assert_int_equal(feed(&llm, &a, "message", "[DONE]"), 0);
	assert_true(a.done);
	assert_string_equal(a.text.data, "Hello");
	assert_string_equal(a.id, "c1");
	assert_string_equal(a.finish, "stop");
	assert_int_equal(a.usage.input_tokens, 10);
	assert_int_equal(a.usage.output_tokens, 2);
	assert_int_equal(a.usage.cached_input_tokens, 4);
	assert_int_equal(a.usage.reasoning_tokens, 1);
	geak_llm_answer_reset(&a);
	/* An error object in the stream stops it. */
	assert_int_equal(feed(&llm, &a, "message", "{\"error\":{\"type\":\"server_error\","
	    "\"message\":\"boom\"}}"), -1);
	assert_string_equal(a.event_error, "server_error: boom");
	assert_false(a.event_overloaded);
	geak_llm_answer_reset(&a);
	assert_int_equal(feed(&llm, &a, "message", "{not json"), -1);
	geak_llm_answer_reset(&a);
}

static void
test_anthropic_stream(void **state)
{
	struct geak_llm llm;
	struct geak_llm_answer a = {0};

	(void)state;
	fake_llm(&llm, GEAK_LLM_ANTHROPIC);
	assert_int_equal(feed(&llm, &a, "message_start", "{\"type\":\"message_start\",\"message\":"
	    "{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":7,\"cache_read_input_tokens\":3,"
	    "\"output_tokens\":1}}}"), 0);
	assert_int_equal(feed(&llm, &a, "ping", "{\"type\":\"ping\"}"), 0);
	assert_int_equal(feed(&llm, &a, "content_block_delta", "{\"type\":\"content_block_delta\","
	    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}"), 0);
	assert_int_equal(feed(&llm, &a, "content_block_delta", "{\"type\":\"content_block_delta\","
	    "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}"), 0);
	assert_int_equal(feed(&llm, &a, "message_delta", "{\"type\":\"message_delta\",\"delta\":"
	    "{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}"), 0);
	assert_false(a.done);
	assert_int_equal(feed(&llm, &a, "message_stop", "{\"type\":\"message_stop\"}"), 0);
	assert_true(a.done);
	assert_string_equal(a.text.data, "Hi");
	assert_string_equal(a.id, "msg_1");
	assert_string_equal(a.finish, "end_turn");
	/* Cache reads count as input, and as cached input. */
	assert_int_equal(a.usage.input_tokens, 10);
	assert_int_equal(a.usage.cached_input_tokens, 3);
	assert_int_equal(a.usage.output_tokens, 5);
	geak_llm_answer_reset(&a);
	assert_int_equal(feed(&llm, &a, "error", "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"overloaded_error\",\"message\":\"Overloaded\"}}"), -1);
	assert_true(a.event_overloaded);
	geak_llm_answer_reset(&a);
}

static void
test_bodies(void **state)
{
	struct geak_llm llm;
	struct geak_llm_request req = {0};
	json_t *body;
	char *s;

	(void)state;
	req.messages = geak_llm_messages("be brief", "hello");
	req.temperature = -1;
	fake_llm(&llm, GEAK_LLM_ANTHROPIC);
	s = geak_llm_body(&llm, &req, 1);
	body = json_loads(s, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(body, "system")), "be brief");
	assert_int_equal(json_array_size(json_object_get(body, "messages")), 1);
	assert_int_equal(json_integer_value(json_object_get(body, "max_tokens")), 16000);
	assert_true(json_is_true(json_object_get(body, "stream")));
	json_decref(body);
	free(s);
	fake_llm(&llm, GEAK_LLM_AZURE);
	llm.max_tokens = 99;
	llm.use_completion_tokens = 1;
	req.temperature = 0.25;
	s = geak_llm_body(&llm, &req, 0);
	body = json_loads(s, 0, NULL);
	assert_null(json_object_get(body, "model"));
	assert_int_equal(json_array_size(json_object_get(body, "messages")), 2);
	assert_int_equal(json_integer_value(json_object_get(body, "max_completion_tokens")), 99);
	assert_float_equal(json_real_value(json_object_get(body, "temperature")), 0.25, 1e-12);
	assert_null(json_object_get(body, "stream"));
	json_decref(body);
	free(s);
	json_decref(req.messages);
}

static void
test_key(void **state)
{
	struct geak_llm llm;
	struct geak_llm_request req = {0};
	char k1[65], k2[65], k3[65], k4[65];

	(void)state;
	fake_llm(&llm, GEAK_LLM_OPENAI);
	req.messages = geak_llm_messages(NULL, "hello");
	req.temperature = -1;
	geak_llm_key(&llm, &req, k1);
	geak_llm_key(&llm, &req, k2);
	assert_string_equal(k1, k2);
	assert_int_equal(strlen(k1), 64);
	req.sample = 1;
	geak_llm_key(&llm, &req, k3);
	assert_string_not_equal(k1, k3);
	req.sample = 0;
	llm.temperature = 0.5;
	geak_llm_key(&llm, &req, k4);
	assert_string_not_equal(k1, k4);
	/* The endpoint is not part of the key. */
	llm.temperature = 1.0;
	llm.endpoint = "http://elsewhere/v1/chat/completions";
	geak_llm_key(&llm, &req, k2);
	assert_string_equal(k1, k2);
	json_decref(req.messages);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retryable),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_prices),
		cmocka_unit_test(test_error_bodies),
		cmocka_unit_test(test_openai_stream),
		cmocka_unit_test(test_anthropic_stream),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
