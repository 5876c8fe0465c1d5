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
