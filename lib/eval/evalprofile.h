/* evalprofile.h: each task's reference, calibrated once per device and
 * harness version (the harness's "calibrate" job) and kept in the cache,
 * with the autotuner choices of its first timing. */
#ifndef GEAK_EVALPROFILE_H
#define GEAK_EVALPROFILE_H

#include <jansson.h>

#include "eval/evaljob.h"

struct geak_profile;

/* The profile of the task whose reference spec is refspec (the task's
 * spec with the reference as its code), calibrated by candidate c's slot
 * where no other evaluator has: NULL with err set when the harness could
 * not be used.  A profile whose reference cannot be calibrated is
 * returned too: see geak_profile_error.  Every candidate of a task shares
 * one. */
struct geak_profile *geak_profile_get(struct geak_cand *c, json_t *refspec, double *seconds,
	char *err, size_t errlen);
/* Where the reference's calibration spent its seconds, by process and
 * step (profile.json's "steps"), or NULL; borrowed. */
json_t *geak_profile_steps(const struct geak_profile *p);
/* Why the reference cannot be calibrated, or NULL when it can. */
const char *geak_profile_error(const struct geak_profile *p);
const char *geak_profile_dir(const struct geak_profile *p);
json_t *geak_profile_json(const struct geak_profile *p);
/* The most device memory one process of the reference held, in MiB, or
 * 0 (the CPU mode, an older harness). */
long geak_profile_gpu_mib(const struct geak_profile *p);
/* The plan a candidate of the task runs by (a new reference). */
json_t *geak_profile_plan(const struct geak_profile *p);

/* The autotuner choices of the reference's first timing on this device,
 * per performance case (a new reference), or NULL: later timings pin them
 * instead of searching.  keep_pins saves those of a candidate's
 * timing.json where none are saved. */
json_t *geak_profile_pins(const struct geak_profile *p);
void geak_profile_keep_pins(const struct geak_profile *p, json_t *timing);

/* fn called for each profile of this run that is kept on disk (key,
 * the reference's spec, its folder), under the profiles' lock. */
void geak_profile_each(void (*fn)(void *arg, const char *key, json_t *refspec, const char *dir),
	void *arg);

/* The profiles kept by this run, freed. */
void geak_profiles_free(void);

#endif
