/* evalcalib.h: the references' calibrations as an archive: exported
 * after a run, imported into a cache, their outputs made again on demand
 * (geak-eval --export-calibration, --import-calibration). */
#ifndef GEAK_EVALCALIB_H
#define GEAK_EVALCALIB_H

#include <jansson.h>

#include "eval/evaljob.h"
#include "recpool.h"

struct geak_calibopts {
	const char *export_path;  /* --export-calibration FILE, or NULL */
	const char *import_path;  /* --import-calibration FILE, or NULL */
};
extern struct geak_calibopts geak_copt;

/* The run with them: the archive imported (with slot s's greeting as
 * this machine's device and harness), the records evaluated (none when
 * an import names no input file), the profiles of the tasks read
 * exported.  The exit status: the pool's, 1 where a profile was
 * refused, 3 where an archive could not be read or written. */
int geak_calib_run(struct geak_slot *s, struct geak_pool *pool);

/* A profile in dir that came without its outputs (profile.pt): an
 * imported one. */
int geak_calib_wants_outputs(json_t *profile, const char *dir);
/* Its outputs made again by slot s (the harness's "regenerate" job) and
 * put in dir; 0, or -1 with err set (they cannot be, or differ from
 * those the calibration recorded). */
int geak_calib_regenerate(struct geak_slot *s, json_t *refspec, const char *dir, char *err,
	size_t errlen);
/* base/key put aside and removed, for a calibration in its place. */
void geak_calib_discard(const char *base, const char *key);

#endif
