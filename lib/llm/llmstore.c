/* llmstore.c: --record appends each exchange as one JSON line; --replay
 * answers from such a file; --journal does both, for one step of a loop
 * that may be stopped and run again.  An exchange is keyed by the SHA-256 of the
 * canonical request: provider, model, messages, the parameters that
 * change the answer, and the sample index.  The endpoint and the key are
 * not part of it, so a recording replays anywhere, with no key. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/llmint.h"
#include "record.h"
#include "secrets.h"

static json_t *
request_json(const struct geak_llm *llm, const struct geak_llm_request *req)
{
	double temp = req->temperature >= 0 ? req->temperature : llm->temperature;
	json_t *r = json_pack("{s:s, s:s, s:O, s:o, s:o, s:o, s:i}",
	    "provider", geak_llm_provider_name(llm),
	    "model", llm->model,
	    "messages", req->messages,
	    "temperature", temp >= 0 ? json_real(temp) : json_null(),
	    "max_tokens", llm->max_tokens > 0 ? json_integer(llm->max_tokens) : json_null(),
	    "reasoning_effort", llm->reasoning_effort ?
		json_string(llm->reasoning_effort) : json_null(),
	    "sample", req->sample);

	if (!r)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	return r;
}

void
geak_llm_key(const struct geak_llm *llm, const struct geak_llm_request *req, char out[65])
{
	json_t *r = request_json(llm, req);
	char *canon = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);

	if (!canon)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	geak_sha256_hex(canon, strlen(canon), out);
	free(canon);
	json_decref(r);
}

/* Each exchange of the file at path to add(llm, key, reply); 0, or -1
 * after reporting what is wrong.  Not strict: a line that is not an
 * exchange is skipped, with a warning (a journal is a cache: what it
 * cannot answer is asked again). */
static int
load_exchanges(struct geak_llm *llm, const char *path, const char *opt, int strict,
    void (*add)(struct geak_llm *, const char *, json_t *))
{
	struct geak_input *in;
	char *paths[1] = {(char *)path};
	json_t *rec;
	int r, rc = 0;

	in = geak_input_open(paths, 1);
	while ((r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		const char *key = json_string_value(json_object_get(rec, "key"));
		json_t *reply = json_object_get(rec, "reply");

		if (r == GEAK_READ_FAIL || r == GEAK_READ_BAD) {
			rc = -1;
		} else if (!key || !json_is_string(json_object_get(reply, "text"))) {
			geak_warn("%s %s: want an exchange with key and reply.text", opt,
			    geak_input_where(in));
			rc = -1;
		} else {
			add(llm, key, reply);
		}
		json_decref(rec);
		if (rc && !strict)
			rc = 0;
		else if (rc)
			break;
	}
	geak_input_close(in);
	return rc;
}

static void
add_replay(struct geak_llm *llm, const char *key, json_t *reply)
{
	json_object_set(llm->replay, key, reply);
}

int
geak_llm_replay_load(struct geak_llm *llm, const char *path)
{
	if (access(path, R_OK) < 0) {
		geak_warn("--replay %s:", path);
		return -1;
	}
	llm->replay = json_object();
	return load_exchanges(llm, path, "--replay", 1, add_replay);
}

/* A journal keeps every answer to a request asked several times, in
 * order: the n-th asking takes the n-th answer. */
static void
add_journal(struct geak_llm *llm, const char *key, json_t *reply)
{
	json_t *list = json_object_get(llm->journal, key);

	if (!list) {
		list = json_array();
		if (json_object_set_new(llm->journal, key, list) < 0)
			geak_die(GEAK_EXIT_FATAL, "out of memory");
	}
	if (json_array_append(list, reply) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
}

/* Exchanges hold the prompts and replies, a user's code among them: a
 * file made for them is its owner's alone. */
int
geak_llm_journal_open(struct geak_llm *llm, const char *path)
{
	llm->journal = json_object();
	llm->journal_used = json_object();
	if (!llm->journal || !llm->journal_used)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	if (access(path, F_OK) == 0 && load_exchanges(llm, path, "--journal", 0, add_journal) < 0)
		return -1;
	llm->journal_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (llm->journal_fd < 0) {
		geak_warn("--journal %s:", path);
		return -1;
	}
	return 0;
}

json_t *
geak_llm_journal_take(struct geak_llm *llm, const char *key)
{
	json_t *used = json_object_get(llm->journal_used, key);
	size_t n = json_is_integer(used) ? (size_t)json_integer_value(used) : 0;

	if (json_object_set_new(llm->journal_used, key, json_integer((json_int_t)n + 1)) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	return json_array_get(json_object_get(llm->journal, key), n);
}

json_t *
geak_llm_replay_find(struct geak_llm *llm, const char *key)
{
	return llm->replay ? json_object_get(llm->replay, key) : NULL;
}

int
geak_llm_record_open(struct geak_llm *llm, const char *path)
{
	llm->record_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (llm->record_fd < 0) {
		geak_warn("--record %s:", path);
		return -1;
	}
	return 0;
}

static json_t *
opt_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

int
geak_llm_record_write(struct geak_llm *llm, int fd, const struct geak_llm_request *req,
	const struct geak_llm_reply *reply)
{
	json_t *line = json_pack("{s:s, s:o, s:{s:s, s:o, s:o, s:{s:I, s:I, s:I, s:I}, s:f, s:i}}",
	    "key", reply->key,
	    "request", request_json(llm, req),
	    "reply",
	    "text", reply->text,
	    "finish_reason", opt_str(reply->finish_reason),
	    "request_id", opt_str(reply->request_id),
	    "usage",
	    "input_tokens", (json_int_t)reply->usage.input_tokens,
	    "output_tokens", (json_int_t)reply->usage.output_tokens,
	    "cached_input_tokens", (json_int_t)reply->usage.cached_input_tokens,
	    "reasoning_tokens", (json_int_t)reply->usage.reasoning_tokens,
	    "latency_ms", reply->latency_ms,
	    "attempts", reply->attempts);
	char *s;
	size_t n;
	int rc = 0;

	if (!line || !(s = json_dumps(line, JSON_COMPACT)))
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	json_decref(line);
	geak_redact(&s); /* the request's text too: nothing kept holds a key */
	/* One write per line: parallel recorders append whole lines.  The
	 * NUL becomes the newline; the string is not used as one after. */
	n = strlen(s);
	s[n] = '\n';
	if (geak_write_all(fd, s, n + 1) < 0) {
		geak_warn("%s:", fd == llm->journal_fd ? "--journal" : "--record");
		rc = -1;
	}
	free(s);
	return rc;
}
