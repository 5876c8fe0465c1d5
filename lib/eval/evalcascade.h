/* evalcascade.h: one candidate through geak-eval's fixed path: static
 * checks, the reference's profile, one run of every seed and performance
 * case, the judge, and on a GPU the timing and its judge. */
#ifndef GEAK_EVALCASCADE_H
#define GEAK_EVALCASCADE_H

#include <jansson.h>

#include "eval/evaljob.h"
#include "eval/evalresult.h"

/* The candidate of rec, whose task spec (geak-eval's task_spec) is given,
 * into ev: 0, or -1 with err set when the harness could not be used or
 * the reference cannot be calibrated (the record then gets an error). */
int geak_evaluate(struct geak_cand *c, json_t *rec, json_t *spec, struct geak_eval *ev,
	char *err, size_t errlen);

/* The spec of the task's reference, as it is calibrated (a new reference):
 * the task's, with the reference as its code. */
json_t *geak_reference_spec(const struct geak_evalcfg *cfg, json_t *spec, json_t *rec);

#endif
