/* llmstage.c: the model's part of a stage, one record per slot thread. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "llmstage.h"
#include "progress.h"
#include "record.h"
#include "recpool.h"

struct stage_run {
	struct geak_llm_stage *st;
	atomic_long run_failures;    /* requests that failed for the run's reasons */
	pthread_mutex_t mu;          /* guards first_failure */
	char *first_failure;
};

struct slot {
	struct stage_run *run;
	struct geak_llm_session *session;
};

/* What one request came to, for the slot that made it. */
struct call {
	struct slot *slot;
	json_t *rec;
	int verdict;
};

/* "prog: id (sample n): kind: message", once per failed request. */
static void
warn_error(json_t *rec)
{
	const char *id = geak_get_str(rec, "id");

	geak_warn("%s (sample %lld): %s: %s", id ? id : "record",
	    (long long)json_integer_value(json_object_get(rec, "sample")),
	    geak_get_str(rec, "error.kind"), geak_get_str(rec, "error.message"));
}

static void
note_run_failure(struct stage_run *run, json_t *rec)
{
	atomic_fetch_add(&run->run_failures, 1);
	pthread_mutex_lock(&run->mu);
	if (!run->first_failure)
		run->first_failure = geak_xasprintf("%s: %s", geak_get_str(rec, "error.kind"),
		    geak_get_str(rec, "error.message"));
	pthread_mutex_unlock(&run->mu);
}

static void
on_done(size_t index, const struct geak_llm_request *req, const struct geak_llm_reply *reply,
    void *ctx)
{
	struct call *c = ctx;
	struct geak_llm_stage *st = c->slot->run->st;
	json_t *rec = c->rec, *kept;

	(void)index, (void)req;
	if (!reply->ok) {
		geak_llm_set_error(rec, st->llm, reply);
		warn_error(rec);
		if (geak_llm_failure_is_the_runs(reply))
			note_run_failure(c->slot->run, rec);
		c->verdict = GEAK_FAILED;
		return;
	}
	kept = json_incref(json_object_get(rec, "llm"));
	geak_llm_account(rec, st->llm, reply);
	if (st->keep_llm_field) {
		if (kept)
			json_object_set(rec, "llm", kept);
		else
			json_object_del(rec, "llm");
	}
	json_decref(kept);
	c->verdict = st->apply(rec, reply->text, reply, st->ctx);
	if (c->verdict == GEAK_FAILED)
		warn_error(rec);
}

static int
work(void *arg, json_t *rec, const char *where)
{
	struct slot *sl = arg;
	struct geak_llm_stage *st = sl->run->st;
	struct call c = { sl, rec, GEAK_FAILED };
	struct geak_llm_request req = { 0 };
	json_t *sample = json_object_get(rec, "sample");
	char *prompt = NULL;
	int v = st->prompt(rec, where, st->ctx, &prompt);

	if (!prompt)
		return v;
	req.messages = geak_llm_messages(NULL, prompt);
	req.sample = json_is_integer(sample) ? (int)json_integer_value(sample) : 0;
	req.temperature = -1;
	free(prompt);
	geak_llm_session_run(sl->session, &req, 1, on_done, &c);
	json_decref(req.messages);
	return c.verdict;
}

static size_t
split(void *arg, json_t *rec, const char *where, json_t ***parts)
{
	struct stage_run *run = arg;

	return run->st->split(run->st->ctx, rec, where, parts);
}

/* The requests' counts for the progress line and the summary: ", 12
 * requests, 34.5k tokens, $0.12". */
static void
tally(void *arg, const struct geak_pool_stats *ps, struct geak_buf *b, int final)
{
	struct stage_run *run = arg;
	struct geak_llm_totals t = { 0 };

	if (run->st->llm)
		geak_llm_totals(run->st->llm, &t);
	if (t.calls == 0) {
		geak_buf_puts(b, ", no requests");
	} else {
		geak_buf_printf(b, ", %ld request%s, ", t.calls, t.calls == 1 ? "" : "s");
		geak_fmt_count(b, (double)(t.input_tokens + t.output_tokens));
		geak_buf_puts(b, " tokens");
	}
	if (t.calls && t.cost_known) {
		geak_buf_puts(b, ", ");
		geak_fmt_cost(b, t.cost);
	}
	if (run->st->tally)
		run->st->tally(run->st->ctx, b, final);
	if (final && ps->passed)
		geak_buf_printf(b, ", %zu passed through (%s)", ps->passed,
		    run->st->pass_why ? run->st->pass_why : "nothing to ask");
}

int
geak_llm_stage_run(struct geak_llm_stage *st, char *const *paths, int npaths)
{
	struct stage_run run = { .st = st };
	long n = st->llm ? geak_llm_jobs(st->llm) : 1;
	struct slot *slots = geak_xcalloc((size_t)n, sizeof *slots);
	void **slotp = geak_xcalloc((size_t)n, sizeof *slotp);
	int status;

	pthread_mutex_init(&run.mu, NULL);
	for (long i = 0; i < n; i++) {
		slots[i].run = &run;
		slots[i].session = st->llm ? geak_llm_session_open(st->llm) : NULL;
		slotp[i] = &slots[i];
	}
	struct geak_pool pool = {
		.paths = paths, .npaths = npaths, .nslots = n, .slots = slotp, .stoppable = 1,
		.split = st->split ? split : NULL, .fn = work, .arg = &run,
		.noun = st->noun ? st->noun : "done", .tally = tally,
	};
	status = geak_pool_run(&pool);
	for (long i = 0; i < n; i++)
		geak_llm_session_close(slots[i].session);
	if (atomic_load(&run.run_failures) > 0) {
		long k = atomic_load(&run.run_failures);
		geak_warn("%ld request%s failed for a reason that is not the record's (first: %s): "
		    "the output is not a result to keep", k, k == 1 ? "" : "s", run.first_failure);
		if (status == GEAK_EXIT_OK || status == GEAK_EXIT_RECORDS)
			status = GEAK_EXIT_RUN;
	}
	free(run.first_failure);
	pthread_mutex_destroy(&run.mu);
	free(slots);
	free(slotp);
	return status;
}

int
geak_llm_stage_main(struct geak_llm_stage *st, const struct geak_llm_config *cfg,
    char *const *paths, int npaths)
{
	int status;

	if (!(st->llm = geak_llm_open(cfg))) {
		if (!cfg->check)
			return GEAK_EXIT_FATAL;
		/* The preflight's answer is yes or no, whatever failed. */
		printf("FAILED: configuration: see the message above\n");
		return geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : GEAK_EXIT_RECORDS;
	}
	if (cfg->check) {
		status = geak_llm_check(st->llm);
		if (geak_fshut(stdout, "stdout"))
			status = GEAK_EXIT_FATAL;
	} else {
		status = geak_llm_stage_run(st, paths, npaths);
	}
	geak_llm_close(st->llm);
	st->llm = NULL;
	return status;
}
