/* evalcalib.h: the references' calibrations as an archive: exported
 * after a run, imported into a cache, their outputs made again on demand
 * (geak-eval --export-calibration, --import-calibration). */
#ifndef GEAK_EVALCALIB_H
#define GEAK_EVALCALIB_H

#include <jansson.h>

#include "eval/evaljob.h"
#include "recpool.h"

/* The run with the calibrations' archives (either path may be NULL): the
 * archive at import_path imported (with slot s's greeting as
 * this machine's device and harness), the records evaluated (none when
 * an import names no input file), the profiles of the tasks read
 * exported.  The exit status: the pool's, 1 where a profile was
 * refused, 3 where an archive could not be read or written. */
int geak_calib_run(struct geak_slot *s, struct geak_pool *pool, const char *export_path,
	const char *import_path);

#endif
