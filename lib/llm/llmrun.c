/* llmrun.c: N requests through one curl multi handle, at most -j in
 * flight, each retried on transient failures, streamed when asked, given
 * up at --max-time, and answered from --replay or --journal when that is
 * given.  Several threads may each run requests through a session of
 * their own. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "llm/llmint.h"
#include "secrets.h"

#define RETRY_DELAY_CAP 60.0 /* longest single wait, even if the server asks more */
#define PROGRESS_LOG_EVERY 10.0 /* seconds between progress lines with -v */

struct xfer {
	struct geak_llm *llm;
	size_t index;
	struct geak_llm_request *req;
	char key[65];
	char *body;
	struct curl_slist *headers;
	CURL *easy;
	struct geak_llm_answer ans;
	struct geak_sse sse;
	int decided, sse_mode;
	long status;
	char retry_after[64], retry_after_ms[64], request_id[256], content_type[128];
	char errbuf[CURL_ERROR_SIZE];
	int attempts;
	double started, resume_at, waited;
	double last_byte;        /* when the attempt last received anything */
	int heard;               /* it received something */
	int used, waiting;
	int counted;             /* in llm->in_flight */
};

struct geak_llm_session {
	struct geak_llm *llm;
	CURLM *multi;             /* its connections live as long as it does */
};

struct run {
	struct geak_llm *llm;
	CURLM *multi;
	struct xfer *slots;
	int nslots;
	geak_llm_done_fn *done;
	void *ctx;
	size_t n, completed;
};

static int
on_event(const char *event, const char *data, size_t len, void *ctx)
{
	struct xfer *x = ctx;
	return geak_llm_stream_event(x->llm, &x->ans, event, data, len);
}

static void
decide(struct xfer *x)
{
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
	x->sse_mode = x->status / 100 == 2 &&
	    !strncasecmp(x->content_type, "text/event-stream", 17);
	x->decided = 1;
}

static size_t
on_data(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * nmemb;
	size_t cap = x->status / 100 == 2 ? 2 * GEAK_LLM_MAX_REPLY : GEAK_LLM_MAX_ERRBODY;

	x->last_byte = geak_now();

	if (!x->decided) {
		decide(x);
		cap = x->status / 100 == 2 ? 2 * GEAK_LLM_MAX_REPLY : GEAK_LLM_MAX_ERRBODY;
	}
	if (x->sse_mode) {
		/* Stop reading on an error event or an oversized answer. */
		if (geak_sse_feed(&x->sse, p, len) || x->ans.too_large)
			return 0;
		return len;
	}
	if (x->ans.raw.len + len > cap) {
		if (x->status / 100 == 2) {
			x->ans.too_large = 1;
			return 0;
		}
		len = cap - x->ans.raw.len; /* keep the start of an error body */
		geak_buf_append(&x->ans.raw, p, len);
		return size * nmemb;
	}
	geak_buf_append(&x->ans.raw, p, len);
	return len;
}

static void
header_value(char *dst, size_t cap, const char *v, size_t n)
{
	while (n && isspace((unsigned char)*v))
		v++, n--;
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

static size_t
on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * nmemb;
	const char *colon = memchr(p, ':', len);
	static const struct {
		const char *name;
		size_t off, cap;
	} wanted[] = {
		{"retry-after", offsetof(struct xfer, retry_after), 64},
		{"retry-after-ms", offsetof(struct xfer, retry_after_ms), 64},
		{"x-request-id", offsetof(struct xfer, request_id), 256},
		{"request-id", offsetof(struct xfer, request_id), 256},
		{"apim-request-id", offsetof(struct xfer, request_id), 256},
		{"content-type", offsetof(struct xfer, content_type), 128},
	};
	size_t i, nlen;

	x->last_byte = geak_now();
	x->heard = 1;
	if (len >= 5 && !memcmp(p, "HTTP/", 5)) {
		/* A new response (after 100 Continue): forget the last one's. */
		x->retry_after[0] = x->retry_after_ms[0] = x->content_type[0] = '\0';
		return len;
	}
	if (!colon)
		return len;
	nlen = (size_t)(colon - p);
	for (i = 0; i < sizeof wanted / sizeof *wanted; i++)
		if (strlen(wanted[i].name) == nlen && !strncasecmp(p, wanted[i].name, nlen))
			header_value((char *)x + wanted[i].off, wanted[i].cap, colon + 1,
			    len - nlen - 1);
	return len;
}

static void
start_attempt(struct run *r, struct xfer *x)
{
	const struct geak_llm_config *cfg = &r->llm->cfg;
	CURL *e = curl_easy_init();

	if (!e)
		geak_die(GEAK_EXIT_FATAL, "could not create a curl handle");
	geak_llm_answer_reset(&x->ans);
	geak_sse_free(&x->sse);
	geak_sse_init(&x->sse, on_event, x);
	x->decided = x->sse_mode = 0;
	x->status = 0;
	x->heard = 0;
	x->retry_after[0] = x->retry_after_ms[0] = x->request_id[0] = x->content_type[0] = '\0';
	x->errbuf[0] = '\0';
	x->easy = e;
	x->waiting = 0;
	x->attempts++;
	curl_easy_setopt(e, CURLOPT_URL, r->llm->endpoint);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, x->body);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(cfg->connect_timeout * 1000));
	/* Long generations are legitimate; silence is not.  turn() watches
	 * the time since the last byte; curl's own check, which averages
	 * over a few seconds, is the backstop. */
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)ceil(cfg->stall_timeout));
	curl_easy_setopt(e, CURLOPT_USERAGENT, "geak/" GEAK_VERSION);
	if (x->attempts == 1)
		x->started = geak_now();
	/* turn() keeps the deadline; curl's own limit is the backstop. */
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
	    (long)((x->started + cfg->max_time - geak_now()) * 1000) + 1000);
	if (curl_multi_add_handle(r->multi, e) != CURLM_OK)
		geak_die(GEAK_EXIT_FATAL, "could not start a transfer");
	x->last_byte = geak_now();
}

static void
fill_reply(struct xfer *x, struct geak_llm_reply *rep)
{
	memset(rep, 0, sizeof *rep);
	rep->text = x->ans.text.data ? x->ans.text.data : "";
	rep->finish_reason = x->ans.finish;
	rep->http_status = x->status;
	rep->request_id = x->request_id[0] ? x->request_id : x->ans.id;
	rep->usage = x->ans.usage;
	rep->latency_ms = x->started > 0 ? (geak_now() - x->started) * 1000.0 : 0;
	rep->attempts = x->attempts;
	rep->key = x->key;
}

/* Under llm->mu.  An answer from the journal was paid for by the run
 * that received it, which put it in the ledger then. */
static void
account(struct geak_llm *llm, const struct geak_llm_reply *rep)
{
	llm->totals.calls++;
	llm->totals.input_tokens += rep->usage.input_tokens;
	llm->totals.output_tokens += rep->usage.output_tokens;
	if (!rep->replayed) {
		double cost = geak_llm_cost(&llm->price, &rep->usage);
		llm->totals.cost += cost;
		llm->budget_tokens += rep->usage.input_tokens + rep->usage.output_tokens;
		if (llm->cfg.ledger_path && !rep->journaled)
			geak_llm_ledger_add(llm, &rep->usage, cost, llm->price.known);
	}
}

/* With -v, each answer; failures are the caller's to report, since it
 * knows which record they belong to. */
static void
report(struct run *r, struct xfer *x, const struct geak_llm_reply *rep)
{
	if (!r->llm->cfg.verbose || !rep->ok)
		return;
	geak_warn("llm: request %zu (sample %d): ok in %.1f s, %d attempt%s, %ld+%ld tokens%s",
	    x->index, x->req->sample, rep->latency_ms / 1000, rep->attempts,
	    rep->attempts == 1 ? "" : "s", rep->usage.input_tokens, rep->usage.output_tokens,
	    rep->replayed ? " (replayed)" : rep->journaled ? " (from the journal)" : "");
}

/* One of the headers holds the key: wipe them before freeing. */
static void
free_headers(struct curl_slist *h)
{
	struct curl_slist *p;

	for (p = h; p; p = p->next)
		memset(p->data, 0, strlen(p->data));
	curl_slist_free_all(h);
}

/* *field, or a redacted copy of it put in *copy (for the caller to
 * free) where it holds a credential the tool keeps. */
static void
redact_field(const char **field, char **copy)
{
	*copy = NULL;
	if (!*field || !geak_secrets_count())
		return;
	*copy = geak_xstrdup(*field);
	if (geak_redact(copy))
		*field = *copy;
}

/* Hand a finished request to the caller and free its slot.  Every reply,
 * from the server, a file or the client itself, passes here: what it
 * says is redacted before anything records, prints or keeps it. */
static void
complete(struct run *r, struct xfer *x, struct geak_llm_reply *rep)
{
	struct geak_llm *llm = r->llm;
	int live = rep->ok && !rep->replayed && !rep->journaled;
	char *copies[4];
	const char **fields[4] = { &rep->text, &rep->error, &rep->finish_reason,
	    &rep->request_id };

	for (size_t i = 0; i < 4; i++)
		redact_field(fields[i], &copies[i]);

	pthread_mutex_lock(&llm->mu);
	if (rep->ok || rep->attempts > 0)
		account(llm, rep);
	if (x->counted)
		llm->in_flight--;
	pthread_mutex_unlock(&llm->mu);
	if (live && llm->record_fd >= 0)
		geak_llm_record_write(llm, llm->record_fd, x->req, rep);
	if (live && llm->journal_fd >= 0)
		geak_llm_record_write(llm, llm->journal_fd, x->req, rep);
	report(r, x, rep);
	r->done(x->index, x->req, rep, r->ctx);
	for (size_t i = 0; i < 4; i++)
		free(copies[i]);
	r->completed++;
	geak_llm_answer_reset(&x->ans);
	geak_sse_free(&x->sse);
	free_headers(x->headers);
	free(x->body);
	memset(x, 0, sizeof *x);
}

static void
fail(struct run *r, struct xfer *x, const char *kind, char *msg)
{
	struct geak_llm_reply rep;

	fill_reply(x, &rep);
	rep.error_kind = kind;
	rep.error = msg;
	complete(r, x, &rep);
	free(msg);
}

static void
succeed(struct run *r, struct xfer *x)
{
	struct geak_llm_reply rep;

	fill_reply(x, &rep);
	rep.ok = 1;
	complete(r, x, &rep);
}

/* Wait and try again, or give up when the caps say so. */
static void
retry(struct run *r, struct xfer *x, const char *kind, char *msg)
{
	const struct geak_llm_config *cfg = &r->llm->cfg;
	double delay;

	if (x->attempts >= cfg->max_attempts) {
		char *m = geak_xasprintf("%s (gave up after %d attempts)", msg, x->attempts);
		free(msg);
		fail(r, x, kind, m);
		return;
	}
	if (geak_stopping()) {
		char *m = geak_xasprintf("%s (not retried: stopping)", msg);
		free(msg);
		fail(r, x, "stopped", m);
		return;
	}
	delay = geak_llm_retry_delay(x->attempts + 1, x->retry_after_ms[0] ? x->retry_after_ms : NULL,
	    x->retry_after[0] ? x->retry_after : NULL, RETRY_DELAY_CAP);
	if (geak_now() + delay >= x->started + cfg->max_time) {
		char *m = geak_xasprintf("%s (gave up: a retry would pass --max-time %g)",
		    msg, cfg->max_time);
		free(msg);
		fail(r, x, "timeout", m);
		return;
	}
	if (x->waited + delay > cfg->max_wait) {
		char *m = geak_xasprintf("%s (gave up: waiting %.1f s more would pass --max-wait %g)",
		    msg, delay, cfg->max_wait);
		free(msg);
		fail(r, x, kind, m);
		return;
	}
	if (cfg->verbose) {
		geak_warn("llm: request %zu: %s; retrying in %.1f s (attempt %d of %d)",
		    x->index, msg, delay, x->attempts + 1, cfg->max_attempts);
	}
	free(msg);
	x->waited += delay;
	x->resume_at = geak_now() + delay;
	x->waiting = 1;
}

static void
http_error(struct run *r, struct xfer *x)
{
	char *provider = geak_llm_error_message(x->ans.raw.data, x->ans.raw.len);
	char *msg = geak_xasprintf("HTTP %ld from %s%s%s", x->status, r->llm->endpoint,
	    provider ? ": " : "", provider ? provider : "");

	free(provider);
	if (geak_llm_retryable_status(x->status))
		retry(r, x, "http", msg);
	else
		fail(r, x, x->status == 401 || x->status == 403 ? "auth" : "http", msg);
}

static void
past_deadline(struct run *r, struct xfer *x)
{
	if (x->easy) {
		curl_multi_remove_handle(r->multi, x->easy);
		curl_easy_cleanup(x->easy);
		x->easy = NULL;
	}
	fail(r, x, "timeout", geak_xasprintf("no whole answer after %g s (--max-time), "
	    "%zu bytes of answer so far, %d attempt%s", r->llm->cfg.max_time, x->ans.text.len,
	    x->attempts, x->attempts == 1 ? "" : "s"));
}

static void
transfer_error(struct run *r, struct xfer *x, CURLcode res)
{
	if (res == CURLE_OPERATION_TIMEDOUT && geak_now() >= x->started + r->llm->cfg.max_time)
		past_deadline(r, x);
	else if (res == CURLE_OPERATION_TIMEDOUT && (x->status || strstr(x->errbuf, "too slow")))
		retry(r, x, "stall", geak_xasprintf("no data for %g s: the reply stalled",
		    r->llm->cfg.stall_timeout));
	else
		retry(r, x, "network", geak_xasprintf("%s: %s", r->llm->endpoint,
		    x->errbuf[0] ? x->errbuf : curl_easy_strerror(res)));
}

static void
too_large(struct run *r, struct xfer *x)
{
	fail(r, x, "too_large", geak_xasprintf("the reply passed %u MiB", GEAK_LLM_MAX_REPLY >> 20));
}

static void
answer_done(struct run *r, struct xfer *x)
{
	const char *why = NULL;

	if (x->sse_mode) {
		geak_sse_finish(&x->sse);
		if (!x->ans.done)
			retry(r, x, "truncated", geak_xasprintf("the stream ended before its end "
			    "marker, after %zu bytes of answer", x->ans.text.len));
		else
			succeed(r, x);
		return;
	}
	if (geak_llm_parse_reply(x->llm, &x->ans, &why) < 0)
		fail(r, x, "provider", geak_xasprintf("%s: %s", r->llm->endpoint, why));
	else if (x->ans.too_large)
		too_large(r, x);
	else
		succeed(r, x);
}

/* The server answered, then went silent for longer than --stall-timeout. */
static void
stalled(struct run *r, struct xfer *x)
{
	curl_multi_remove_handle(r->multi, x->easy);
	curl_easy_cleanup(x->easy);
	x->easy = NULL;
	retry(r, x, "stall", geak_xasprintf("no data for %g s: the reply stalled",
	    r->llm->cfg.stall_timeout));
}

static void
attempt_done(struct run *r, struct xfer *x, CURLcode res)
{
	if (!x->decided)
		decide(x);
	curl_multi_remove_handle(r->multi, x->easy);
	curl_easy_cleanup(x->easy);
	x->easy = NULL;
	if (x->ans.too_large)
		too_large(r, x);
	else if (x->ans.event_error && x->ans.event_overloaded && x->ans.text.len == 0)
		retry(r, x, "provider", geak_xasprintf("error event: %s", x->ans.event_error));
	else if (x->ans.event_error)
		fail(r, x, "provider", geak_xasprintf("error event after %zu bytes of answer: %s",
		    x->ans.text.len, x->ans.event_error));
	else if (res != CURLE_OK)
		transfer_error(r, x, res);
	else if (x->status / 100 != 2)
		http_error(r, x);
	else
		answer_done(r, x);
}

/* An answer kept in a file: --replay's, or the journal's (an exchange
 * made before, whose attempts count as they were). */
static void
from_file(struct run *r, struct xfer *x, json_t *rec, int journaled)
{
	struct geak_llm_reply rep;
	json_t *u = json_object_get(rec, "usage");

	memset(&rep, 0, sizeof rep);
	rep.ok = 1;
	rep.replayed = !journaled;
	rep.journaled = journaled;
	if (journaled)
		rep.attempts = (int)json_integer_value(json_object_get(rec, "attempts"));
	rep.key = x->key;
	rep.text = json_string_value(json_object_get(rec, "text"));
	rep.finish_reason = json_string_value(json_object_get(rec, "finish_reason"));
	rep.request_id = json_string_value(json_object_get(rec, "request_id"));
	rep.latency_ms = json_number_value(json_object_get(rec, "latency_ms"));
	rep.usage.input_tokens = (long)json_integer_value(json_object_get(u, "input_tokens"));
	rep.usage.output_tokens = (long)json_integer_value(json_object_get(u, "output_tokens"));
	rep.usage.cached_input_tokens =
	    (long)json_integer_value(json_object_get(u, "cached_input_tokens"));
	rep.usage.reasoning_tokens =
	    (long)json_integer_value(json_object_get(u, "reasoning_tokens"));
	complete(r, x, &rep);
}

/* Under llm->mu.  With --ledger the limits count what every process
 * that shares it spent; without, this process's own. */
static int
over_budget(struct geak_llm *llm, char **why)
{
	const struct geak_llm_config *cfg = &llm->cfg;
	struct geak_llm_totals led;
	long tokens = llm->budget_tokens;
	double cost = llm->totals.cost;
	const char *whose = "";

	if (cfg->max_tokens_total < 0 && cfg->max_cost < 0)
		return 0;
	if (cfg->ledger_path && geak_llm_ledger_read(llm, &led) == 0) {
		tokens = led.input_tokens + led.output_tokens;
		cost = led.cost;
		whose = " by the run (--ledger)";
	}
	if (cfg->max_tokens_total >= 0 && tokens >= cfg->max_tokens_total) {
		*why = geak_xasprintf("not sent: %ld tokens used%s, --max-tokens-total is %ld",
		    tokens, whose, cfg->max_tokens_total);
		return 1;
	}
	if (cfg->max_cost >= 0 && cost >= cfg->max_cost) {
		*why = geak_xasprintf("not sent: $%.4f spent%s reached --max-cost %g", cost,
		    whose, cfg->max_cost);
		return 1;
	}
	return 0;
}

/* Take request i into slot x: answer it at once (replay, journal,
 * budget, stop) or send it. */
static void
begin(struct run *r, struct xfer *x, size_t i, struct geak_llm_request *req)
{
	struct geak_llm *llm = r->llm;
	char *why = NULL;
	json_t *hit = NULL;
	int refused;

	memset(x, 0, sizeof *x);
	x->llm = llm;
	x->index = i;
	x->req = req;
	x->used = 1;
	geak_llm_key(llm, req, x->key);
	if (llm->replay) {
		if ((hit = geak_llm_replay_find(llm, x->key)))
			from_file(r, x, hit, 0);
		else
			fail(r, x, "replay_miss", geak_xasprintf("--replay %s has no exchange %.16s "
			    "for this request", llm->cfg.replay_path, x->key));
		return;
	}
	pthread_mutex_lock(&llm->mu);
	if (llm->journal)
		hit = json_incref(geak_llm_journal_take(llm, x->key));
	refused = !hit && over_budget(llm, &why);
	if (!hit && !refused)
		x->counted = 1, llm->in_flight++;
	pthread_mutex_unlock(&llm->mu);
	if (hit) {
		from_file(r, x, hit, 1);
		json_decref(hit);
	} else if (refused) {
		fail(r, x, "budget", why);
	} else if (geak_stopping()) {
		fail(r, x, "stopped", geak_xstrdup("not sent: stopping"));
	} else {
		x->body = geak_llm_body(llm, req, llm->cfg.stream);
		x->headers = geak_llm_headers(llm, llm->cfg.stream);
		start_attempt(r, x);
	}
}

/* With -v and no terminal (a log), a line now and then while answers
 * are streaming: on a terminal the record loop's progress line says it.
 * The line speaks for every thread's requests. */
static void
show_progress(struct run *r, int in_flight)
{
	struct geak_llm *llm = r->llm;
	double now = geak_now();

	if (!llm->progress || in_flight == 0)
		return;
	pthread_mutex_lock(&llm->mu);
	if (now - llm->last_progress < PROGRESS_LOG_EVERY) {
		pthread_mutex_unlock(&llm->mu);
		return;
	}
	if (llm->last_progress == 0) {
		llm->last_progress = now; /* no line for short runs */
		pthread_mutex_unlock(&llm->mu);
		return;
	}
	geak_warn("llm: %ld done, %ld in flight", llm->totals.calls, llm->in_flight);
	llm->last_progress = now;
	pthread_mutex_unlock(&llm->mu);
}

/* One turn: start what may start, let curl work, collect what finished;
 * returns how long the next poll may sleep, in ms. */
static int
turn(struct run *r, size_t *next, struct geak_llm_request *reqs)
{
	double now = geak_now(), soonest = now + 1.0, stall = r->llm->cfg.stall_timeout;
	int i, running, in_flight = 0, queued;
	size_t completed = r->completed;
	CURLMsg *msg;

	for (i = 0; i < r->nslots; i++) {
		struct xfer *x = &r->slots[i];
		while (!x->used && *next < r->n) {
			size_t k = (*next)++;
			begin(r, x, k, &reqs[k]);
		}
		if (x->used && now >= x->started + r->llm->cfg.max_time) {
			past_deadline(r, x);
			continue;
		}
		if (x->used && x->waiting && geak_stopping()) {
			fail(r, x, "stopped", geak_xstrdup("given up while waiting to retry: stopping"));
			continue;
		}
		if (x->used && x->started + r->llm->cfg.max_time < soonest)
			soonest = x->started + r->llm->cfg.max_time;
		if (x->used && x->waiting && x->resume_at <= now)
			start_attempt(r, x);
		if (x->used && x->waiting && x->resume_at < soonest)
			soonest = x->resume_at;
		if (x->used && x->easy && x->heard && now - x->last_byte > stall)
			stalled(r, x);
		else if (x->used && x->easy && x->last_byte + stall < soonest)
			soonest = x->last_byte + stall;
		in_flight += x->used;
	}
	curl_multi_perform(r->multi, &running);
	while ((msg = curl_multi_info_read(r->multi, &queued)))
		if (msg->msg == CURLMSG_DONE) {
			struct xfer *x;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			attempt_done(r, x, msg->data.result);
		}
	show_progress(r, in_flight);
	/* A slot just came free: fill it now, not after the poll. */
	if (r->completed != completed && *next < r->n)
		return 0;
	return soonest <= now ? 0 : (int)((soonest - now) * 1000) + 1;
}

struct geak_llm_session *
geak_llm_session_open(struct geak_llm *llm)
{
	struct geak_llm_session *s = geak_xcalloc(1, sizeof *s);

	s->llm = llm;
	if (!(s->multi = curl_multi_init()))
		geak_die(GEAK_EXIT_FATAL, "could not create a curl multi handle");
	curl_multi_setopt(s->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
	    (long)(llm->cfg.jobs > 0 ? llm->cfg.jobs : 1));
	return s;
}

void
geak_llm_session_close(struct geak_llm_session *s)
{
	if (!s)
		return;
	curl_multi_cleanup(s->multi);
	free(s);
}

int
geak_llm_session_run(struct geak_llm_session *s, struct geak_llm_request *reqs, size_t n,
	geak_llm_done_fn *done, void *ctx)
{
	struct geak_llm *llm = s->llm;
	struct run r = {0};
	size_t next = 0;
	int jobs = llm->cfg.jobs > 0 ? llm->cfg.jobs : 1;

	r.llm = llm;
	r.multi = s->multi;
	r.done = done;
	r.ctx = ctx;
	r.n = n;
	r.nslots = n < (size_t)jobs ? (int)n : jobs;
	r.slots = geak_xcalloc((size_t)(r.nslots ? r.nslots : 1), sizeof *r.slots);
	while (r.completed < n) {
		int wait_ms = turn(&r, &next, reqs);
		if (r.completed < n && wait_ms > 0)
			curl_multi_poll(r.multi, NULL, 0, wait_ms, NULL);
	}
	free(r.slots);
	return 0;
}

int
geak_llm_run(struct geak_llm *llm, struct geak_llm_request *reqs, size_t n,
	geak_llm_done_fn *done, void *ctx)
{
	struct geak_llm_session *s = geak_llm_session_open(llm);
	int rc = geak_llm_session_run(s, reqs, n, done, ctx);

	geak_llm_session_close(s);
	return rc;
}
