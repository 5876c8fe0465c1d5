/* llmcheck.c: the preflight (--check): one tiny request, and a plain
 * answer to "do the endpoint, the key and the model work?", naming the
 * one that does not, before a run spends tokens on a wrong set-up. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "llmint.h"

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

static void
verdict(const struct geak_llm *llm, const struct geak_llm_reply *rep)
{
	const char *msg = rep->error ? rep->error : "";
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
}

static void
on_done(size_t index, const struct geak_llm_request *req,
	const struct geak_llm_reply *rep, void *ctx)
{
	struct check *c = ctx;
	int shown;

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
	printf("ok: endpoint, key and model work (HTTP %ld in %.1f s, %d attempt%s; "
	    "reply \"%.*s\")\n", rep->http_status, rep->latency_ms / 1000, rep->attempts,
	    rep->attempts == 1 ? "" : "s", shown, rep->text);
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
	json_t *saved_journal = llm->journal;

	printf("provider: %s\nmodel: %s\n", geak_llm_provider_name(llm), llm->model);
	if (llm->replay) {
		printf("replay: %s (%zu exchanges; no network is used)\n",
		    llm->cfg.replay_path, json_object_size(llm->replay));
		return fflush(stdout) ? 1 : 0;
	}
	printf("endpoint: %s\nkey: %s%s\n", llm->endpoint,
	    llm->key_source ? "from $" : "none", llm->key_source ? llm->key_source : "");
	fflush(stdout);
	req.messages = geak_llm_messages(NULL, "Reply with the single word: ok");
	req.temperature = -1;
	/* Small, not recorded, asked for real, and quick to give up. */
	if (llm->max_tokens < 0 || llm->max_tokens > 64)
		llm->max_tokens = llm->provider != GEAK_LLM_ANTHROPIC ? -1 :
		    llm->reasoning_effort ? 2048 : 16;
	llm->record_fd = llm->journal_fd = -1;
	llm->journal = NULL;
	if (llm->cfg.max_attempts > 3)
		llm->cfg.max_attempts = 3;
	geak_llm_run(llm, &req, 1, on_done, &c);
	llm->max_tokens = saved_tokens;
	llm->record_fd = saved_fd;
	llm->journal_fd = saved_journal_fd;
	llm->journal = saved_journal;
	llm->cfg.max_attempts = saved_attempts;
	json_decref(req.messages);
	if (fflush(stdout))
		return 1;
	return c.status;
}
