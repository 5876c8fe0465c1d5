/* llmint.h: the LLM client's parts, shared between lib/llm*.c only. */
#ifndef GEAK_LLMINT_H
#define GEAK_LLMINT_H

#include <pthread.h>
#include <curl/curl.h>

#include "llm/llm.h"
#include "llm/sse.h"
#include "util.h"

#define GEAK_LLM_MAX_REPLY (8u << 20)   /* bytes of answer text kept */
#define GEAK_LLM_MAX_ERRBODY (64u << 10) /* bytes of an error body kept */

struct geak_llm_price {
	double input, cached_input, output; /* per million tokens */
	int known;
};

/* Shared by every thread that sends requests; mu guards what changes
 * after geak_llm_open: the totals, the budget, the journal's use and the
 * progress lines of -v. */
struct geak_llm {
	pthread_mutex_t mu;
	struct geak_llm_config cfg;
	enum geak_llm_provider provider;
	const char *provider_why; /* what chose it, for --check and -v */
	char *model;
	const char *model_why;   /* what chose it, for --check and --resolve */
	char *base_url;
	char *endpoint;          /* the URL requests go to */
	char *key_source;        /* name of the variable the key came from */
	char *api_key;           /* never printed, never stored */
	char *api_version;
	char *reasoning_effort;
	double temperature;      /* < 0: not sent */
	long max_tokens;         /* < 0: not sent (Anthropic: a default) */
	int use_completion_tokens; /* OpenAI's own API: max_completion_tokens */
	struct geak_llm_price price;
	json_t *replay;          /* key -> reply object, with --replay */
	int record_fd;           /* --record, or -1 */
	json_t *journal;         /* key -> [reply, ...], with --journal */
	json_t *journal_used;    /* key -> how many of them were taken */
	int journal_fd;          /* --journal, or -1 */
	int ledger_fd;           /* --ledger, or -1 */
	int progress;            /* -v into a log: a line now and then */
	int tty;                 /* stderr is a terminal */
	struct geak_llm_totals totals;
	long budget_tokens;      /* tokens spent that count against the budget */
	long in_flight;          /* requests begun and not yet answered */
	double last_progress;
};

/* The state of one answer being read (one attempt). */
struct geak_llm_answer {
	struct geak_buf text;
	struct geak_buf raw;     /* a non-SSE body: JSON or an error */
	char *id;                /* the reply's own id */
	char *finish;
	struct geak_llm_usage usage;
	int done;                /* saw [DONE] / message_stop */
	int too_large;
	char *event_error;       /* a mid-stream error event's message */
	int event_overloaded;    /* ... and it said "overloaded" */
};
void geak_llm_answer_reset(struct geak_llm_answer *a);

/* llmwire.c: the providers' wire formats. */
/* Their names, by enum geak_llm_provider; NULL-terminated. */
extern const char *const geak_llm_provider_names[];
char *geak_llm_body(const struct geak_llm *llm, const struct geak_llm_request *req,
	int stream);
struct curl_slist *geak_llm_headers(const struct geak_llm *llm, int stream);
/* One SSE event of a stream; 0, or -1 when the stream must stop. */
int geak_llm_stream_event(const struct geak_llm *llm, struct geak_llm_answer *a,
	const char *event, const char *data, size_t len);
/* A whole (non-streamed) JSON reply into a; -1 with *why when unreadable. */
int geak_llm_parse_reply(const struct geak_llm *llm, struct geak_llm_answer *a,
	const char **why);
/* The provider's message from an error body, or NULL (caller frees). */
char *geak_llm_error_message(const char *body, size_t len);
void geak_llm_add_text(struct geak_llm_answer *a, const char *s, size_t n);

/* llmwire.c: the ids the server lists at its models URL (a new array),
 * or NULL with *why (caller frees) and *status (the HTTP status; 0: no
 * answer). */
json_t *geak_llm_fetch_models(struct geak_llm *llm, long *status, char **why);

/* llmretry.c: which failures to retry and how long to wait. */
int geak_llm_retryable_status(long status);
/* Seconds to wait before attempt number `attempt` (2, 3, ...): the
 * server's retry-after-ms or Retry-After (seconds or HTTP date) when it
 * sent one, clamped to [0, cap], else exponential back-off with jitter. */
double geak_llm_retry_delay(int attempt, const char *retry_after_ms,
	const char *retry_after, double cap);
double geak_llm_backoff(int attempt, double cap);

/* llmstore.c: --record / --replay. */
/* The exchange's key (SHA-256 hex of the canonical request) into out. */
void geak_llm_key(const struct geak_llm *llm, const struct geak_llm_request *req,
	char out[65]);
int geak_llm_replay_load(struct geak_llm *llm, const char *path);
/* The recorded reply for key, or NULL. */
json_t *geak_llm_replay_find(struct geak_llm *llm, const char *key);
int geak_llm_record_open(struct geak_llm *llm, const char *path);
/* One exchange as a line of fd (--record, --journal); 0 or -1. */
int geak_llm_record_write(struct geak_llm *llm, int fd, const struct geak_llm_request *req,
	const struct geak_llm_reply *reply);
/* --journal: read what the file holds (it may not exist yet), then
 * append to it; 0 or -1 (reported). */
int geak_llm_journal_open(struct geak_llm *llm, const char *path);
/* The journal's answer to the next asking of key in this process, or
 * NULL; under llm->mu. */
json_t *geak_llm_journal_take(struct geak_llm *llm, const char *key);

/* llmledger.c: --ledger, the spending of every process sharing it.
 * Each 0, or -1 (reported by open and add). */
int geak_llm_ledger_open(struct geak_llm *llm, const char *path);
int geak_llm_ledger_read(struct geak_llm *llm, struct geak_llm_totals *t);
/* cost counts only when priced; an unpriced call adds to unpriced_calls. */
int geak_llm_ledger_add(struct geak_llm *llm, const struct geak_llm_usage *u, double cost,
	int priced);

/* llmprice.c: the price table. */
int geak_llm_price_load(const char *path, const char *provider, const char *model,
	struct geak_llm_price *price);
double geak_llm_cost(const struct geak_llm_price *p, const struct geak_llm_usage *u);

#endif
