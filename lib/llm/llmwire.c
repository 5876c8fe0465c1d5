/* llmwire.c: the provider APIs: their names, request bodies, headers
 * and replies of OpenAI-compatible chat completions (also Azure
 * deployments) and Anthropic Messages, and the models a server lists. */
#include <stdlib.h>
#include <string.h>

#include "llm/llmint.h"

#define ANTHROPIC_VERSION "2023-06-01"
#define ANTHROPIC_DEFAULT_MAX_TOKENS 16000

const char *const geak_llm_provider_names[] = { "openai", "anthropic", "azure", NULL };

const char *
geak_llm_provider_name(const struct geak_llm *llm)
{
	return geak_llm_provider_names[llm->provider];
}

static void
set(json_t *obj, const char *key, json_t *val)
{
	if (!val || json_object_set_new(obj, key, val) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
}

void
geak_llm_answer_reset(struct geak_llm_answer *a)
{
	geak_buf_free(&a->text);
	geak_buf_free(&a->raw);
	free(a->id);
	free(a->finish);
	free(a->event_error);
	memset(a, 0, sizeof *a);
}

void
geak_llm_add_text(struct geak_llm_answer *a, const char *s, size_t n)
{
	if (a->text.len + n > GEAK_LLM_MAX_REPLY) {
		a->too_large = 1;
		return;
	}
	geak_buf_append(&a->text, s, n);
}

static void
keep_str(char **dst, json_t *val)
{
	if (json_is_string(val) && json_string_length(val)) {
		free(*dst);
		*dst = geak_xstrdup(json_string_value(val));
	}
}

static long
int_field(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

/* Anthropic wants the system text apart from the turns. */
static json_t *
anthropic_body(const struct geak_llm *llm, const struct geak_llm_request *req,
	double temp)
{
	json_t *body = json_object(), *msgs = json_array(), *m;
	struct geak_buf system = {0};
	long max_tokens = llm->max_tokens > 0 ? llm->max_tokens : ANTHROPIC_DEFAULT_MAX_TOKENS;
	size_t i;

	json_array_foreach(req->messages, i, m) {
		const char *role = json_string_value(json_object_get(m, "role"));
		if (role && !strcmp(role, "system")) {
			if (system.len)
				geak_buf_puts(&system, "\n\n");
			geak_buf_puts(&system, json_string_value(json_object_get(m, "content")));
		} else if (json_array_append(msgs, m) < 0) {
			geak_die(GEAK_EXIT_FATAL, "out of memory");
		}
	}
	set(body, "model", json_string(llm->model));
	set(body, "max_tokens", json_integer(max_tokens));
	set(body, "messages", msgs);
	if (system.len)
		set(body, "system", json_string(system.data));
	geak_buf_free(&system);
	if (llm->reasoning_effort) {
		/* Extended thinking: a token budget below max_tokens; the API
		 * takes no temperature with it. */
		long budget = !strcmp(llm->reasoning_effort, "low") ? 2048 :
		    !strcmp(llm->reasoning_effort, "high") ? 24576 : 8192;
		if (budget >= max_tokens)
			budget = max_tokens / 2;
		set(body, "thinking", json_pack("{s:s, s:I}", "type", "enabled",
		    "budget_tokens", (json_int_t)budget));
	} else if (temp >= 0) {
		set(body, "temperature", json_real(temp));
	}
	return body;
}

static json_t *
openai_body(const struct geak_llm *llm, const struct geak_llm_request *req,
	double temp, int stream)
{
	json_t *body = json_object();

	if (llm->provider != GEAK_LLM_AZURE)
		set(body, "model", json_string(llm->model));
	set(body, "messages", json_incref(req->messages));
	if (temp >= 0)
		set(body, "temperature", json_real(temp));
	if (llm->max_tokens > 0)
		set(body, llm->use_completion_tokens ? "max_completion_tokens" : "max_tokens",
		    json_integer(llm->max_tokens));
	if (llm->reasoning_effort)
		set(body, "reasoning_effort", json_string(llm->reasoning_effort));
	if (stream)
		set(body, "stream_options", json_pack("{s:b}", "include_usage", 1));
	return body;
}

char *
geak_llm_body(const struct geak_llm *llm, const struct geak_llm_request *req, int stream)
{
	double temp = req->temperature >= 0 ? req->temperature : llm->temperature;
	json_t *body = llm->provider == GEAK_LLM_ANTHROPIC ?
	    anthropic_body(llm, req, temp) : openai_body(llm, req, temp, stream);
	char *s;

	if (stream)
		set(body, "stream", json_true());
	s = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!s)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	return s;
}

struct curl_slist *
geak_llm_headers(const struct geak_llm *llm, int stream)
{
	struct curl_slist *h = NULL;
	char *line = NULL;

	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, stream ? "Accept: text/event-stream" : "Accept: application/json");
	if (llm->api_key && *llm->api_key) {
		switch (llm->provider) {
		case GEAK_LLM_ANTHROPIC:
			line = geak_xasprintf("x-api-key: %s", llm->api_key);
			break;
		case GEAK_LLM_AZURE:
			line = geak_xasprintf("api-key: %s", llm->api_key);
			break;
		default:
			line = geak_xasprintf("Authorization: Bearer %s", llm->api_key);
		}
		h = curl_slist_append(h, line);
		/* The line held the key: wipe it before it goes back to malloc. */
		memset(line, 0, strlen(line));
		free(line);
	}
	if (llm->provider == GEAK_LLM_ANTHROPIC)
		h = curl_slist_append(h, "anthropic-version: " ANTHROPIC_VERSION);
	if (!h)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	return h;
}

static void
openai_usage(struct geak_llm_answer *a, json_t *u)
{
	if (!json_is_object(u))
		return;
	a->usage.input_tokens = int_field(u, "prompt_tokens");
	a->usage.output_tokens = int_field(u, "completion_tokens");
	a->usage.cached_input_tokens = int_field(json_object_get(u, "prompt_tokens_details"),
	    "cached_tokens");
	a->usage.reasoning_tokens = int_field(json_object_get(u, "completion_tokens_details"),
	    "reasoning_tokens");
}

/* Anthropic counts cache reads and writes apart from input_tokens; the
 * record counts every input token, cached or not, as input. */
static void
anthropic_usage(struct geak_llm_answer *a, json_t *u)
{
	long in;

	if (!json_is_object(u))
		return;
	if (json_object_get(u, "input_tokens")) {
		in = int_field(u, "input_tokens") + int_field(u, "cache_read_input_tokens") +
		    int_field(u, "cache_creation_input_tokens");
		if (in)
			a->usage.input_tokens = in;
		if (int_field(u, "cache_read_input_tokens"))
			a->usage.cached_input_tokens = int_field(u, "cache_read_input_tokens");
	}
	if (json_object_get(u, "output_tokens"))
		a->usage.output_tokens = int_field(u, "output_tokens");
}

static void
event_error(struct geak_llm_answer *a, json_t *err)
{
	const char *type = json_string_value(json_object_get(err, "type"));
	const char *msg = json_string_value(json_object_get(err, "message"));

	free(a->event_error);
	a->event_error = geak_xasprintf("%s%s%s", type ? type : "error",
	    msg ? ": " : "", msg ? msg : "");
	a->event_overloaded = (type && strstr(type, "overloaded")) ||
	    (msg && strstr(msg, "verloaded"));
}

static int
openai_chunk(struct geak_llm_answer *a, json_t *j)
{
	json_t *choice = json_array_get(json_object_get(j, "choices"), 0);
	json_t *content = json_object_get(json_object_get(choice, "delta"), "content");

	if (json_object_get(j, "error")) {
		event_error(a, json_object_get(j, "error"));
		return -1;
	}
	keep_str(&a->id, json_object_get(j, "id"));
	if (json_is_string(content))
		geak_llm_add_text(a, json_string_value(content), json_string_length(content));
	keep_str(&a->finish, json_object_get(choice, "finish_reason"));
	openai_usage(a, json_object_get(j, "usage"));
	return 0;
}

static int
anthropic_event(struct geak_llm_answer *a, const char *event, json_t *j)
{
	const char *type = json_string_value(json_object_get(j, "type"));

	if (!type)
		type = event;
	if (!strcmp(type, "message_start")) {
		json_t *msg = json_object_get(j, "message");
		keep_str(&a->id, json_object_get(msg, "id"));
		anthropic_usage(a, json_object_get(msg, "usage"));
	} else if (!strcmp(type, "content_block_delta")) {
		json_t *d = json_object_get(j, "delta");
		json_t *text = json_object_get(d, "text");
		if (json_is_string(text))
			geak_llm_add_text(a, json_string_value(text), json_string_length(text));
	} else if (!strcmp(type, "message_delta")) {
		keep_str(&a->finish, json_object_get(json_object_get(j, "delta"), "stop_reason"));
		anthropic_usage(a, json_object_get(j, "usage"));
	} else if (!strcmp(type, "message_stop")) {
		a->done = 1;
	} else if (!strcmp(type, "error")) {
		event_error(a, json_object_get(j, "error"));
		return -1;
	}
	return 0;
}

int
geak_llm_stream_event(const struct geak_llm *llm, struct geak_llm_answer *a,
	const char *event, const char *data, size_t len)
{
	json_t *j;
	int rc;

	if (llm->provider != GEAK_LLM_ANTHROPIC && len == 6 && !memcmp(data, "[DONE]", 6)) {
		a->done = 1;
		return 0;
	}
	if (!(j = json_loadb(data, len, 0, NULL))) {
		free(a->event_error);
		a->event_error = geak_xstrdup("unreadable stream event (not JSON)");
		return -1;
	}
	rc = llm->provider == GEAK_LLM_ANTHROPIC ? anthropic_event(a, event, j) :
	    openai_chunk(a, j);
	json_decref(j);
	return rc;
}

static int
openai_reply(struct geak_llm_answer *a, json_t *j, const char **why)
{
	json_t *choice = json_array_get(json_object_get(j, "choices"), 0);
	json_t *msg = json_object_get(choice, "message");
	json_t *content = json_object_get(msg, "content");

	if (!json_is_object(msg)) {
		*why = "reply has no choices[0].message";
		return -1;
	}
	if (json_is_string(content))
		geak_llm_add_text(a, json_string_value(content), json_string_length(content));
	keep_str(&a->id, json_object_get(j, "id"));
	keep_str(&a->finish, json_object_get(choice, "finish_reason"));
	openai_usage(a, json_object_get(j, "usage"));
	return 0;
}

static int
anthropic_reply(struct geak_llm_answer *a, json_t *j, const char **why)
{
	json_t *content = json_object_get(j, "content"), *block;
	size_t i;

	if (!json_is_array(content)) {
		*why = "reply has no content array";
		return -1;
	}
	json_array_foreach(content, i, block) {
		const char *type = json_string_value(json_object_get(block, "type"));
		json_t *text = json_object_get(block, "text");
		if (type && !strcmp(type, "text") && json_is_string(text))
			geak_llm_add_text(a, json_string_value(text), json_string_length(text));
	}
	keep_str(&a->id, json_object_get(j, "id"));
	keep_str(&a->finish, json_object_get(j, "stop_reason"));
	anthropic_usage(a, json_object_get(j, "usage"));
	return 0;
}

int
geak_llm_parse_reply(const struct geak_llm *llm, struct geak_llm_answer *a, const char **why)
{
	json_t *j = json_loadb(a->raw.data ? a->raw.data : "", a->raw.len, 0, NULL);
	int rc;

	if (!json_is_object(j)) {
		json_decref(j);
		*why = "reply is not a JSON object";
		return -1;
	}
	if (json_object_get(j, "error")) {
		event_error(a, json_object_get(j, "error"));
		json_decref(j);
		*why = a->event_error;
		return -1;
	}
	rc = llm->provider == GEAK_LLM_ANTHROPIC ? anthropic_reply(a, j, why) :
	    openai_reply(a, j, why);
	json_decref(j);
	a->done = rc == 0;
	return rc;
}

char *
geak_llm_error_message(const char *body, size_t len)
{
	json_t *j = json_loadb(body ? body : "", len, 0, NULL), *err;
	const char *msg = NULL, *type = NULL;
	char *out = NULL;

	if (!j)
		return NULL;
	err = json_object_get(j, "error");
	if (json_is_object(err)) {
		msg = json_string_value(json_object_get(err, "message"));
		type = json_string_value(json_object_get(err, "type"));
		if (!type)
			type = json_string_value(json_object_get(err, "code"));
	} else if (json_is_string(err)) {
		msg = json_string_value(err); /* Ollama, llama.cpp */
	} else {
		msg = json_string_value(json_object_get(j, "message"));
	}
	if (msg || type)
		out = geak_xasprintf("%s%s%s", type ? type : "", type && msg ? ": " : "",
		    msg ? msg : "");
	json_decref(j);
	return out;
}

/* ---- the server's models ---- */

#define MODELS_MAX_BODY (4u << 20)

static size_t
on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	struct geak_buf *b = ud;

	if (b->len + size * nmemb > MODELS_MAX_BODY)
		return 0;
	geak_buf_append(b, p, size * nmemb);
	return size * nmemb;
}

/* Where the server lists its models: OpenAI's API and the servers that
 * copy it (vLLM, llama.cpp, Ollama) at base/models, Anthropic's at
 * /v1/models; an Azure deployment is a model already.  NULL: nowhere. */
static char *
models_url(const struct geak_llm *llm)
{
	size_t n = strlen(llm->base_url);

	switch (llm->provider) {
	case GEAK_LLM_ANTHROPIC:
		return geak_xasprintf("%s%s/models", llm->base_url,
		    n >= 3 && !strcmp(llm->base_url + n - 3, "/v1") ? "" : "/v1");
	case GEAK_LLM_AZURE:
		return NULL;
	default:
		return geak_xasprintf("%s/models", llm->base_url);
	}
}

/* The ids of the models the server lists, as a new JSON array; NULL
 * with *why (caller frees) when it lists none it can say: no answer
 * (*status 0), an HTTP error, or a body without OpenAI's
 * {"data": [{"id": ...}]} (*status the HTTP status). */
json_t *
geak_llm_fetch_models(struct geak_llm *llm, long *status, char **why)
{
	char *url = models_url(llm), err[CURL_ERROR_SIZE] = "";
	struct curl_slist *h;
	struct geak_buf body = { 0 };
	json_t *doc, *data, *m, *ids = NULL;
	size_t i;
	CURL *e;

	*why = NULL;
	*status = 0;
	if (!url) {
		*why = geak_xstrdup("the provider does not list models");
		return NULL;
	}
	if (!(e = curl_easy_init())) {
		*why = geak_xstrdup("could not start libcurl");
		free(url);
		return NULL;
	}
	h = geak_llm_headers(llm, 0);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(llm->cfg.connect_timeout * 1000));
	curl_easy_setopt(e, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "geak/" GEAK_VERSION);
	if (curl_easy_perform(e) != CURLE_OK) {
		*why = geak_xstrdup(*err ? err : "no answer");
		goto done;
	}
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, status);
	doc = *status / 100 == 2 ? json_loadb(body.data ? body.data : "", body.len, 0, NULL) : NULL;
	data = json_object_get(doc, "data");
	if (!json_is_array(data)) {
		*why = geak_xasprintf("HTTP %ld", *status);
		json_decref(doc);
		goto done;
	}
	ids = json_array();
	json_array_foreach(data, i, m) {
		json_t *id = json_object_get(m, "id");
		if (json_is_string(id) && json_array_append(ids, id) < 0)
			geak_die(GEAK_EXIT_FATAL, "out of memory");
	}
	json_decref(doc);
done:
	for (struct curl_slist *l = h; l; l = l->next) /* one holds the key */
		memset(l->data, 0, strlen(l->data));
	curl_slist_free_all(h);
	curl_easy_cleanup(e);
	geak_buf_free(&body);
	free(url);
	return ids;
}
