/* llmstage.c: the model's part of a stage, one record per slot thread. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llmstage.h"
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
	struct geak_llm_session **sessions; /* one per model */
};

/* What one request came to, for the slot that made it. */
struct call {
	struct slot *slot;
	struct geak_llm *llm;
	json_t *rec;
	int verdict;
};

/* The ensemble's model for a record: by run and sample, in turn. */
static size_t
model_of(const struct geak_llm_stage *st, json_t *rec)
{
	json_t *run = json_object_get(rec, "run"), *sample = json_object_get(rec, "sample");
	json_int_t k = (json_is_integer(run) ? json_integer_value(run) : 0) +
	    (json_is_integer(sample) ? json_integer_value(sample) : 0);

	if (st->nmodels < 2)
		return 0;
	k %= (json_int_t)st->nmodels;
	return (size_t)(k < 0 ? k + (json_int_t)st->nmodels : k);
}

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
		geak_llm_set_error(rec, c->llm, reply);
		warn_error(rec);
		if (geak_llm_failure_is_the_runs(reply))
			note_run_failure(c->slot->run, rec);
		c->verdict = GEAK_FAILED;
		return;
	}
	kept = json_incref(json_object_get(rec, "llm"));
	geak_llm_account(rec, c->llm, reply);
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
	size_t m = model_of(st, rec);
	struct call c = { sl, st->nmodels ? st->models[m] : st->llm, rec, GEAK_FAILED };
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
	geak_llm_session_run(sl->sessions[m], &req, 1, on_done, &c);
	json_decref(req.messages);
	return c.verdict;
}

static size_t
split(void *arg, json_t *rec, const char *where, json_t ***parts)
{
	struct stage_run *run = arg;

	return run->st->split(run->st->ctx, rec, where, parts);
}

/* The stage's requests over all the ensemble's models; the cost is
 * known when it is for every model that was asked. */
static void
stage_totals(const struct geak_llm_stage *st, struct geak_llm_totals *sum)
{
	size_t n = st->nmodels ? st->nmodels : st->llm != NULL;

	*sum = (struct geak_llm_totals){ .cost_known = 1 };
	for (size_t m = 0; m < n; m++) {
		struct geak_llm_totals t;
		geak_llm_totals(st->nmodels ? st->models[m] : st->llm, &t);
		sum->calls += t.calls;
		sum->input_tokens += t.input_tokens;
		sum->output_tokens += t.output_tokens;
		sum->cost += t.cost;
		if (t.calls && !t.cost_known)
			sum->cost_known = 0;
	}
}

/* The requests' counts for the progress line and the summary: ", 12
 * requests, 34.5k tokens, $0.12". */
static void
tally(void *arg, const struct geak_pool_stats *ps, struct geak_buf *b, int final)
{
	struct stage_run *run = arg;
	struct geak_llm_totals t = { 0 };

	stage_totals(run->st, &t);
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

	size_t nm = st->nmodels ? st->nmodels : 1;

	pthread_mutex_init(&run.mu, NULL);
	for (long i = 0; i < n; i++) {
		slots[i].run = &run;
		slots[i].sessions = geak_xcalloc(nm, sizeof *slots[i].sessions);
		for (size_t m = 0; m < nm && st->llm; m++)
			slots[i].sessions[m] = geak_llm_session_open(st->nmodels ? st->models[m] : st->llm);
		slotp[i] = &slots[i];
	}
	struct geak_pool pool = {
		.paths = paths, .npaths = npaths, .nslots = n, .slots = slotp, .stoppable = 1,
		.split = st->split ? split : NULL, .fn = work, .arg = &run,
		.noun = st->noun ? st->noun : "done", .tally = tally,
	};
	status = geak_pool_run(&pool);
	for (long i = 0; i < n; i++) {
		for (size_t m = 0; m < nm; m++)
			geak_llm_session_close(slots[i].sessions[m]);
		free(slots[i].sessions);
	}
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

/* "PROVIDER:MODEL" names its provider where PROVIDER is one geak knows;
 * any other colon is the model's own ("llama3:8b"). */
static void
split_provider(char *name, struct geak_llm_config *c)
{
	static const char *const providers[] = { "openai", "anthropic", "azure" };
	char *colon = strchr(name, ':');

	c->model = name;
	for (size_t i = 0; colon && i < sizeof providers / sizeof *providers; i++)
		if ((size_t)(colon - name) == strlen(providers[i]) &&
		    !strncmp(name, providers[i], (size_t)(colon - name))) {
			*colon = '\0';
			c->provider = name;
			c->model = colon + 1;
		}
}

/* One client per model of the list; NULL after saying why. */
static struct geak_llm **
open_models(const struct geak_llm_config *cfg, const char *list, char **names, size_t *n)
{
	struct geak_llm **models;
	char *save = NULL;
	size_t k = 0;

	*n = 1;
	for (const char *p = list; *p; p++)
		*n += *p == ',';
	models = geak_xcalloc(*n, sizeof *models);
	*names = geak_xstrdup(list);
	for (char *tok = strtok_r(*names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct geak_llm_config c = *cfg;
		while (*tok == ' ')
			tok++;
		split_provider(tok, &c);
		if (!*c.model)
			continue;
		/* Shared out, so that the ensemble keeps within the budget;
		 * a ledger counts every model's spending already. */
		if (c.max_cost >= 0 && !c.ledger_path)
			c.max_cost /= (double)*n;
		if (c.max_tokens_total >= 0 && !c.ledger_path)
			c.max_tokens_total /= (long)*n;
		if (!(models[k] = geak_llm_open(&c))) {
			while (k > 0)
				geak_llm_close(models[--k]);
			free(models);
			return NULL;
		}
		k++;
	}
	if (k == 0) {
		geak_warn("--model: no model named in '%s'", list);
		free(models);
		return NULL;
	}
	*n = k;
	return models;
}

/* --resolve: one line of JSON per model. */
static int
resolve_models(struct geak_llm_stage *st)
{
	for (size_t m = 0; m < st->nmodels; m++) {
		json_t *o = geak_llm_settings(st->models[m]);
		int bad = json_dumpf(o, stdout, JSON_COMPACT) < 0 || putchar('\n') == EOF;
		json_decref(o);
		if (bad)
			break;
	}
	return geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : 0;
}

static int
check_models(struct geak_llm_stage *st)
{
	int status = 0;

	for (size_t m = 0; m < st->nmodels; m++) {
		if (m)
			printf("\n");
		if (geak_llm_check(st->models[m]))
			status = GEAK_EXIT_RECORDS;
	}
	return geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : status;
}

int
geak_llm_stage_main(struct geak_llm_stage *st, const struct geak_llm_config *cfg,
    char *const *paths, int npaths)
{
	const char *list = cfg->model && *cfg->model ? cfg->model : getenv("GEAK_MODEL");
	char *names = NULL;
	int status;

	if (list && strchr(list, ','))
		st->models = open_models(cfg, list, &names, &st->nmodels);
	else if ((st->llm = geak_llm_open(cfg))) {
		st->models = geak_xcalloc(1, sizeof *st->models);
		st->models[0] = st->llm;
		st->nmodels = 1;
	}
	if (!st->models) {
		free(names);
		if (!cfg->check)
			return GEAK_EXIT_FATAL;
		/* The preflight's answer is yes or no, whatever failed. */
		printf("FAILED: configuration: see the message above\n");
		return geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : GEAK_EXIT_RECORDS;
	}
	st->llm = st->models[0];
	if (cfg->resolve)
		status = resolve_models(st);
	else if (cfg->check)
		status = check_models(st);
	else
		status = geak_llm_stage_run(st, paths, npaths);
	for (size_t m = 0; m < st->nmodels; m++)
		geak_llm_close(st->models[m]);
	free(st->models);
	free(names);
	st->models = NULL;
	st->nmodels = 0;
	st->llm = NULL;
	return status;
}
