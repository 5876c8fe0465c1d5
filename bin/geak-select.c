/* geak-select: merge runs and iterations per task, pick the fastest
 * correct candidate, keep a beam, and summarise the metrics. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memory.h"
#include "report/metrics.h"
#include "record.h"
#include "recpool.h"
#include "report/report.h"

/* One evaluated candidate: a record's current code or a best entry. */
struct cand {
	json_t *rec;        /* the record it came from (a reference) */
	json_t *entry;      /* the best entry, or NULL for the record's code */
	const char *sha;
	const char *model;  /* the model that wrote the code, or NULL */
	enum geak_outcome out;
	double speedup, ms;
	long run, iter;
	size_t seq;         /* input order, the last tie-breaker */
};

/* What a lineage had spent by an iteration: the largest usage_total of
 * its records of that iteration. */
struct spend {
	long iter;
	long calls, input_tokens, output_tokens;
	double cost;        /* NAN: no record of it said */
};

struct lineage { /* (run, sample): usage_total grows along it */
	long run, sample;
	const char *model;  /* the lineage's model (an ensemble keeps it) */
	struct spend *at;   /* one per iteration seen */
	size_t nat;
};

struct task {
	char *id;
	json_t *difficulty;
	json_t *last;       /* the last record seen, the fallback pick */
	struct cand *cands;
	size_t ncands;
	long *runs;
	size_t nruns;
	struct lineage *lines;
	size_t nlines;
	json_t *name;       /* task.name, where a record gave it */
	json_t *reference;  /* task.reference: the code a diff starts from */
	json_t *first;      /* the earliest attempt's code, failing that */
	long first_iter;
	json_t *attempts;   /* every evaluated or failed attempt, as history */
	char *file;         /* its kernel file's name, once named */
};

struct opts {
	long beam;
	long *ks;
	size_t nks;
	const char *summary_path, *report_path;
	const char *kernels_dir;    /* --kernels: one file per kept kernel */
	int compare;                /* --compare A B */
	int summary_only;
	long total_tasks;           /* accuracy denominator; 0: tasks seen */
};

/* The p of fast_p, ascending: KernelBench's 0, 1, 1.5 and 2, and those
 * of -p. */
static double *fast_ps;
static size_t nfast_ps;

static struct task *tasks;
static size_t ntasks;
static size_t seq;
/* The models the records name, in the order first seen; interned, so a
 * candidate's model outlives its record's. */
static char **model_names;
static size_t nmodel_names;

static const char *
model_named(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < nmodel_names; i++)
		if (!strcmp(model_names[i], name))
			return model_names[i];
	model_names = geak_xrealloc(model_names, (nmodel_names + 1) * sizeof *model_names);
	return model_names[nmodel_names++] = geak_xstrdup(name);
}

/* Where the records came from, for the report: models, devices, harness
 * versions, each with how many records named it. */
struct tag {
	char *name;
	long n;
};
struct tags {
	struct tag *v;
	size_t n;
};
static struct tags models, devices, harnesses;
static long replayed, live;

static json_t *usage_json(long max_iter);
static struct spend lineage_spend(const struct lineage *l, long max_iter);
static void spend_add(struct spend *sum, long *unpriced, const struct spend *most);

static long
int_field(json_t *obj, const char *key, long dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (long)json_integer_value(v) : dflt;
}

static double
num_field(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static struct task *
task_of(const char *id)
{
	for (size_t i = 0; i < ntasks; i++)
		if (strcmp(tasks[i].id, id) == 0)
			return &tasks[i];
	tasks = geak_xrealloc(tasks, (ntasks + 1) * sizeof *tasks);
	memset(&tasks[ntasks], 0, sizeof *tasks);
	tasks[ntasks].id = geak_xstrdup(id);
	tasks[ntasks].attempts = json_array();
	return &tasks[ntasks++];
}

static void
note_run(struct task *t, long run)
{
	for (size_t i = 0; i < t->nruns; i++)
		if (t->runs[i] == run)
			return;
	t->runs = geak_xrealloc(t->runs, (t->nruns + 1) * sizeof *t->runs);
	t->runs[t->nruns++] = run;
}

/* The same candidate shows up in every later iteration's best list: keep
 * one per (run, code), preferring the record that evaluated it. */
static struct cand *
find_cand(struct task *t, long run, const char *sha)
{
	for (size_t i = 0; i < t->ncands; i++)
		if (t->cands[i].run == run && strcmp(t->cands[i].sha, sha) == 0)
			return &t->cands[i];
	return NULL;
}

static void
add_cand(struct task *t, const struct cand *c)
{
	struct cand *old = find_cand(t, c->run, c->sha);

	if (old) {
		if (old->entry && !c->entry) {
			json_decref(old->rec);
			*old = *c;
			json_incref(c->rec);
		}
		return;
	}
	t->cands = geak_xrealloc(t->cands, (t->ncands + 1) * sizeof *t->cands);
	t->cands[t->ncands] = *c;
	json_incref(c->rec);
	t->ncands++;
}

static void
tag_add(struct tags *ts, const char *name)
{
	for (size_t i = 0; i < ts->n; i++)
		if (!strcmp(ts->v[i].name, name)) {
			ts->v[i].n++;
			return;
		}
	ts->v = geak_xrealloc(ts->v, (ts->n + 1) * sizeof *ts->v);
	ts->v[ts->n].name = geak_xstrdup(name);
	ts->v[ts->n++].n = 1;
}

static void
tags_free(struct tags *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		free(ts->v[i].name);
	free(ts->v);
	ts->v = NULL;
	ts->n = 0;
}

static void
note_provenance(json_t *rec)
{
	json_t *llm = json_object_get(rec, "llm");
	const char *device = geak_get_str(rec, "eval.device");
	const char *harness = geak_get_str(rec, "eval.harness");

	if (json_is_string(json_object_get(llm, "model"))) {
		char *m = geak_xasprintf("%s %s", geak_get_str(llm, "provider") ?
		    geak_get_str(llm, "provider") : "?", geak_get_str(llm, "model"));
		tag_add(&models, m);
		free(m);
		if (json_is_true(json_object_get(llm, "replayed")))
			replayed++;
		else
			live++;
	}
	if (device)
		tag_add(&devices, device);
	if (harness)
		tag_add(&harnesses, harness);
}

static struct lineage *
lineage_of(struct task *t, long run, long sample)
{
	for (size_t i = 0; i < t->nlines; i++)
		if (t->lines[i].run == run && t->lines[i].sample == sample)
			return &t->lines[i];
	t->lines = geak_xrealloc(t->lines, (t->nlines + 1) * sizeof *t->lines);
	memset(&t->lines[t->nlines], 0, sizeof *t->lines);
	t->lines[t->nlines].run = run;
	t->lines[t->nlines].sample = sample;
	return &t->lines[t->nlines++];
}

static void
note_usage(struct task *t, json_t *rec, long run)
{
	json_t *u = json_object_get(rec, "usage_total");
	struct lineage *l;
	struct spend *sp = NULL;
	long iter = int_field(rec, "iter", 0);
	double cost;

	if (!json_is_object(u))
		return;
	l = lineage_of(t, run, int_field(rec, "sample", 0));
	for (size_t i = 0; i < l->nat && !sp; i++)
		if (l->at[i].iter == iter)
			sp = &l->at[i];
	if (!sp) {
		l->at = geak_xrealloc(l->at, (l->nat + 1) * sizeof *l->at);
		sp = &l->at[l->nat++];
		*sp = (struct spend){ .iter = iter, .cost = NAN };
	}
	if (json_is_string(geak_get(rec, "llm.model")))
		l->model = model_named(geak_get_str(rec, "llm.model"));
	/* Totals only grow along a lineage: its largest is its whole cost. */
	if (int_field(u, "calls", 0) > sp->calls)
		sp->calls = int_field(u, "calls", 0);
	if (int_field(u, "input_tokens", 0) > sp->input_tokens)
		sp->input_tokens = int_field(u, "input_tokens", 0);
	if (int_field(u, "output_tokens", 0) > sp->output_tokens)
		sp->output_tokens = int_field(u, "output_tokens", 0);
	cost = num_field(u, "cost");
	if (!isnan(cost) && (isnan(sp->cost) || cost > sp->cost))
		sp->cost = cost;
}

static json_t *num_or_null(double v);

static int
same_str(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

/* The attempt a record stands for, once per (run, sample, iter, code):
 * the same record comes again in every later file of a run.  A record
 * without an eval of its own code or an error is no attempt. */
static void
note_attempt(struct task *t, json_t *rec, long run)
{
	enum geak_outcome out = geak_outcome(rec);
	long sample = int_field(rec, "sample", 0), iter = int_field(rec, "iter", 0);
	const char *sha = geak_get_str(rec, "code_sha"), *mode = geak_get_str(rec, "mode");
	json_t *code = json_object_get(rec, "code"), *a, *verdict;
	size_t i;

	if (!t->name && json_is_string(geak_get(rec, "task.name")))
		t->name = json_incref(geak_get(rec, "task.name"));
	if (!t->reference && json_is_string(geak_get(rec, "task.reference")))
		t->reference = json_incref(geak_get(rec, "task.reference"));
	if (json_is_string(code) && (!t->first || iter < t->first_iter)) {
		json_decref(t->first);
		t->first = json_incref(code);
		t->first_iter = iter;
	}
	if (out == GEAK_OUT_NONE && !geak_has_error(rec))
		return;
	json_array_foreach(t->attempts, i, a)
		if (int_field(a, "run", 0) == run && int_field(a, "sample", 0) == sample &&
		    int_field(a, "iter", 0) == iter && same_str(geak_get_str(a, "code_sha"), sha))
			return;
	if (out != GEAK_OUT_NONE)
		verdict = json_string(geak_outcome_name(out));
	else
		verdict = json_sprintf("%s: %s", geak_get_str(rec, "error.stage") ?
		    geak_get_str(rec, "error.stage") : "?", geak_get_str(rec, "error.kind") ?
		    geak_get_str(rec, "error.kind") : "?");
	double sp = num_field(json_object_get(rec, "eval"), "speedup");
	json_array_append_new(t->attempts, json_pack("{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o}",
	    "run", (json_int_t)run, "iter", (json_int_t)iter, "sample", (json_int_t)sample,
	    "mode", mode ? json_string(mode) : json_null(), "verdict", verdict,
	    "speedup", out == GEAK_OUT_CORRECT ? num_or_null(sp) : json_null(),
	    "model", json_is_string(geak_get(rec, "llm.model")) ?
	    json_string(geak_get_str(rec, "llm.model")) : json_null(),
	    "code_sha", sha ? json_string(sha) : json_null()));
}

static int
take_record(void *arg, json_t *rec, const char *where)
{
	const char *id = geak_get_str(rec, "id");
	json_t *best, *e, *d;
	struct task *t;
	struct cand c;
	size_t i;

	(void)arg, (void)where;
	if (!id)
		id = geak_get_str(rec, "task.name");
	if (!id)
		id = "(no id)";
	t = task_of(id);
	memset(&c, 0, sizeof c);
	c.rec = rec;
	c.run = int_field(rec, "run", 0);
	note_run(t, c.run);
	note_usage(t, rec, c.run);
	note_provenance(rec);
	d = geak_get(rec, "task.difficulty");
	if (json_is_integer(d) && !t->difficulty)
		t->difficulty = json_incref(d);
	json_decref(t->last);
	t->last = json_incref(rec);
	note_attempt(t, rec, c.run);
	if ((c.out = geak_outcome(rec)) != GEAK_OUT_NONE) {
		c.sha = geak_get_str(rec, "code_sha");
		c.model = model_named(geak_get_str(rec, "llm.model"));
		c.speedup = num_field(json_object_get(rec, "eval"), "speedup");
		c.ms = geak_eval_ms(json_object_get(rec, "eval"));
		c.iter = int_field(rec, "iter", 0);
		c.seq = seq++;
		add_cand(t, &c);
	}
	/* best holds only correct, unflagged, evaluator-measured entries. */
	best = json_object_get(rec, "best");
	json_array_foreach(best, i, e) {
		if (!json_is_string(json_object_get(e, "code_sha")))
			continue;
		c.entry = e;
		c.out = GEAK_OUT_CORRECT;
		c.sha = json_string_value(json_object_get(e, "code_sha"));
		c.model = model_named(json_string_value(json_object_get(e, "model")));
		c.speedup = num_field(e, "speedup");
		c.ms = num_field(e, "ms");
		c.iter = int_field(e, "iter", int_field(rec, "iter", 0));
		c.seq = seq++;
		add_cand(t, &c);
	}
	return GEAK_PASS;
}

/* Every line counts: a task that only ever failed did not pass. */
static void
count_record(void *arg, int verdict)
{
	(void)verdict;
	++*(size_t *)arg;
}

/* Rank of an outcome for picking: correct beats merely running. */
static int
outcome_rank(enum geak_outcome o)
{
	switch (o) {
	case GEAK_OUT_CORRECT: return 3;
	case GEAK_OUT_FLAGGED: case GEAK_OUT_WRONG: return 2;
	case GEAK_OUT_CALL_FAIL: return 1;
	default: return 0;
	}
}

/* qsort order: best first. */
static int
cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	int ra = outcome_rank(a->out), rb = outcome_rank(b->out);

	if (ra != rb)
		return rb - ra;
	if (isnan(a->speedup) != isnan(b->speedup))
		return isnan(a->speedup) ? 1 : -1;
	if (!isnan(a->speedup) && a->speedup != b->speedup)
		return a->speedup > b->speedup ? -1 : 1;
	if (!isnan(a->ms) && !isnan(b->ms) && a->ms != b->ms)
		return a->ms < b->ms ? -1 : 1;
	if (a->iter != b->iter)
		return a->iter < b->iter ? -1 : 1; /* found earlier: cheaper */
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Best candidate of t among runs/iterations allowed, of model (NULL:
 * any); NULL if none. */
static const struct cand *
pick_of(const struct task *t, long run, long max_iter, const char *model)
{
	const struct cand *best = NULL;

	for (size_t i = 0; i < t->ncands; i++) {
		const struct cand *c = &t->cands[i];
		if ((run >= 0 && c->run != run) || (max_iter >= 0 && c->iter > max_iter) ||
		    (model && c->model != model))
			continue;
		if (!best || cand_cmp(c, best) < 0)
			best = c;
	}
	return best;
}

static const struct cand *
pick(const struct task *t, long run, long max_iter)
{
	return pick_of(t, run, max_iter, NULL);
}

static int
passes_call(const struct cand *c)
{
	return c && c->out >= GEAK_OUT_WRONG;
}

static int
passes_exec(const struct cand *c)
{
	return c && c->out == GEAK_OUT_CORRECT;
}

static json_t *
num_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

/* The record that carries candidate c, as the artifact to apply. */
static json_t *
selected_record(const struct task *t, const struct cand *c, long rank)
{
	json_t *rec = geak_json_copy(c ? c->rec : t->last);

	if (!c)
		return rec;
	if (c->entry) {
		/* The code came from the best list: the record's own eval is
		 * of other code, so it goes. */
		json_object_set(rec, "code", json_object_get(c->entry, "code"));
		json_object_set(rec, "code_sha", json_object_get(c->entry, "code_sha"));
		if (json_is_string(json_object_get(c->entry, "reflection")))
			json_object_set(rec, "reflection", json_object_get(c->entry, "reflection"));
		else
			json_object_del(rec, "reflection");
		json_object_del(rec, "eval");
	}
	json_object_set_new(rec, "selected", json_pack("{s:s, s:b, s:b, s:o, s:o, s:I, s:I, s:I, s:s, s:o}",
	    "code_sha", c->sha, "call", passes_call(c), "exec", passes_exec(c),
	    "speedup", num_or_null(passes_exec(c) ? c->speedup : NAN),
	    "ms", num_or_null(c->ms), "run", (json_int_t)c->run,
	    "iter", (json_int_t)c->iter, "rank", (json_int_t)rank,
	    "from", c->entry ? "best" : "eval",
	    "model", c->model ? json_string(c->model) : json_null()));
	return rec;
}

static int
write_selection(struct geak_output *out, long beam)
{
	for (size_t i = 0; i < ntasks; i++) {
		struct task *t = &tasks[i];
		long n = 0;

		if (t->ncands > 1)
			qsort(t->cands, t->ncands, sizeof *t->cands, cand_cmp);
		do {
			const struct cand *c = t->ncands ? &t->cands[n] : NULL;
			json_t *rec = selected_record(t, c, n);
			int r = geak_output_write(out, rec);
			json_decref(rec);
			if (r < 0)
				return -1;
		} while (++n < beam && (size_t)n < t->ncands);
	}
	return 0;
}

/* Metrics over the picks of every task at iterations <= max_iter. */
struct tally {
	size_t tasks, call, exec;
	double *speedups;
	size_t nspeedups;
};

static void
tally_add(struct tally *ty, const struct cand *c)
{
	ty->tasks++;
	ty->call += passes_call(c);
	ty->exec += passes_exec(c);
	if (passes_exec(c) && !isnan(c->speedup)) {
		ty->speedups = geak_xrealloc(ty->speedups, (ty->nspeedups + 1) * sizeof(double));
		ty->speedups[ty->nspeedups++] = c->speedup;
	}
}

static double
ratio(size_t a, size_t b)
{
	return b ? (double)a / (double)b : NAN;
}

/* fast_p: the share of tasks whose pick is correct and more than p
 * times faster than the reference; fast_0 is the correct share, speed
 * measured or not (the CPU mode measures none). */
static json_t *
fast_p_json(const struct tally *ty, size_t denominator)
{
	json_t *list = json_array();

	for (size_t j = 0; j < nfast_ps; j++) {
		size_t n = 0;
		if (fast_ps[j] == 0)
			n = ty->exec;
		else
			for (size_t i = 0; i < ty->nspeedups; i++)
				n += ty->speedups[i] > fast_ps[j];
		json_array_append_new(list, json_pack("{s:f, s:I, s:o}", "p", fast_ps[j],
		    "tasks", (json_int_t)n, "share", num_or_null(ratio(n, denominator))));
	}
	return list;
}

static void
tally_put(json_t *obj, const struct tally *ty, size_t denominator)
{
	json_object_set_new(obj, "tasks", json_integer((json_int_t)ty->tasks));
	json_object_set_new(obj, "call_pass", json_integer((json_int_t)ty->call));
	json_object_set_new(obj, "exec_pass", json_integer((json_int_t)ty->exec));
	json_object_set_new(obj, "call_accuracy", num_or_null(ratio(ty->call, denominator)));
	json_object_set_new(obj, "exec_accuracy", num_or_null(ratio(ty->exec, denominator)));
	json_object_set_new(obj, "speedup_n", json_integer((json_int_t)ty->nspeedups));
	json_object_set_new(obj, "speedup_mean", num_or_null(geak_mean(ty->speedups, ty->nspeedups)));
	json_object_set_new(obj, "speedup_geomean", num_or_null(geak_geomean(ty->speedups, ty->nspeedups)));
	json_object_set_new(obj, "fast_p", fast_p_json(ty, denominator));
}

static json_t *
tally_json(long max_iter, json_t *difficulty, size_t total)
{
	struct tally ty = { 0 };
	json_t *obj = json_object();

	for (size_t i = 0; i < ntasks; i++) {
		if (difficulty && !json_equal(difficulty, tasks[i].difficulty))
			continue;
		tally_add(&ty, pick(&tasks[i], -1, max_iter));
	}
	tally_put(obj, &ty, difficulty || !total ? ty.tasks : total);
	free(ty.speedups);
	return obj;
}

/* The roofline plot's points of the picked candidate and of the
 * reference: one per case with both counts, at its intensity and
 * achieved TFLOP/s; NULL where there are none. */
static json_t *
roofline_json(const struct cand *c)
{
	json_t *perf = c ? c->entry ? json_object_get(c->entry, "perf") :
	    json_object_get(c->rec, "eval") : NULL;
	json_t *best = json_array(), *ref = json_array(), *sh, *peaks = json_object_get(perf, "peaks");
	const char *dtype = NULL;
	size_t i;

	json_array_foreach(json_object_get(perf, "shapes"), i, sh) {
		json_t *r = json_object_get(sh, "roofline");
		double ai = num_field(r, "intensity"), tf = num_field(sh, "tflops");
		double ms = num_field(sh, "ms"), ms_ref = num_field(sh, "ms_ref");
		if (isnan(ai) || isnan(tf) || !json_is_object(peaks))
			continue;
		if (!dtype)
			dtype = json_string_value(json_object_get(r, "dtype"));
		json_array_append_new(best, json_pack("{s:O, s:f, s:f, s:O}", "shape",
		    json_object_get(sh, "shape"), "intensity", ai, "tflops", tf, "bound",
		    json_object_get(r, "bound") ? json_object_get(r, "bound") : json_null()));
		if (ms > 0 && ms_ref > 0)
			json_array_append_new(ref, json_pack("{s:O, s:f, s:f, s:O}", "shape",
			    json_object_get(sh, "shape"), "intensity", ai, "tflops", tf * ms / ms_ref,
			    "bound", json_object_get(r, "bound_ref") ?
			    json_object_get(r, "bound_ref") : json_null()));
	}
	double gbps = num_field(peaks, "hbm_gbps");
	double tflops = num_field(json_object_get(peaks, "tflops"), dtype ? dtype : "fp16");
	if (!json_array_size(best) || !(gbps > 0) || !(tflops > 0)) {
		json_decref(best);
		json_decref(ref);
		return NULL;
	}
	return json_pack("{s:f, s:f, s:s, s:o, s:o}", "hbm_gbps", gbps, "peak_tflops", tflops,
	    "dtype", dtype ? dtype : "fp16", "best", best, "reference", ref);
}

/* Why a task has no correct kernel, in the record's words: the best
 * candidate's "stage: reason" ("call: compile", "exec: mismatch"), its
 * first flag, or, without any candidate, the error its last record
 * carries ("llm: budget").  NULL when it passed. */
static json_t *
fail_reason(const struct task *t, const struct cand *c)
{
	json_t *rec = c ? c->rec : t->last;
	const char *flag = json_string_value(json_array_get(geak_get(rec, "eval.flags"), 0));

	if (passes_exec(c))
		return json_null();
	if (c && c->out == GEAK_OUT_FLAGGED)
		return json_sprintf("flagged: %s", flag ? flag : "?");
	if (c)
		return json_sprintf("%s: %s", geak_get_str(rec, "eval.stage") ?
		    geak_get_str(rec, "eval.stage") : "call", geak_get_str(rec, "eval.reason") ?
		    geak_get_str(rec, "eval.reason") : "unknown");
	if (geak_has_error(rec))
		return json_sprintf("%s: %s", geak_get_str(rec, "error.stage") ?
		    geak_get_str(rec, "error.stage") : "?", geak_get_str(rec, "error.kind") ?
		    geak_get_str(rec, "error.kind") : "?");
	return json_string("no candidate");
}

/* The candidate's own performance cases, each as reference and kernel
 * time and the fractions of the device's peaks both reached. */
static json_t *
cases_json(const struct cand *c)
{
	json_t *perf = c->entry ? json_object_get(c->entry, "perf") : json_object_get(c->rec, "eval");
	json_t *list = json_array(), *sh;
	size_t i;

	json_array_foreach(json_object_get(perf, "shapes"), i, sh) {
		json_t *r = json_object_get(sh, "roofline");
		json_array_append_new(list, json_pack("{s:O, s:o, s:o, s:o, s:o, s:o, s:o, s:O, s:O}",
		    "shape", json_object_get(sh, "shape") ? json_object_get(sh, "shape") : json_null(),
		    "ms", num_or_null(num_field(sh, "ms")), "ms_ref", num_or_null(num_field(sh, "ms_ref")),
		    "hbm", num_or_null(num_field(r, "hbm")), "compute", num_or_null(num_field(r, "compute")),
		    "hbm_ref", num_or_null(num_field(r, "hbm_ref")),
		    "compute_ref", num_or_null(num_field(r, "compute_ref")),
		    "bound", json_is_string(json_object_get(r, "bound")) ?
		    json_object_get(r, "bound") : json_null(),
		    "bound_ref", json_is_string(json_object_get(r, "bound_ref")) ?
		    json_object_get(r, "bound_ref") : json_null()));
	}
	return list;
}

/* At most max bytes and lines of s, from its head or its tail (where a
 * traceback ends with the exception), cut between UTF-8 characters and
 * marked where cut.  NULL for no text. */
static json_t *
clip_text(const char *s, size_t max, size_t max_lines, int tail)
{
	size_t len = s ? strlen(s) : 0, from = 0, to = len, lines = 0;

	if (!len)
		return json_null();
	if (tail) {
		for (from = len; from > 0; from--)
			if (s[from - 1] == '\n' && from < len && ++lines >= max_lines)
				break;
		if (len - from > max)
			from = len - max;
		while (from < len && ((unsigned char)s[from] & 0xC0) == 0x80)
			from++;
	} else {
		for (to = 0; to < len; to++)
			if (s[to] == '\n' && ++lines >= max_lines)
				break;
		if (to > max)
			to = max;
		while (to > 0 && to < len && ((unsigned char)s[to] & 0xC0) == 0x80)
			to--;
	}
	if (from == 0 && to == len)
		return json_string(s);
	return json_sprintf("%s%.*s%s", from ? "[...]\n" : "", (int)(to - from), s + from,
	    to < len ? "\n[...]" : "");
}

/* What the model was told of a task's failure: the best candidate's
 * evaluation message and the tail of its traceback, or the error of its
 * last record; NULL when it passed or nothing says. */
static json_t *
error_json(const struct task *t, const struct cand *c)
{
	json_t *rec = c ? c->rec : t->last;
	json_t *msg, *tb;

	if (passes_exec(c))
		return json_null();
	if (c) {
		msg = clip_text(geak_get_str(rec, "eval.message"), 1200, 12, 0);
		tb = clip_text(geak_get_str(rec, "eval.traceback"), 3000, 30, 1);
	} else {
		msg = clip_text(geak_get_str(rec, "error.message"), 1200, 12, 0);
		tb = json_null();
	}
	if (json_is_null(msg) && json_is_null(tb))
		return json_null();
	return json_pack("{s:o, s:o}", "message", msg, "traceback", tb);
}

/* qsort order of attempts: by run, iteration, sample. */
static int
attempt_cmp(const void *pa, const void *pb)
{
	json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	static const char *const keys[] = { "run", "iter", "sample" };

	for (size_t i = 0; i < 3; i++) {
		long x = int_field(a, keys[i], 0), y = int_field(b, keys[i], 0);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* What a task's lineages spent: calls, and the cost where priced. */
static void
task_spend_put(json_t *row, const struct task *t)
{
	struct spend sum = { .cost = NAN };
	long unpriced = 0;

	for (size_t j = 0; j < t->nlines; j++) {
		struct spend most = lineage_spend(&t->lines[j], -1);
		spend_add(&sum, &unpriced, &most);
	}
	json_object_set_new(row, "calls", json_integer(sum.calls));
	json_object_set_new(row, "cost", num_or_null(sum.cost));
	json_object_set_new(row, "unpriced_calls", json_integer(unpriced));
}

static json_t *sorted(json_t *list, int (*cmp)(const void *, const void *));

/* A kernel row's account of how it came to be: its name, its cases,
 * what went wrong, every attempt and what it cost. */
static void
kernel_detail(json_t *row, const struct task *t, const struct cand *c)
{
	json_object_set(row, "name", t->name ? t->name : json_null());
	json_object_set_new(row, "code_sha", c && c->sha ? json_string(c->sha) : json_null());
	if (passes_exec(c))
		json_object_set_new(row, "cases", cases_json(c));
	json_object_set_new(row, "error", error_json(t, c));
	json_object_set_new(row, "history", sorted(json_copy(t->attempts), attempt_cmp));
	task_spend_put(row, t);
}

/* ---- kernel files ---- */

static json_t *
kept_code(const struct cand *c)
{
	return json_object_get(c->entry ? c->entry : c->rec, "code");
}

static const char *
cand_device(const struct cand *c)
{
	return c->entry ? geak_get_str(c->entry, "perf.device") : geak_get_str(c->rec, "eval.device");
}

/* A file name from a task's name (else the last part of its id) that is
 * also a Python module name: letters, digits and '_', never a path,
 * never a dot file, never empty; at most 80 bytes. */
static char *
module_name(const struct task *t)
{
	const char *base = t->name ? json_string_value(t->name) : strrchr(t->id, '/');
	struct geak_buf b = { 0 };

	base = base ? base + (base[0] == '/') : t->id;
	if (!(*base >= 'A' && *base <= 'Z') && !(*base >= 'a' && *base <= 'z') && *base != '_')
		geak_buf_puts(&b, "k_");
	for (const char *p = base; *p && b.len < 80; p++) {
		int ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '_';
		geak_buf_append(&b, ok ? p : "_", 1);
	}
	return geak_buf_steal(&b);
}

/* Names each task with a correct kernel its file, in input order; a
 * name taken already (ignoring case, for file systems that do) gets
 * _2, _3, ... */
static void
name_kernel_files(void)
{
	for (size_t i = 0; i < ntasks; i++) {
		char *base, *name;
		int taken = 1;

		if (tasks[i].file || !passes_exec(pick(&tasks[i], -1, -1)))
			continue;
		base = module_name(&tasks[i]);
		name = geak_xstrdup(base);
		for (long n = 2; taken; n++) {
			taken = 0;
			for (size_t j = 0; j < ntasks && !taken; j++)
				taken = tasks[j].file && strcasecmp(tasks[j].file, name) == 0;
			if (taken) {
				free(name);
				name = geak_xasprintf("%s_%ld", base, n);
			}
		}
		free(base);
		tasks[i].file = name;
	}
}

/* Text for one line of a '#' comment: control characters would end it
 * and start code, so they are written escaped, as on a terminal. */
static void
put_comment(struct geak_buf *b, const char *s)
{
	if (s)
		geak_buf_put_printable(b, s, strlen(s));
}

static void
kernel_header(struct geak_buf *b, const struct task *t, const struct cand *c)
{
	const char *device = cand_device(c);

	geak_buf_puts(b, "# geak kernel for ");
	put_comment(b, t->id);
	if (t->name) {
		geak_buf_puts(b, " (task ");
		put_comment(b, json_string_value(t->name));
		geak_buf_puts(b, ")");
	}
	if (!isnan(c->speedup))
		geak_buf_printf(b, "\n# speedup: %.3gx over the reference", c->speedup);
	else
		geak_buf_puts(b, "\n# speedup: not measured");
	geak_buf_puts(b, device ? " on " : "");
	put_comment(b, device);
	geak_buf_puts(b, "\n# model: ");
	put_comment(b, c->model ? c->model : "not recorded");
	geak_buf_printf(b, "; run %ld, iteration %ld; code_sha ", c->run, c->iter);
	put_comment(b, c->sha);
	geak_buf_puts(b, "\n# Selected by geak-select: correct as geak-eval checked it; the code "
	    "below is as it was evaluated.\n\n");
}

static int
write_kernel_file(const char *dir, const struct task *t, const struct cand *c)
{
	char *path = geak_xasprintf("%s/%s.py", dir, t->file);
	char *tmp = geak_xasprintf("%s/.%s.py.tmp", dir, t->file);
	struct geak_buf b = { 0 };
	int fd, rc = -1;

	kernel_header(&b, t, c);
	geak_buf_puts(&b, json_string_value(kept_code(c)));
	if (b.len && b.data[b.len - 1] != '\n')
		geak_buf_puts(&b, "\n");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		geak_warn("%s:", tmp);
	else if (geak_write_all(fd, b.data, b.len) < 0)
		geak_warn("%s: write failed:", tmp);
	else if (close(fd) < 0)
		fd = -1, geak_warn("%s: close failed:", tmp);
	else if (fd = -1, rename(tmp, path) < 0)
		geak_warn("%s: cannot rename to %s:", tmp, path);
	else
		rc = 0;
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	geak_buf_free(&b);
	free(path);
	free(tmp);
	return rc;
}

/* The kept kernel of each task that has a correct one, as dir/NAME.py. */
static int
write_kernel_files(const char *dir)
{
	int rc = 0;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		geak_warn("%s:", dir);
		return -1;
	}
	for (size_t i = 0; i < ntasks; i++) {
		const struct cand *c = pick(&tasks[i], -1, -1);
		if (tasks[i].file && passes_exec(c) && json_is_string(kept_code(c)) &&
		    write_kernel_file(dir, &tasks[i], c) < 0)
			rc = -1;
	}
	return rc;
}

static json_t *
kernels_json(void)
{
	json_t *list = json_array();

	for (size_t i = 0; i < ntasks; i++) {
		const struct task *t = &tasks[i];
		const struct cand *c = pick(t, -1, -1);
		size_t call_runs = 0, exec_runs = 0;

		for (size_t r = 0; r < t->nruns; r++) {
			call_runs += passes_call(pick(t, t->runs[r], -1));
			exec_runs += passes_exec(pick(t, t->runs[r], -1));
		}
		json_array_append_new(list, json_pack("{s:s, s:O, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
		    "id", t->id, "difficulty", t->difficulty ? t->difficulty : json_null(),
		    "call", passes_call(c), "exec", passes_exec(c), "reason", fail_reason(t, c),
		    "speedup", num_or_null(passes_exec(c) ? c->speedup : NAN),
		    "ms", num_or_null(c ? c->ms : NAN),
		    "run", c ? json_integer(c->run) : json_null(),
		    "iter", c ? json_integer(c->iter) : json_null(),
		    "runs", (json_int_t)t->nruns, "call_runs", (json_int_t)call_runs,
		    "exec_runs", (json_int_t)exec_runs));
		json_t *row = json_array_get(list, json_array_size(list) - 1), *roof;
		json_object_set_new(row, "model", c && c->model ? json_string(c->model) : json_null());
		if (passes_exec(c) && (roof = roofline_json(c)))
			json_object_set_new(row, "roofline", roof);
		kernel_detail(row, t, c);
		if (t->file)
			json_object_set_new(row, "file", json_sprintf("%s.py", t->file));
	}
	return list;
}

/* qsort orders of rows: more tasks first, then by reason; by
 * difficulty. */
static int
more_tasks(const void *pa, const void *pb)
{
	json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	json_int_t na = json_integer_value(json_object_get(a, "tasks"));
	json_int_t nb = json_integer_value(json_object_get(b, "tasks"));

	if (na != nb)
		return na > nb ? -1 : 1;
	return strcmp(geak_get_str(a, "reason"), geak_get_str(b, "reason"));
}

static int
by_difficulty_cmp(const void *pa, const void *pb)
{
	json_int_t a = json_integer_value(json_object_get(*(json_t *const *)pa, "difficulty"));
	json_int_t b = json_integer_value(json_object_get(*(json_t *const *)pb, "difficulty"));

	return a < b ? -1 : a > b;
}

/* The rows of list in cmp's order, as a new array (list is taken). */
static json_t *
sorted(json_t *list, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(list), i;
	json_t **v = geak_xcalloc(n ? n : 1, sizeof *v), *out = json_array(), *row;

	json_array_foreach(list, i, row)
		v[i] = row;
	qsort(v, n, sizeof *v, cmp);
	for (i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(list);
	return out;
}

/* The tasks without a correct kernel, by reason, most common first:
 * [{reason, tasks, ids: [the first few]}]. */
static json_t *
failures_json(json_t *kernels)
{
	json_t *by = json_object(), *list = json_array(), *k, *row;
	const char *reason;
	size_t i;

	json_array_foreach(kernels, i, k) {
		if (!(reason = json_string_value(json_object_get(k, "reason"))))
			continue;
		if (!(row = json_object_get(by, reason))) {
			row = json_pack("{s:s, s:I, s:[]}", "reason", reason, "tasks", (json_int_t)0, "ids");
			json_object_set_new(by, reason, row);
			json_array_append(list, row);
		}
		json_object_set_new(row, "tasks", json_integer(json_integer_value(
		    json_object_get(row, "tasks")) + 1));
		if (json_array_size(json_object_get(row, "ids")) < 5)
			json_array_append(json_object_get(row, "ids"), json_object_get(k, "id"));
	}
	json_decref(by);
	return sorted(list, more_tasks);
}

/* pass@k per k, averaged over the tasks with at least k runs. */
static json_t *
passk_json(const struct opts *o, json_t *kernels)
{
	json_t *list = json_array();

	for (size_t j = 0; j < o->nks; j++) {
		double call = 0, exec = 0; /* fresh for every k */
		size_t used = 0, i;
		json_t *kr;

		json_array_foreach(kernels, i, kr) {
			long n = int_field(kr, "runs", 0);
			if (o->ks[j] > n)
				continue;
			call += geak_pass_at_k(n, int_field(kr, "call_runs", 0), o->ks[j]);
			exec += geak_pass_at_k(n, int_field(kr, "exec_runs", 0), o->ks[j]);
			used++;
		}
		json_array_append_new(list, json_pack("{s:I, s:I, s:o, s:o}",
		    "k", (json_int_t)o->ks[j], "tasks", (json_int_t)used,
		    "call", num_or_null(used ? call / (double)used : NAN),
		    "exec", num_or_null(used ? exec / (double)used : NAN)));
	}
	return list;
}

static int
long_cmp(const void *pa, const void *pb)
{
	long a = *(const long *)pa, b = *(const long *)pb;

	return a < b ? -1 : a > b;
}

/* The iterations some candidate or some spending belongs to, ascending,
 * each once, from 0 on: a row per iteration the records name, never more
 * rows than they hold (an iteration between two of them would repeat the
 * row before it). */
static long *
iters_seen(size_t *n)
{
	size_t cap = 1, k = 0;
	long *v;

	for (size_t i = 0; i < ntasks; i++) {
		cap += tasks[i].ncands;
		for (size_t j = 0; j < tasks[i].nlines; j++)
			cap += tasks[i].lines[j].nat;
	}
	v = geak_xcalloc(cap, sizeof *v);
	v[k++] = 0;
	for (size_t i = 0; i < ntasks; i++) {
		for (size_t j = 0; j < tasks[i].ncands; j++)
			v[k++] = tasks[i].cands[j].iter;
		for (size_t j = 0; j < tasks[i].nlines; j++)
			for (size_t a = 0; a < tasks[i].lines[j].nat; a++)
				v[k++] = tasks[i].lines[j].at[a].iter;
	}
	qsort(v, k, sizeof *v, long_cmp);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (!*n || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	return v;
}

static json_t *
by_iter_json(size_t total)
{
	json_t *list = json_array();
	size_t n;
	long *iters = iters_seen(&n);

	for (size_t k = 0; k < n; k++) {
		json_t *row = tally_json(iters[k], NULL, total);
		json_object_set_new(row, "iter", json_integer(iters[k]));
		json_object_set_new(row, "usage", usage_json(iters[k]));
		json_array_append_new(list, row);
	}
	free(iters);
	return list;
}

static json_t *
by_difficulty_json(void)
{
	json_t *seen = json_array(), *list = json_array(), *d;
	size_t i;

	for (i = 0; i < ntasks; i++) {
		json_t *v = tasks[i].difficulty ? tasks[i].difficulty : json_null();
		size_t j;
		int dup = 0;
		json_array_foreach(seen, j, d)
			dup |= json_equal(d, v);
		if (!dup)
			json_array_append(seen, v);
	}
	json_array_foreach(seen, i, d) {
		json_t *row;
		if (json_is_null(d))
			continue;
		row = tally_json(-1, d, 0);
		json_object_set(row, "difficulty", d);
		json_array_append_new(list, row);
	}
	json_decref(seen);
	return sorted(list, by_difficulty_cmp);
}

/* What a lineage had spent by iteration max_iter (< 0: in all). */
static struct spend
lineage_spend(const struct lineage *l, long max_iter)
{
	struct spend most = { .cost = NAN };

	for (size_t k = 0; k < l->nat; k++) {
		const struct spend *sp = &l->at[k];
		if (max_iter >= 0 && sp->iter > max_iter)
			continue;
		most.calls = sp->calls > most.calls ? sp->calls : most.calls;
		if (sp->input_tokens > most.input_tokens)
			most.input_tokens = sp->input_tokens;
		if (sp->output_tokens > most.output_tokens)
			most.output_tokens = sp->output_tokens;
		if (!isnan(sp->cost) && (isnan(most.cost) || sp->cost > most.cost))
			most.cost = sp->cost;
	}
	return most;
}

/* Adds a lineage's spend to a sum; calls of a lineage whose records
 * said no cost count as unpriced. */
static void
spend_add(struct spend *sum, long *unpriced, const struct spend *most)
{
	sum->calls = geak_add_sat(sum->calls, most->calls);
	sum->input_tokens = geak_add_sat(sum->input_tokens, most->input_tokens);
	sum->output_tokens = geak_add_sat(sum->output_tokens, most->output_tokens);
	if (!isnan(most->cost))
		sum->cost = (isnan(sum->cost) ? 0 : sum->cost) + most->cost;
	else
		*unpriced = geak_add_sat(*unpriced, most->calls);
}

static void
spend_put(json_t *obj, const struct spend *sum, long unpriced)
{
	json_object_set_new(obj, "calls", json_integer(sum->calls));
	json_object_set_new(obj, "input_tokens", json_integer(sum->input_tokens));
	json_object_set_new(obj, "output_tokens", json_integer(sum->output_tokens));
	json_object_set_new(obj, "cost", num_or_null(sum->cost));
	json_object_set_new(obj, "unpriced_calls", json_integer(unpriced));
}

/* What every lineage had spent by iteration max_iter (< 0: in all):
 * calls, tokens, and the cost of those whose records said it. */
static json_t *
usage_json(long max_iter)
{
	struct spend sum = { .cost = NAN };
	long unpriced = 0;
	json_t *obj = json_object();

	for (size_t i = 0; i < ntasks; i++)
		for (size_t j = 0; j < tasks[i].nlines; j++) {
			struct spend most = lineage_spend(&tasks[i].lines[j], max_iter);
			spend_add(&sum, &unpriced, &most);
		}
	spend_put(obj, &sum, unpriced);
	return obj;
}

static json_t *
tags_json(const struct tags *ts, const char *count)
{
	json_t *list = json_array();

	for (size_t i = 0; i < ts->n; i++)
		json_array_append_new(list, json_pack("{s:s, s:I}", "name", ts->v[i].name,
		    count, (json_int_t)ts->v[i].n));
	return list;
}

static json_t *
provenance_json(void)
{
	return json_pack("{s:o, s:I, s:I, s:o, s:o}", "models", tags_json(&models, "records"),
	    "replayed", (json_int_t)replayed, "live", (json_int_t)live,
	    "devices", tags_json(&devices, "records"),
	    "harness", tags_json(&harnesses, "records"));
}

/* Per model of an ensemble: each task's best candidate that model wrote
 * (accuracies over the tasks it worked on) and its lineages' usage. */
static json_t *
by_model_json(void)
{
	json_t *list = json_array();

	for (size_t m = 0; m < nmodel_names; m++) {
		struct tally ty = { 0 };
		struct spend sum = { .cost = NAN };
		long unpriced = 0;
		json_t *row = json_pack("{s:s}", "model", model_names[m]);

		for (size_t i = 0; i < ntasks; i++) {
			const struct cand *c = pick_of(&tasks[i], -1, -1, model_names[m]);
			int worked = c != NULL;
			for (size_t j = 0; j < tasks[i].nlines; j++)
				if (tasks[i].lines[j].model == model_names[m]) {
					struct spend most = lineage_spend(&tasks[i].lines[j], -1);
					spend_add(&sum, &unpriced, &most);
					worked = 1;
				}
			if (worked)
				tally_add(&ty, c);
		}
		tally_put(row, &ty, ty.tasks);
		spend_put(row, &sum, unpriced);
		json_array_append_new(list, row);
		free(ty.speedups);
	}
	return list;
}

static json_t *
summary_json(const struct opts *o, size_t records)
{
	size_t total = o->total_tasks > 0 ? (size_t)o->total_tasks : ntasks;
	json_t *sum = tally_json(-1, NULL, total);
	json_t *kernels = kernels_json();
	size_t max_runs = 0;

	for (size_t i = 0; i < ntasks; i++)
		if (tasks[i].nruns > max_runs)
			max_runs = tasks[i].nruns;
	json_object_set_new(sum, "schema", json_integer(GEAK_SCHEMA));
	json_object_set_new(sum, "records", json_integer((json_int_t)records));
	json_object_set_new(sum, "runs", json_integer((json_int_t)max_runs));
	json_object_set_new(sum, "total_tasks", json_integer((json_int_t)total));
	json_object_set_new(sum, "pass_at_k", passk_json(o, kernels));
	json_object_set_new(sum, "by_difficulty", by_difficulty_json());
	json_object_set_new(sum, "by_iter", by_iter_json(total));
	json_object_set_new(sum, "usage", usage_json(-1));
	json_object_set_new(sum, "by_model", by_model_json());
	json_object_set_new(sum, "failures", failures_json(kernels));
	json_object_set_new(sum, "provenance", provenance_json());
	json_object_set_new(sum, "kernels", kernels);
	return sum;
}

static int
write_json_file(const char *path, json_t *obj)
{
	FILE *fp = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");

	if (!fp) {
		geak_warn("%s:", path);
		return -1;
	}
	if (json_dumpf(obj, fp, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0 ||
	    fputc('\n', fp) == EOF) {
		geak_warn("%s: write failed:", path);
		if (fp != stdout)
			fclose(fp);
		return -1;
	}
	if (fp == stdout)
		return 0;
	if (geak_fshut(fp, path) < 0) {
		fclose(fp);
		return -1;
	}
	if (fclose(fp) != 0) {
		geak_warn("%s: close failed:", path);
		return -1;
	}
	return 0;
}

static void
free_tasks(void)
{
	for (size_t i = 0; i < ntasks; i++) {
		for (size_t j = 0; j < tasks[i].ncands; j++)
			json_decref(tasks[i].cands[j].rec);
		free(tasks[i].cands);
		free(tasks[i].runs);
		for (size_t j = 0; j < tasks[i].nlines; j++)
			free(tasks[i].lines[j].at);
		free(tasks[i].lines);
		json_decref(tasks[i].difficulty);
		json_decref(tasks[i].last);
		json_decref(tasks[i].name);
		json_decref(tasks[i].reference);
		json_decref(tasks[i].first);
		json_decref(tasks[i].attempts);
		free(tasks[i].file);
		free(tasks[i].id);
	}
	free(tasks);
	for (size_t i = 0; i < nmodel_names; i++)
		free(model_names[i]);
	free(model_names);
	tasks = NULL;
	ntasks = seq = 0;
	model_names = NULL;
	nmodel_names = 0;
}

/* Everything read so far forgotten, to read another run. */
static void
forget_records(void)
{
	free_tasks();
	tags_free(&models);
	tags_free(&devices);
	tags_free(&harnesses);
	replayed = live = 0;
}

/* The code each task's row shows in the report: its kept (or best
 * failed) code, and what a diff starts from, the task's reference or
 * else its earliest attempt.  Kept out of the summary file, which
 * stays small. */
static void
attach_code(json_t *sum)
{
	json_t *kernels = json_object_get(sum, "kernels");

	for (size_t i = 0; i < ntasks && i < json_array_size(kernels); i++) {
		const struct task *t = &tasks[i];
		const struct cand *c = pick(t, -1, -1);
		json_t *row = json_array_get(kernels, i), *code = c ? kept_code(c) : NULL;

		if (!json_is_string(code))
			continue;
		json_object_set(row, "code", code);
		if (t->reference)
			json_object_set_new(row, "base", json_pack("{s:s, s:O}", "label",
			    "the task's reference", "code", t->reference));
		else if (t->first && !json_equal(t->first, code))
			json_object_set_new(row, "base", json_pack("{s:o, s:O}", "label",
			    json_sprintf("the first attempt (iteration %ld)", t->first_iter),
			    "code", t->first));
	}
}

/* ---- comparing two runs ---- */

/* A run's summary: the file itself where it is one (an object with a
 * kernels array, as -s writes), else the summary of its records.
 * NULL after reporting why. */
static json_t *
run_summary(const char *path, const struct opts *o, int *status)
{
	json_t *sum = json_load_file(path, 0, NULL);
	size_t records = 0;

	if (json_is_object(sum) && json_is_array(json_object_get(sum, "kernels")))
		return sum;
	json_decref(sum);
	struct geak_pool pool = {
		.paths = (char *const[]){ (char *)path }, .npaths = 1, .sink = 1, .all = 1,
		.fn = take_record, .written = count_record, .arg = &records,
	};
	int rc = geak_pool_run(&pool);
	if (rc > *status)
		*status = rc;
	sum = rc < GEAK_EXIT_USAGE ? summary_json(o, records) : NULL;
	forget_records();
	return sum;
}

/* A run's side of one task: call, exec, speedup, calls and cost. */
static json_t *
side_json(json_t *k)
{
	if (!k)
		return json_null();
	return json_pack("{s:b, s:b, s:O, s:O, s:O}", "call", json_is_true(json_object_get(k, "call")),
	    "exec", json_is_true(json_object_get(k, "exec")),
	    "speedup", json_object_get(k, "speedup") ? json_object_get(k, "speedup") : json_null(),
	    "calls", json_object_get(k, "calls") ? json_object_get(k, "calls") : json_null(),
	    "cost", json_object_get(k, "cost") ? json_object_get(k, "cost") : json_null());
}

#define TIE_WITHIN 1.02 /* speedups closer than 2% are timing noise */

/* Who won a task: a correct kernel beats none, a faster one a slower
 * one (by more than TIE_WITHIN); then a kernel that ran beats one that
 * did not.  *margin: the winner's speedup over the loser's, NAN where
 * not both were timed. */
static const char *
winner(json_t *a, json_t *b, double *margin)
{
	int ea = json_is_true(json_object_get(a, "exec")), eb = json_is_true(json_object_get(b, "exec"));
	int ca = json_is_true(json_object_get(a, "call")), cb = json_is_true(json_object_get(b, "call"));
	double sa = num_field(a, "speedup"), sb = num_field(b, "speedup");

	*margin = NAN;
	if (ea != eb)
		return ea ? "a" : "b";
	if (ea && sa > 0 && sb > 0) {
		*margin = sa > sb ? sa / sb : sb / sa;
		if (*margin < TIE_WITHIN)
			return "tie";
		return sa > sb ? "a" : "b";
	}
	if (ea)
		return "tie";
	if (ca != cb)
		return ca ? "a" : "b";
	return "neither";
}

static json_t *
kernel_by_id(json_t *sum, const char *id)
{
	json_t *k;
	size_t i;

	json_array_foreach(json_object_get(sum, "kernels"), i, k)
		if (same_str(geak_get_str(k, "id"), id))
			return k;
	return NULL;
}

static json_t *
run_json(json_t *sum, const char *path)
{
	json_t *u = json_object_get(sum, "usage");

	return json_pack("{s:s, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O}", "path", path,
	    "tasks", json_object_get(sum, "total_tasks") ? json_object_get(sum, "total_tasks") : json_null(),
	    "call_accuracy", json_object_get(sum, "call_accuracy") ? json_object_get(sum, "call_accuracy") : json_null(),
	    "exec_accuracy", json_object_get(sum, "exec_accuracy") ? json_object_get(sum, "exec_accuracy") : json_null(),
	    "speedup_geomean", json_object_get(sum, "speedup_geomean") ? json_object_get(sum, "speedup_geomean") : json_null(),
	    "speedup_n", json_object_get(sum, "speedup_n") ? json_object_get(sum, "speedup_n") : json_null(),
	    "calls", json_object_get(u, "calls") ? json_object_get(u, "calls") : json_null(),
	    "cost", json_object_get(u, "cost") ? json_object_get(u, "cost") : json_null(),
	    "unpriced_calls", json_object_get(u, "unpriced_calls") ? json_object_get(u, "unpriced_calls") : json_null(),
	    "provenance", json_object_get(sum, "provenance") ? json_object_get(sum, "provenance") : json_null());
}

static void
compare_task(json_t *rows, json_t *wins, const char *id, json_t *ka, json_t *kb)
{
	json_t *a = side_json(ka), *b = side_json(kb);
	double margin;
	const char *w = winner(a, b, &margin);

	json_object_set_new(wins, w, json_integer(json_integer_value(json_object_get(wins, w)) + 1));
	json_array_append_new(rows, json_pack("{s:s, s:o, s:o, s:s, s:o}", "id", id, "a", a, "b", b,
	    "winner", w, "margin", num_or_null(margin)));
}

/* Every task of either run, A's in its order, then B's others. */
static json_t *
compare_json(json_t *sa, json_t *sb, const char *pa, const char *pb)
{
	json_t *rows = json_array(), *k, *ra = run_json(sa, pa), *rb = run_json(sb, pb);
	json_t *wins = json_pack("{s:i, s:i, s:i, s:i}", "a", 0, "b", 0, "tie", 0, "neither", 0);
	size_t i;

	json_array_foreach(json_object_get(sa, "kernels"), i, k)
		compare_task(rows, wins, geak_get_str(k, "id"), k, kernel_by_id(sb, geak_get_str(k, "id")));
	json_array_foreach(json_object_get(sb, "kernels"), i, k)
		if (!kernel_by_id(sa, geak_get_str(k, "id")))
			compare_task(rows, wins, geak_get_str(k, "id"), NULL, k);
	double ga = num_field(ra, "speedup_geomean"), gb = num_field(rb, "speedup_geomean");
	json_t *delta = json_pack("{s:o, s:o, s:o}",
	    "call_accuracy", num_or_null(num_field(rb, "call_accuracy") - num_field(ra, "call_accuracy")),
	    "exec_accuracy", num_or_null(num_field(rb, "exec_accuracy") - num_field(ra, "exec_accuracy")),
	    "speedup_geomean", num_or_null(ga > 0 && gb > 0 ? gb / ga : NAN));
	return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o}", "schema", GEAK_SCHEMA, "a", ra, "b", rb,
	    "delta", delta, "wins", wins, "tasks", rows);
}

/* A TSV cell: "-" for nothing, yes/no, a number; a cost with calls but
 * no price is "unpriced". */
static void
tsv_cell(FILE *fp, json_t *side, const char *key)
{
	json_t *v = json_object_get(side, key);

	if (json_is_boolean(v))
		fputs(json_is_true(v) ? "\tyes" : "\tno", fp);
	else if (json_is_number(v))
		fprintf(fp, "\t%.6g", json_number_value(v));
	else if (!strcmp(key, "cost") && int_field(side, "calls", 0) > 0)
		fputs("\tunpriced", fp);
	else
		fputs("\t-", fp);
}

static void
write_compare_tsv(FILE *fp, json_t *cmp)
{
	static const char *const keys[] = { "call", "exec", "speedup", "cost" };
	json_t *row;
	size_t i;

	fputs("id\twinner\tmargin\ta_call\tb_call\ta_exec\tb_exec\ta_speedup\tb_speedup"
	    "\ta_cost\tb_cost\n", fp);
	json_array_foreach(json_object_get(cmp, "tasks"), i, row) {
		const char *id = geak_get_str(row, "id");
		for (; *id; id++)
			fputc(*id == '\t' || *id == '\n' || *id == '\r' ? ' ' : *id, fp);
		fprintf(fp, "\t%s", geak_get_str(row, "winner"));
		tsv_cell(fp, row, "margin");
		for (size_t k = 0; k < 4; k++) {
			tsv_cell(fp, json_object_get(row, "a"), keys[k]);
			tsv_cell(fp, json_object_get(row, "b"), keys[k]);
		}
		fputc('\n', fp);
	}
}

static int
run_compare(const struct opts *o, char **paths)
{
	int status = 0;
	json_t *sa = run_summary(paths[0], o, &status);
	json_t *sb = sa ? run_summary(paths[1], o, &status) : NULL;
	json_t *cmp;

	if (!sa || !sb) {
		json_decref(sa);
		return status > GEAK_EXIT_RECORDS ? status : GEAK_EXIT_FATAL;
	}
	cmp = compare_json(sa, sb, paths[0], paths[1]);
	if (o->summary_only ? write_json_file("-", cmp) < 0 : (write_compare_tsv(stdout, cmp), 0))
		status = GEAK_EXIT_FATAL;
	if (o->summary_path && write_json_file(o->summary_path, cmp) < 0)
		status = GEAK_EXIT_FATAL;
	if (o->report_path && geak_report_compare_write(o->report_path, cmp) < 0)
		status = GEAK_EXIT_FATAL;
	if (geak_fshut(stdout, "stdout") < 0)
		status = GEAK_EXIT_FATAL;
	json_decref(cmp);
	json_decref(sa);
	json_decref(sb);
	return status;
}

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: %s [-S] [-b N] [-k LIST] [-p LIST] [-s FILE] [-r FILE] [--tasks N]\n"
	    "       [--kernels DIR] [FILE...]\n"
	    "       %s --compare [-S] [-s FILE] [-r FILE] A B\n"
	    "  -b, --beam N        keep the N best candidates per task (default 1)\n"
	    "  -k, --pass-at LIST  k values for pass@k, comma-separated (default 1)\n"
	    "  -p, --fast-p LIST   more p values for fast_p, comma-separated (0, 1, 1.5\n"
	    "                      and 2 are always reported)\n"
	    "  -s, --summary FILE  write the summary as JSON to FILE ('-': stdout)\n"
	    "  -S, --summary-only  write the summary to stdout instead of records\n"
	    "  -r, --report FILE   write a report, HTML (.html) or Markdown (.md)\n"
	    "      --tasks N       divide accuracies by N tasks, not by those seen\n"
	    "      --kernels DIR   write each task's kept correct kernel as DIR/NAME.py\n"
	    "      --compare A B   compare two runs (summaries or record files): a TSV\n"
	    "                      table per task on stdout; -s/-S JSON, -r a report\n"
	    "  -h, --help          this help\n"
	    "      --version       print the version\n", geak_prog, geak_prog);
}

static void
add_fast_p(double p)
{
	size_t i = 0;

	while (i < nfast_ps && fast_ps[i] < p)
		i++;
	if (i < nfast_ps && fast_ps[i] == p)
		return;
	fast_ps = geak_xrealloc(fast_ps, (nfast_ps + 1) * sizeof *fast_ps);
	memmove(fast_ps + i + 1, fast_ps + i, (nfast_ps - i) * sizeof *fast_ps);
	fast_ps[i] = p;
	nfast_ps++;
}

/* -p "3,5": numbers of at least 0, each once. */
static void
add_fast_ps(const char *arg)
{
	char *copy = geak_xstrdup(arg), *save = NULL;
	int any = 0;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save), any = 1)
		add_fast_p(geak_parse_double(tok, "--fast-p", 0, 1e9));
	free(copy);
	if (!any) {
		geak_warn("--fast-p: not a list of numbers: '%s'", arg);
		exit(GEAK_EXIT_USAGE);
	}
}

static void
parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_VERSION = 0x1000, OPT_TASKS, OPT_KERNELS, OPT_COMPARE };
	static const struct option longopts[] = {
		{ "beam", required_argument, NULL, 'b' },
		{ "pass-at", required_argument, NULL, 'k' },
		{ "fast-p", required_argument, NULL, 'p' },
		{ "summary", required_argument, NULL, 's' },
		{ "summary-only", no_argument, NULL, 'S' },
		{ "report", required_argument, NULL, 'r' },
		{ "tasks", required_argument, NULL, OPT_TASKS },
		{ "kernels", required_argument, NULL, OPT_KERNELS },
		{ "compare", no_argument, NULL, OPT_COMPARE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "b:k:p:s:Sr:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': o->beam = geak_parse_long(optarg, "--beam", 1, 1000000); break;
		case 'k':
			free(o->ks);
			if (geak_parse_k_list(optarg, &o->ks, &o->nks) < 0) {
				geak_warn("--pass-at: not a list of positive integers: '%s'", optarg);
				exit(GEAK_EXIT_USAGE);
			}
			break;
		case 'p': add_fast_ps(optarg); break;
		case 's': o->summary_path = optarg; break;
		case 'S': o->summary_only = 1; break;
		case 'r': o->report_path = optarg; break;
		case OPT_KERNELS: o->kernels_dir = optarg; break;
		case OPT_COMPARE: o->compare = 1; break;
		case OPT_TASKS: o->total_tasks = geak_parse_long(optarg, "--tasks", 1, 100000000); break;
		case 'h': usage(stdout); exit(geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : 0);
		case OPT_VERSION: geak_print_version(); exit(0);
		default: usage(stderr); exit(GEAK_EXIT_USAGE);
		}
	}
	if (o->report_path && geak_report_format(o->report_path) < 0) {
		geak_warn("--report: name the file .html, .htm or .md: '%s'", o->report_path);
		exit(GEAK_EXIT_USAGE);
	}
	if (o->compare && argc - optind != 2) {
		geak_warn("--compare: name two runs (summaries or record files), A and B");
		exit(GEAK_EXIT_USAGE);
	}
	if (o->compare && o->kernels_dir) {
		geak_warn("--kernels: not with --compare");
		exit(GEAK_EXIT_USAGE);
	}
	if (!o->ks) {
		o->ks = geak_xmalloc(sizeof *o->ks);
		o->ks[0] = 1;
		o->nks = 1;
	}
}

int
main(int argc, char **argv)
{
	struct opts o = { .beam = 1 };
	struct geak_output out;
	json_t *sum = NULL;
	size_t records = 0;
	int status;

	geak_setprog(argv[0]);
	for (size_t i = 0; i < 4; i++)
		add_fast_p((const double[]){ 0, 1, 1.5, 2 }[i]);
	parse_args(argc, argv, &o);
	if (o.compare) {
		status = run_compare(&o, argv + optind);
		free(o.ks);
		free(fast_ps);
		return status;
	}
	struct geak_pool pool = {
		.paths = argv + optind, .npaths = argc - optind, .sink = 1, .all = 1,
		.fn = take_record, .written = count_record, .arg = &records,
	};
	status = geak_pool_run(&pool);
	geak_output_init(&out, stdout, "stdout");
	if (o.kernels_dir)
		name_kernel_files();
	if (o.summary_path || o.summary_only || o.report_path)
		sum = summary_json(&o, records);
	if (!o.summary_only && write_selection(&out, o.beam) < 0)
		status = GEAK_EXIT_FATAL;
	if (o.summary_only && write_json_file("-", sum) < 0)
		status = GEAK_EXIT_FATAL;
	if (o.summary_path && write_json_file(o.summary_path, sum) < 0)
		status = GEAK_EXIT_FATAL;
	if (o.kernels_dir && write_kernel_files(o.kernels_dir) < 0)
		status = GEAK_EXIT_FATAL;
	if (o.report_path)
		attach_code(sum);
	if (o.report_path && geak_report_write(o.report_path, sum) < 0)
		status = GEAK_EXIT_FATAL;
	if (geak_output_close(&out) < 0)
		status = GEAK_EXIT_FATAL;
	json_decref(sum);
	forget_records();
	free(o.ks);
	free(fast_ps);
	return status;
}
