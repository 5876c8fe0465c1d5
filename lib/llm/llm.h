/* llm.h: chat requests to LLM providers, N at a time, with retries,
 * streaming, accounting, a token/cost budget, and record/replay.
 *
 * A tool that talks to a model:
 *
 *	struct geak_llm_config cfg;
 *	geak_llm_config_init(&cfg);
 *	while ((c = getopt_long(argc, argv, "hvn:" GEAK_LLM_SHORTOPTS, opts, NULL)) != -1)
 *		if (!geak_llm_option(&cfg, c, optarg))
 *			switch (c) { ...the tool's own options... }
 *	llm = geak_llm_open(&cfg);        // resolves flags > GEAK_* > provider env > defaults
 *	if (cfg.check) exit(geak_llm_check(llm));
 *	...fill reqs[i].messages...
 *	geak_llm_run(llm, reqs, n, on_done, ctx);   // on_done runs once per request
 *	geak_llm_close(llm);
 *
 * and in on_done: on success geak_llm_account(rec, llm, reply) and use
 * reply->text; on failure geak_llm_set_error(rec, llm, reply) and say so
 * on stderr (the client reports retries and, with -v, successes, but
 * leaves failures to the caller, who knows the record).  See geak-gen(1) for the
 * options and the environment, geak-record(5) for the `llm` and
 * `usage_total` fields.
 *
 * The API key is held only inside the client: no function here puts it in
 * a record, a message, a recorded exchange or a child's environment. */
#ifndef GEAK_LLM_H
#define GEAK_LLM_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

enum geak_llm_provider {
	GEAK_LLM_OPENAI,    /* OpenAI-compatible chat completions (default) */
	GEAK_LLM_ANTHROPIC, /* Anthropic Messages */
	GEAK_LLM_AZURE,     /* Azure OpenAI deployment (chat completions) */
};

/* What the command line asked for.  Strings are borrowed (argv); NULL and
 * negative numbers mean "not given": geak_llm_open fills them from the
 * environment and the defaults. */
struct geak_llm_config {
	const char *provider;     /* --provider openai|anthropic|azure */
	const char *model;        /* --model (Azure: the deployment name) */
	const char *base_url;     /* --base-url */
	const char *api_key_env;  /* --api-key-env: variable holding the key */
	const char *api_version;  /* --api-version (Azure) */
	const char *reasoning_effort; /* --reasoning-effort low|medium|high|... */
	double temperature;       /* --temperature (default 1.0, GEAK's for
	                           * every call); < 0: not sent */
	long max_tokens;          /* --max-tokens per reply; < 0: default */
	int jobs;                 /* -j, --jobs: requests in flight (default 4) */
	const char *record_path;  /* --record FILE: append every exchange */
	const char *replay_path;  /* --replay FILE: answer from it, no network */
	const char *journal_path; /* --journal FILE: answer from it what it has,
	                           * append the rest */
	long max_tokens_total;    /* --max-tokens-total (input+output); < 0: none */
	double max_cost;          /* --max-cost in US dollars (the price table's); < 0: none */
	const char *ledger_path;  /* --ledger FILE: the spending the limits count,
	                           * shared by every process given it */
	const char *prices_path;  /* --prices FILE (default share/prices.tsv) */
	int max_attempts;         /* --max-attempts per request (default 6) */
	double max_wait;          /* --max-wait: seconds of back-off per request (default 300) */
	double connect_timeout;   /* --connect-timeout seconds (default 20) */
	double stall_timeout;     /* --stall-timeout: seconds without a byte (default 120) */
	double max_time;          /* --max-time: seconds a request may take in
	                           * all, attempts and waits included (default 1800) */
	int stream;               /* --no-stream sets 0 (default 1) */
	int check;                /* --check: the tool should call geak_llm_check */
	int resolve;              /* --resolve: print geak_llm_settings, no request */
	int verbose;              /* set by the tool's own -v */
};

/* Option codes for the long-only options; out of the range of any short
 * option, so a tool's own codes (below 0x1000) never collide. */
enum {
	GEAK_LLM_OPT_PROVIDER = 0x1100,
	GEAK_LLM_OPT_MODEL,
	GEAK_LLM_OPT_BASE_URL,
	GEAK_LLM_OPT_API_KEY_ENV,
	GEAK_LLM_OPT_API_VERSION,
	GEAK_LLM_OPT_TEMPERATURE,
	GEAK_LLM_OPT_MAX_TOKENS,
	GEAK_LLM_OPT_REASONING,
	GEAK_LLM_OPT_RECORD,
	GEAK_LLM_OPT_REPLAY,
	GEAK_LLM_OPT_MAX_TOKENS_TOTAL,
	GEAK_LLM_OPT_MAX_COST,
	GEAK_LLM_OPT_PRICES,
	GEAK_LLM_OPT_MAX_ATTEMPTS,
	GEAK_LLM_OPT_MAX_WAIT,
	GEAK_LLM_OPT_CONNECT_TIMEOUT,
	GEAK_LLM_OPT_STALL_TIMEOUT,
	GEAK_LLM_OPT_NO_STREAM,
	GEAK_LLM_OPT_CHECK,
	GEAK_LLM_OPT_JOURNAL,
	GEAK_LLM_OPT_MAX_TIME,
	GEAK_LLM_OPT_LEDGER,
	GEAK_LLM_OPT_RESOLVE,
};

/* Append to the tool's getopt short-option string. */
#define GEAK_LLM_SHORTOPTS "j:"

/* Entries for the tool's struct option table (before its {0} end). */
#define GEAK_LLM_LONGOPTS \
	{"provider", required_argument, NULL, GEAK_LLM_OPT_PROVIDER}, \
	{"model", required_argument, NULL, GEAK_LLM_OPT_MODEL}, \
	{"base-url", required_argument, NULL, GEAK_LLM_OPT_BASE_URL}, \
	{"api-key-env", required_argument, NULL, GEAK_LLM_OPT_API_KEY_ENV}, \
	{"api-version", required_argument, NULL, GEAK_LLM_OPT_API_VERSION}, \
	{"temperature", required_argument, NULL, GEAK_LLM_OPT_TEMPERATURE}, \
	{"max-tokens", required_argument, NULL, GEAK_LLM_OPT_MAX_TOKENS}, \
	{"reasoning-effort", required_argument, NULL, GEAK_LLM_OPT_REASONING}, \
	{"jobs", required_argument, NULL, 'j'}, \
	{"record", required_argument, NULL, GEAK_LLM_OPT_RECORD}, \
	{"replay", required_argument, NULL, GEAK_LLM_OPT_REPLAY}, \
	{"journal", required_argument, NULL, GEAK_LLM_OPT_JOURNAL}, \
	{"max-time", required_argument, NULL, GEAK_LLM_OPT_MAX_TIME}, \
	{"max-tokens-total", required_argument, NULL, GEAK_LLM_OPT_MAX_TOKENS_TOTAL}, \
	{"max-cost", required_argument, NULL, GEAK_LLM_OPT_MAX_COST}, \
	{"ledger", required_argument, NULL, GEAK_LLM_OPT_LEDGER}, \
	{"prices", required_argument, NULL, GEAK_LLM_OPT_PRICES}, \
	{"max-attempts", required_argument, NULL, GEAK_LLM_OPT_MAX_ATTEMPTS}, \
	{"max-wait", required_argument, NULL, GEAK_LLM_OPT_MAX_WAIT}, \
	{"connect-timeout", required_argument, NULL, GEAK_LLM_OPT_CONNECT_TIMEOUT}, \
	{"stall-timeout", required_argument, NULL, GEAK_LLM_OPT_STALL_TIMEOUT}, \
	{"no-stream", no_argument, NULL, GEAK_LLM_OPT_NO_STREAM}, \
	{"check", no_argument, NULL, GEAK_LLM_OPT_CHECK}, \
	{"resolve", no_argument, NULL, GEAK_LLM_OPT_RESOLVE}

void geak_llm_config_init(struct geak_llm_config *cfg);
/* Handle one getopt result: 1 when it was an LLM option (a bad value ends
 * the tool with a usage error, exit 2), 0 when it is the tool's own. */
int geak_llm_option(struct geak_llm_config *cfg, int opt, const char *arg);
/* The OPTIONS lines for the LLM options, for a tool's --help. */
void geak_llm_usage(FILE *fp);

/* One request.  messages is a JSON array of {role, content} with role
 * "system", "user" or "assistant" (borrowed; not freed).  sample is the
 * sample index: requests that differ only in it are different exchanges
 * for --record/--replay.  temperature < 0 takes the configured one. */
struct geak_llm_request {
	json_t *messages;
	int sample;
	double temperature;
	void *user; /* the caller's, handed back untouched */
};

/* Convenience: [{role: system, content: system}?, {role: user, content: user}]. */
json_t *geak_llm_messages(const char *system, const char *user);

struct geak_llm_usage {
	long input_tokens, output_tokens, cached_input_tokens, reasoning_tokens;
};

/* The outcome of one request.  Owned by the client; valid only during the
 * callback (copy what you keep). */
struct geak_llm_reply {
	int ok;                  /* 1: text holds the answer */
	const char *text;        /* the assistant's text ("" when ok and empty) */
	const char *finish_reason; /* "stop", "length", "end_turn", ... or NULL */
	/* On failure: kind is one of "auth" (401, 403), "http" (another
	 * refusal such as 400, 404, 422, or a transient status such as 429 or
	 * 5xx that outlasted --max-attempts or --max-wait), "network",
	 * "stall" (no byte for --stall-timeout), "truncated" (the stream ended
	 * without its end marker), "provider" (an error event or an
	 * unreadable reply), "too_large" (an answer over 8 MiB), "timeout"
	 * (no whole answer within --max-time), "budget" (not sent:
	 * --max-tokens-total or --max-cost reached), "replay_miss" (--replay
	 * has no such exchange) or "stopped" (not sent, or given up while
	 * waiting to retry, because the tool is stopping).  error says what
	 * failed in words, with the provider's own message when it sent one
	 * and "gave up after N attempts" when retries ran out; it never holds
	 * the key. */
	const char *error_kind;
	const char *error;
	long http_status;        /* last HTTP status, 0 if none */
	const char *request_id;  /* the provider's id for the reply, or NULL */
	struct geak_llm_usage usage;
	double latency_ms;       /* from first send to last byte, all attempts */
	int attempts;            /* HTTP attempts made (0 when replayed/not sent) */
	int replayed;            /* 1: answered from --replay */
	int journaled;           /* 1: answered from --journal (an exchange an
	                          * earlier run made: usage and latency are its) */
	const char *key;         /* the exchange's SHA-256 (record/replay key) */
};

struct geak_llm;

/* Resolve the configuration (flag > GEAK_* env > provider env > default),
 * load the price table when a cost limit is set, open --record/--replay.
 * On failure print why and return NULL.  With cfg->verbose print the
 * resolved provider, model and endpoint (never the key) on stderr. */
struct geak_llm *geak_llm_open(const struct geak_llm_config *cfg);
void geak_llm_close(struct geak_llm *llm);

enum geak_llm_provider geak_llm_provider(const struct geak_llm *llm);
const char *geak_llm_provider_name(const struct geak_llm *llm);
const char *geak_llm_model(const struct geak_llm *llm);
/* Requests in flight at once (-j). */
int geak_llm_jobs(const struct geak_llm *llm);
/* The URL requests go to (no key in it). */
const char *geak_llm_endpoint(const struct geak_llm *llm);

/* Called once per request, as each completes, in the calling thread. */
typedef void geak_llm_done_fn(size_t index, const struct geak_llm_request *req,
	const struct geak_llm_reply *reply, void *ctx);

/* Send n requests, at most cfg->jobs in flight, and call done for each
 * (in completion order).  Requests that the budget stops are not sent and
 * come back with error_kind "budget".  Returns 0, or -1 when the client
 * could not work at all (reported; done was still called for each). */
int geak_llm_run(struct geak_llm *llm, struct geak_llm_request *reqs, size_t n,
	geak_llm_done_fn *done, void *ctx);

/* A thread's own connections, kept from one request to the next: every
 * thread that sends requests at the same time as others has one. */
struct geak_llm_session;
struct geak_llm_session *geak_llm_session_open(struct geak_llm *llm);
void geak_llm_session_close(struct geak_llm_session *s);
/* As geak_llm_run, on the session's connections. */
int geak_llm_session_run(struct geak_llm_session *s, struct geak_llm_request *reqs,
	size_t n, geak_llm_done_fn *done, void *ctx);

/* 1 when a failed request says nothing about the record it was for: the
 * key, the endpoint, the model, the network, the provider, the deadline,
 * the budget, the replay file or a stop.  A tool whose records failed so
 * exits with GEAK_EXIT_RUN. */
int geak_llm_failure_is_the_runs(const struct geak_llm_reply *reply);

/* What the options and the environment chose, as a new object:
 * {provider, model, model_from, base_url, priced}; no key, nothing
 * sent but a server's model list (see geak_llm_open). */
json_t *geak_llm_settings(const struct geak_llm *llm);

/* Preflight: one tiny request; print on stdout whether endpoint, key and
 * model work, naming what failed.  Returns the exit status (0 or 1). */
int geak_llm_check(struct geak_llm *llm);

/* Totals over every reply so far in this process. */
struct geak_llm_totals {
	long calls;
	long input_tokens, output_tokens;
	double cost;        /* US dollars, from the price table; 0 when unknown */
	int cost_known;     /* 1 when the model is in the price table */
	long unpriced_calls; /* answers of a model without a price (--ledger) */
};
void geak_llm_totals(struct geak_llm *llm, struct geak_llm_totals *t);

/* Store the call in a record: rec.llm = {provider, model, request_id,
 * usage: {input_tokens, output_tokens, cached_input_tokens,
 * reasoning_tokens, cost}, latency_ms, attempts, replayed} and add to
 * rec.usage_total = {calls, input_tokens, output_tokens, cost}.  cost is
 * in US dollars, null (and absent from usage_total) when the price table
 * has no price for the model, 0 for an answer from --replay. */
void geak_llm_account(json_t *rec, const struct geak_llm *llm,
	const struct geak_llm_reply *reply);
/* Add a failed call's tokens (if any) to usage_total and attach
 * rec.error = {tool, stage: "llm", kind: reply->error_kind, message}. */
void geak_llm_set_error(json_t *rec, const struct geak_llm *llm,
	const struct geak_llm_reply *reply);

#endif
