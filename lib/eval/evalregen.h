/* evalregen.h: an imported profile's outputs made again. */
#ifndef GEAK_EVALREGEN_H
#define GEAK_EVALREGEN_H

#include <jansson.h>

#include "eval/evaljob.h"

/* A profile in dir that came without its outputs (profile.pt): an
 * imported one. */
int geak_calib_wants_outputs(json_t *profile, const char *dir);
/* Its outputs made again by slot s (the harness's "regenerate" job) and
 * put in dir; 0, or -1 with err set (they cannot be, or differ from
 * those the calibration recorded). */
int geak_calib_regenerate(struct geak_cand *c, json_t *refspec, const char *dir, char *err,
	size_t errlen);
/* base/key put aside and removed, for a calibration in its place. */
void geak_calib_discard(const char *base, const char *key);

#endif
