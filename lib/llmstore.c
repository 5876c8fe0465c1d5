/* llmstore.c: --record appends each exchange as one JSON line; --replay
 * answers from such a file.  An exchange is keyed by the SHA-256 of the
 * canonical request: provider, model, messages, the parameters that
 * change the answer, and the sample index.  The endpoint and the key are
 * not part of it, so a recording replays anywhere, with no key. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llmint.h"
#include "record.h"

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

int
geak_llm_replay_load(struct geak_llm *llm, const char *path)
{
	struct geak_input *in;
	char *paths[1] = {(char *)path};
	json_t *rec;
	int r, rc = 0;

	if (access(path, R_OK) < 0) {
		geak_warn("--replay %s:", path);
		return -1;
	}
	llm->replay = json_object();
	in = geak_input_open(paths, 1);
	while ((r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		const char *key = json_string_value(json_object_get(rec, "key"));
		json_t *reply = json_object_get(rec, "reply");

		if (r == GEAK_READ_FAIL || r == GEAK_READ_BAD) {
			rc = -1;
		} else if (!key || !json_is_string(json_object_get(reply, "text"))) {
			geak_warn("%s: want an exchange with key and reply.text",
			    geak_input_where(in));
			rc = -1;
		} else {
			json_object_set(llm->replay, key, reply);
		}
		json_decref(rec);
		if (rc)
			break;
	}
	geak_input_close(in);
	return rc;
}

json_t *
geak_llm_replay_find(struct geak_llm *llm, const char *key)
{
	return llm->replay ? json_object_get(llm->replay, key) : NULL;
}

int
geak_llm_record_open(struct geak_llm *llm, const char *path)
{
	llm->record_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
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
geak_llm_record_write(struct geak_llm *llm, const struct geak_llm_request *req,
	const struct geak_llm_reply *reply)
{
	json_t *line = json_pack("{s:s, s:o, s:{s:s, s:o, s:o, s:{s:I, s:I, s:I, s:I}, s:f}}",
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
	    "latency_ms", reply->latency_ms);
	char *s;
	size_t n;
	int rc = 0;

	if (!line || !(s = json_dumps(line, JSON_COMPACT)))
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	json_decref(line);
	/* One write per line: parallel recorders append whole lines.  The
	 * NUL becomes the newline; the string is not used as one after. */
	n = strlen(s);
	s[n] = '\n';
	if (geak_write_all(llm->record_fd, s, n + 1) < 0) {
		geak_warn("--record:");
		rc = -1;
	}
	free(s);
	return rc;
}
