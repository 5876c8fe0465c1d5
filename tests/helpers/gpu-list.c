/* gpu-list: print geak_gpu_list's JSON array on one line, for tests and
 * for a quick look at what a machine offers. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"
#include "util.h"

int
main(int argc, char **argv)
{
	json_t *gpus;
	char err[256], *text;

	geak_setprog(argv[0]);
	if (argc > 1)
		geak_die(GEAK_EXIT_USAGE, "usage: gpu-list");
	if (geak_gpu_list(&gpus, err, sizeof err) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s", err);
	if (!(text = json_dumps(gpus, JSON_COMPACT | JSON_PRESERVE_ORDER)))
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	puts(text);
	free(text);
	json_decref(gpus);
	return geak_fshut(stdout, "stdout") < 0 ? GEAK_EXIT_FATAL : GEAK_EXIT_OK;
}
