/* llmstage.h: the filter loop of a stage that asks the model about some
 * records (geak-reflect, geak-opt): records are read in chunks, the
 * chunk's requests run in parallel, and every record is written out in
 * input order. */
#ifndef GEAK_LLMSTAGE_H
#define GEAK_LLMSTAGE_H

#include <jansson.h>

#include "llm.h"

struct geak_llm_stage {
	struct geak_llm *llm;
	/* The prompt for rec (caller frees), or NULL to pass rec on without a
	 * call.  May attach an error to rec instead (then returns NULL). */
	char *(*prompt)(json_t *rec, const char *where, void *ctx);
	/* Use the model's answer; 0, or 1 when it attached an error. */
	int (*apply)(json_t *rec, const char *answer, void *ctx);
	void *ctx;
	/* 1: the call is advice about the code, not the code's maker, so the
	 * record's `llm` field is left as it was (usage_total still grows). */
	int keep_llm_field;
	/* Called after each chunk with the records seen so far, for progress. */
	void (*progress)(size_t done, size_t calls, void *ctx);
};

/* Run the stage over the named inputs (none: stdin) to stdout.  Returns
 * the exit status (lib/util.h). */
int geak_llm_stage_run(struct geak_llm_stage *st, char *const *paths, int npaths);
/* A stage tool's whole life after its options: open the client, answer
 * --check, else run the stage over the files; returns the exit status. */
int geak_llm_stage_main(struct geak_llm_stage *st, const struct geak_llm_config *cfg,
	char *const *paths, int npaths);

#endif
