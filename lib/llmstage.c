/* llmstage.c: chunked, parallel, order-keeping loop for LLM stages. */
#include <stdlib.h>
#include <string.h>

#include "llmstage.h"
#include "record.h"

/* Enough to keep every connection busy without holding a whole benchmark
 * in memory. */
#define CHUNK 64

struct pending {
	json_t *rec;
	char *prompt;  /* NULL: no call for this record */
	json_t *messages;
	int status;    /* GEAK_EXIT_OK or GEAK_EXIT_RECORDS */
};

struct chunk {
	struct geak_llm_stage *st;
	struct pending items[CHUNK];
	size_t n;
};

static void
on_done(size_t index, const struct geak_llm_request *req,
    const struct geak_llm_reply *reply, void *ctx)
{
	struct chunk *ch = ctx;
	struct pending *p = req->user;
	json_t *rec = p->rec, *kept;

	(void)index;
	if (!reply->ok) {
		geak_warn("%s: model call failed: %s", geak_get_str(rec, "id") ?
		    geak_get_str(rec, "id") : "record", reply->error ? reply->error : "unknown error");
		geak_llm_set_error(rec, ch->st->llm, reply);
		p->status = GEAK_EXIT_RECORDS;
		return;
	}
	kept = json_incref(json_object_get(rec, "llm"));
	geak_llm_account(rec, ch->st->llm, reply);
	if (ch->st->keep_llm_field) {
		if (kept)
			json_object_set(rec, "llm", kept);
		else
			json_object_del(rec, "llm");
	}
	json_decref(kept);
	if (ch->st->apply(rec, reply->text, ch->st->ctx) != 0)
		p->status = GEAK_EXIT_RECORDS;
}

/* Ask for every prompt in the chunk, then write the chunk in order. */
static int
flush_chunk(struct chunk *ch, struct geak_output *out, size_t *calls)
{
	struct geak_llm_request reqs[CHUNK];
	size_t n = 0, i;
	int status = GEAK_EXIT_OK;

	for (i = 0; i < ch->n; i++) {
		struct pending *p = &ch->items[i];
		json_t *sample;
		if (!p->prompt)
			continue;
		sample = json_object_get(p->rec, "sample");
		p->messages = geak_llm_messages(NULL, p->prompt);
		memset(&reqs[n], 0, sizeof reqs[n]);
		reqs[n].messages = p->messages;
		reqs[n].sample = json_is_integer(sample) ? (int)json_integer_value(sample) : 0;
		reqs[n].temperature = -1;
		reqs[n].user = p;
		n++;
	}
	*calls += n;
	if (n && geak_llm_run(ch->st->llm, reqs, n, on_done, ch) < 0)
		status = GEAK_EXIT_FATAL;
	for (i = 0; i < ch->n; i++) {
		struct pending *p = &ch->items[i];
		if (p->status && !status)
			status = p->status;
		if (geak_output_write(out, p->rec) < 0)
			status = GEAK_EXIT_FATAL;
		json_decref(p->rec);
		json_decref(p->messages);
		free(p->prompt);
	}
	ch->n = 0;
	return status;
}

static int
worse(int a, int b)
{
	return a > b ? a : b;
}

int
geak_llm_stage_run(struct geak_llm_stage *st, char *const *paths, int npaths)
{
	struct geak_input *in = geak_input_open(paths, npaths);
	struct geak_output out;
	struct chunk *ch = geak_xcalloc(1, sizeof *ch);
	size_t seen = 0, calls = 0;
	json_t *rec;
	int r, status = GEAK_EXIT_OK;

	ch->st = st;
	geak_output_init(&out, stdout, "stdout");
	while (status != GEAK_EXIT_FATAL && (r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		struct pending *p;
		if (r == GEAK_READ_FAIL) {
			status = GEAK_EXIT_FATAL;
			continue;
		}
		p = &ch->items[ch->n++];
		memset(p, 0, sizeof *p);
		p->rec = rec;
		if (r == GEAK_READ_BAD)
			p->status = GEAK_EXIT_RECORDS;
		else if (!geak_has_error(rec)) {
			p->prompt = st->prompt(rec, geak_input_where(in), st->ctx);
			if (!p->prompt && geak_has_error(rec))
				p->status = GEAK_EXIT_RECORDS;
		}
		seen++;
		if (ch->n == CHUNK) {
			status = worse(status, flush_chunk(ch, &out, &calls));
			if (st->progress)
				st->progress(seen, calls, st->ctx);
		}
	}
	status = worse(status, flush_chunk(ch, &out, &calls));
	if (st->progress)
		st->progress(seen, calls, st->ctx);
	geak_input_close(in);
	if (geak_output_close(&out) < 0)
		status = GEAK_EXIT_FATAL;
	free(ch);
	return status;
}

int
geak_llm_stage_main(struct geak_llm_stage *st, const struct geak_llm_config *cfg,
    char *const *paths, int npaths)
{
	int status;

	if (!(st->llm = geak_llm_open(cfg)))
		return GEAK_EXIT_FATAL;
	status = cfg->check ? geak_llm_check(st->llm) : geak_llm_stage_run(st, paths, npaths);
	geak_llm_close(st->llm);
	st->llm = NULL;
	return status;
}
