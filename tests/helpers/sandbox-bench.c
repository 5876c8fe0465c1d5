/* sandbox-bench: what starting a program under the runner's sandbox
 * layers costs: the milliseconds per run of COMMAND, N times each with no
 * layer, a network namespace, PID and IPC namespaces, and all of them in
 * a private root that shows the system and the paths given with -r.
 *
 *   sandbox-bench [-n N] [-r PATH]... COMMAND [ARG]... */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "runner.h"
#include "eval/sandbox.h"
#include "util.h"

static double
ms_per_run(char **argv, int layers, const struct geak_view *v, int n, int *applied)
{
	double t0 = geak_now();

	for (int i = 0; i < n; i++) {
		struct geak_run r = {0};
		struct geak_sandbox sb = { .layers = layers, .view = v };
		r.spawn.argv = argv;
		r.spawn.keep_fd = -1;
		geak_sandbox_spawn(&r.spawn, &sb);
		r.timeout_s = 60;
		if (geak_run(&r) < 0 || !r.exited || r.code)
			geak_die(GEAK_EXIT_FATAL, "%s failed under layers %d: %s%s", argv[0], layers,
			    r.errmsg, r.err ? r.err : "");
		*applied = r.sandbox;
		geak_run_free(&r);
	}
	return (geak_now() - t0) * 1000 / n;
}

int
main(int argc, char **argv)
{
	static const struct { const char *name; int layers; } sets[] = {
		{ "none", 0 }, { "network", GEAK_SB_NONET }, { "pid+ipc", GEAK_SB_PID | GEAK_SB_IPC },
		{ "all, private root", GEAK_SB_NONET | GEAK_SB_PID | GEAK_SB_IPC | GEAK_SB_VIEW },
	};
	const char **ro = geak_xcalloc((size_t)argc + 1, sizeof *ro);
	char *run = geak_mkworkdir(NULL, "geak-sbbench-"), *stage;
	struct geak_view v;
	struct geak_view_spec sp = {0};
	size_t nro = 0;
	int n = 20, c, applied = 0;

	geak_setprog(argv[0]);
	while ((c = getopt(argc, argv, "+n:r:")) != -1) {
		if (c == 'n')
			n = (int)geak_parse_long(optarg, "-n", 1, 100000);
		else if (c == 'r')
			ro[nro++] = optarg;
		else
			geak_die(GEAK_EXIT_USAGE, "usage: sandbox-bench [-n N] [-r PATH]... COMMAND [ARG]...");
	}
	if (optind >= argc || !run)
		geak_die(GEAK_EXIT_USAGE, "usage: sandbox-bench [-n N] [-r PATH]... COMMAND [ARG]...");
	stage = geak_xasprintf("%s/.root", run);
	if (mkdir(stage, 0700) < 0)
		geak_die(GEAK_EXIT_FATAL, "%s:", stage);
	sp.stage = stage;
	sp.ro = ro;
	geak_view_make(&v, &sp);
	for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
		double ms = ms_per_run(argv + optind, sets[i].layers, &v, n, &applied);
		printf("%-18s %8.2f ms per run%s\n", sets[i].name, ms,
		    applied == sets[i].layers ? "" : " (not every layer applied)");
	}
	geak_view_free(&v);
	geak_rmtree(run);
	free(run), free(stage), free(ro);
	return geak_fshut(stdout, "stdout") < 0 ? GEAK_EXIT_FATAL : 0;
}
