/* llmstage.h: a stage that asks the model about some records (geak-gen,
 * geak-reflect, geak-opt), on the record loop of recpool.h: -j slot
 * threads, each with its own connections, one request at a time each. */
#ifndef GEAK_LLMSTAGE_H
#define GEAK_LLMSTAGE_H

#include <jansson.h>

#include "llm/llm.h"
#include "util.h"

struct geak_llm_stage {
	struct geak_llm *llm;     /* NULL: no request is ever made (--dry-run) */
	/* An ensemble (--model a,b,...): one client per model, models[0] is
	 * llm.  A record's requests go to models[(run + sample) % nmodels],
	 * so that each lineage keeps its model and samples and independent
	 * runs take the models in turn. */
	struct geak_llm **models;
	size_t nmodels;
	/* As recpool.h's split, for a stage that makes several records of one. */
	size_t (*split)(void *ctx, json_t *rec, const char *where, json_t ***parts);
	/* In a slot thread: what to do with rec.  Set *prompt (malloc'd) to
	 * ask the model, and the answer goes to apply; else return what was
	 * done: GEAK_PASS (rec untouched), GEAK_DONE (changed) or GEAK_FAILED
	 * (an error attached). */
	int (*prompt)(json_t *rec, const char *where, void *ctx, char **prompt);
	/* Use the model's answer: GEAK_DONE, or GEAK_FAILED when it attached
	 * an error. */
	int (*apply)(json_t *rec, const char *answer, const struct geak_llm_reply *reply,
		void *ctx);
	void *ctx;
	/* 1: the call is advice about the code, not the code's maker, so the
	 * record's `llm` field is left as it was (usage_total still grows). */
	int keep_llm_field;
	/* For the progress line and the summary (recpool.h): what the stage
	 * does to a record ("generated"), and why it leaves one alone ("no
	 * failed candidate"). */
	const char *noun;
	const char *pass_why;
	/* The tool's own counts, after the requests' (as recpool.h's tally);
	 * may be NULL. */
	void (*tally)(void *ctx, struct geak_buf *line, int final);
};

/* Run the stage over the named inputs (none: stdin) to stdout.  Returns
 * the exit status (lib/util.h): GEAK_EXIT_RUN when some request failed
 * for a reason that is not its record's (geak_llm_failure_is_the_runs). */
int geak_llm_stage_run(struct geak_llm_stage *st, char *const *paths, int npaths);
/* A stage tool's whole life after its options: open the client (one per
 * model of a comma-separated --model or $GEAK_MODEL, each name optionally
 * "PROVIDER:MODEL", the budgets shared out evenly), answer --check, else
 * run the stage over the files; returns the exit status. */
int geak_llm_stage_main(struct geak_llm_stage *st, const struct geak_llm_config *cfg,
	char *const *paths, int npaths);

#endif
