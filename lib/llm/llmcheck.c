/* llmcheck.c: the preflight (--check): one tiny request, and a plain
 * answer to "do the endpoint, the key and the model work?", naming the
 * one that does not, before a run spends tokens on a wrong set-up. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "llm/llmint.h"
#include "secrets.h"

struct check {
	const struct geak_llm *llm;
	int status;
};

static int
mentions_model(const char *msg)
{
	return msg && strcasestr(msg, "model") != NULL;
}

/* The provider's own words in a message "HTTP n from URL: words". */
static const char *
after_endpoint(const struct geak_llm *llm, const char *msg)
{
	const char *at = strstr(msg, llm->endpoint);
	return at ? at + strlen(llm->endpoint) : msg;
}

/* Text a server sent, as printed: any key it holds redacted, its control
 * characters escaped.  Caller frees. */
static char *
shown_text(const char *s, size_t n)
{
	char *copy = geak_xstrndup(s ? s : "", s ? n : 0), *shown;

	geak_redact(&copy);
	shown = geak_printable(copy);
	free(copy);
	return shown;
}

static void
verdict(const struct geak_llm *llm, const struct geak_llm_reply *rep)
{
	char *shown = shown_text(rep->error, rep->error ? strlen(rep->error) : 0);
	const char *msg = shown;
	const char *kind = rep->error_kind ? rep->error_kind : "";

	if (!strcmp(kind, "network") || !strcmp(kind, "stall"))
		printf("FAILED: endpoint: %s cannot be reached: %s\n", llm->endpoint, msg);
	else if (!strcmp(kind, "auth") && !llm->key_source)
		printf("FAILED: key: none was found (set the provider's key variable or use "
		    "--api-key-env): %s\n", msg);
	else if (!strcmp(kind, "auth"))
		printf("FAILED: key: the endpoint refused the key from $%s: %s\n",
		    llm->key_source, msg);
	else if (!strcmp(kind, "http") && mentions_model(after_endpoint(llm, msg)))
		printf("FAILED: model: %s was refused: %s\n", llm->model, msg);
	else if (!strcmp(kind, "http") && rep->http_status == 404)
		printf("FAILED: endpoint: %s does not exist (check --base-url): %s\n",
		    llm->endpoint, msg);
	else
		printf("FAILED: %s: %s\n", kind, msg);
	free(shown);
}

/* ---- the server's models ---- */

#define MODELS_SHOWN 8       /* names printed; the count says the rest */
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

/* "models: the server lists 3: a, b, c (gpt-4.1 is one)".  What goes
 * wrong here is only said: the request below is the test. */
static void
list_models(struct geak_llm *llm)
{
	char *why;
	long status;
	json_t *ids = geak_llm_fetch_models(llm, &status, &why), *id;
	size_t i, shown = 0;
	int listed = 0;

	if (!ids) {
		if (llm->provider != GEAK_LLM_AZURE && status)
			printf("models: the server does not list them (%s)\n", why);
		else if (llm->provider != GEAK_LLM_AZURE)
			printf("models: not listed (%s)\n", why);
		free(why);
		fflush(stdout);
		return;
	}
	printf("models: the server lists %zu", json_array_size(ids));
	json_array_foreach(ids, i, id) {
		listed |= !strcmp(json_string_value(id), llm->model);
		if (shown++ < MODELS_SHOWN) {
			const char *text = json_string_value(id);
			char *name = shown_text(text, strlen(text));
			printf("%s%s", shown == 1 ? ": " : ", ", name);
			free(name);
		}
	}
	printf("%s (%s %s)\n", shown > MODELS_SHOWN ? ", ..." : "", llm->model,
	    listed ? "is one of them" : "is not among them");
	json_decref(ids);
	fflush(stdout);
}

static void
on_done(size_t index, const struct geak_llm_request *req,
	const struct geak_llm_reply *rep, void *ctx)
{
	struct check *c = ctx;
	int shown;
	char *text;

	(void)index;
	(void)req;
	if (!rep->ok) {
		verdict(c->llm, rep);
		c->status = 1;
		return;
	}
	shown = (int)strcspn(rep->text, "\n");
	if (shown > 40)
		shown = 40;
	text = shown_text(rep->text, (size_t)shown);
	printf("ok: endpoint, key and model work (HTTP %ld in %.1f s, %d attempt%s; "
	    "reply \"%s\")\n", rep->http_status, rep->latency_ms / 1000, rep->attempts,
	    rep->attempts == 1 ? "" : "s", text);
	free(text);
	c->status = 0;
}

int
geak_llm_check(struct geak_llm *llm)
{
	struct check c = {llm, 1};
	struct geak_llm_request req = {0};
	long saved_tokens = llm->max_tokens;
	int saved_fd = llm->record_fd, saved_journal_fd = llm->journal_fd;
	int saved_attempts = llm->cfg.max_attempts;
	long saved_tokens_total = llm->cfg.max_tokens_total;
	double saved_cost = llm->cfg.max_cost;
	const char *saved_ledger = llm->cfg.ledger_path;
	json_t *saved_journal = llm->journal;

	printf("provider: %s (%s)\nmodel: %s (%s)\n", geak_llm_provider_name(llm), llm->provider_why,
	    llm->model, llm->model_why);
	if (llm->replay) {
		printf("replay: %s (%zu exchanges; no network is used)\n",
		    llm->cfg.replay_path, json_object_size(llm->replay));
		return fflush(stdout) ? 1 : 0;
	}
	printf("endpoint: %s\nkey: %s%s\n", llm->endpoint,
	    llm->key_source ? "from $" : "none", llm->key_source ? llm->key_source : "");
	fflush(stdout);
	list_models(llm);
	req.messages = geak_llm_messages(NULL, "Reply with the single word: ok");
	req.temperature = -1;
	/* Small, not recorded, asked for real, and quick to give up. */
	if (llm->max_tokens < 0 || llm->max_tokens > 64)
		llm->max_tokens = llm->provider != GEAK_LLM_ANTHROPIC ? -1 :
		    llm->reasoning_effort ? 2048 : 16;
	/* Nor counted against a budget, nor refused by a spent one. */
	llm->record_fd = llm->journal_fd = -1;
	llm->cfg.ledger_path = NULL;
	llm->journal = NULL;
	llm->cfg.max_tokens_total = -1;
	llm->cfg.max_cost = -1;
	if (llm->cfg.max_attempts > 3)
		llm->cfg.max_attempts = 3;
	geak_llm_run(llm, &req, 1, on_done, &c);
	llm->max_tokens = saved_tokens;
	llm->record_fd = saved_fd;
	llm->journal_fd = saved_journal_fd;
	llm->journal = saved_journal;
	llm->cfg.max_attempts = saved_attempts;
	llm->cfg.max_tokens_total = saved_tokens_total;
	llm->cfg.max_cost = saved_cost;
	llm->cfg.ledger_path = saved_ledger;
	json_decref(req.messages);
	if (fflush(stdout))
		return 1;
	return c.status;
}
