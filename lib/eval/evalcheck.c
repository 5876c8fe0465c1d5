/* evalcheck.c: geak-eval's preflight (--check): which Python, torch,
 * Triton and GPUs the harness would run with, and whether it starts and
 * can use them; and, for every run, a GPU that torch cannot use, said in
 * the user's terms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/evalcheck.h"
#include "eval/harness.h"
#include "gpu.h"
#include "record.h"
#include "util.h"

/* The driver of the machine's GPUs, as geak_gpu_list says it ("cuda
 * 12.4"); NULL when none says.  Caller frees. */
static char *
gpu_driver(void)
{
	char err[256], *driver = NULL;
	json_t *list, *g;
	size_t i;

	if (geak_gpu_list(&list, err, sizeof err) < 0)
		return NULL;
	json_array_foreach(list, i, g)
		if (!driver && json_is_string(json_object_get(g, "driver")))
			driver = geak_xstrdup(geak_get_str(g, "driver"));
	json_decref(list);
	return driver;
}

/* A GPU that torch cannot use, in the user's terms: a CPU build, a build
 * for the other vendor's GPUs (with how to get the right one), or a
 * device that a fitting build does not see. */
static void
say_unusable(const struct geak_pyenv *py, char *why, size_t n, const struct geak_slot *s,
    const char *torch, json_t *build, const char *err)
{
	const char *built_for = geak_pyenv_build_vendor(build);
	const char *vendor = s->cfg->vendor, *gpu = s->gpu;
	char fix[1024], *driver;

	if (!json_is_object(build) || (built_for && (!vendor || !strcmp(built_for, vendor)))) {
		snprintf(why, n, "GPU %s cannot be used: torch %s sees no GPU there%s%s%s; check "
		    "geak-eval --list-gpus and CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES, or "
		    "evaluate on the CPU with --cpu", gpu, torch ? torch : "", err ? " (" : "",
		    err ? err : "", err ? ")" : "");
		return;
	}
	driver = gpu_driver();
	geak_pyenv_gpu_fix(py, vendor, driver, torch, fix, sizeof fix);
	free(driver);
	if (!built_for)
		snprintf(why, n, "GPU %s cannot be used: the torch of %s (%s, %s) is a CPU build; "
		    "%s; or evaluate on the CPU with --cpu", gpu, py->python, py->from,
		    torch ? torch : "?", fix);
	else
		snprintf(why, n, "GPU %s cannot be used: it is an %s GPU and the torch of %s (%s, %s) "
		    "is built for %s %s; %s; or evaluate on the CPU with --cpu", gpu,
		    !strcmp(vendor, "amd") ? "AMD" : "NVIDIA", py->python, py->from,
		    torch ? torch : "?", !strcmp(built_for, "amd") ? "ROCm" : "CUDA",
		    geak_get_str(build, !strcmp(built_for, "amd") ? "hip" : "cuda"), fix);
}

/* 1, with why, when the slot's GPU gives torch no device. */
int
geak_eval_gpu_unusable(const struct geak_pyenv *py, struct geak_slot *s, char *why, size_t n)
{
	json_t *hello = s->w[GEAK_W_RUN].hello;

	if (!s->gpu || json_is_string(geak_get(hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_NAME)))
		return 0;
	say_unusable(py, why, n, s, geak_get_str(hello, GEAK_HELLO_VERSIONS "." GEAK_VERSIONS_TORCH),
	    json_object_get(hello, GEAK_HELLO_BUILD), geak_get_str(hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_ERROR));
	return 1;
}

static void
say_module(json_t *probe, const char *name)
{
	json_t *m = json_object_get(probe, name);
	const char *v = geak_get_str(m, "version");

	if (!v) {
		printf("%s: missing (%s)\n", name, geak_get_str(m, "error") ?
		    geak_get_str(m, "error") : "not imported");
		return;
	}
	printf("%s: %s", name, v);
	if (!strcmp(name, "torch") && geak_pyenv_cpu_build(m))
		printf(", a CPU build (no CUDA, no ROCm)");
	else if (!strcmp(name, "torch") && geak_get_str(m, "cuda"))
		printf(", built for CUDA %s", geak_get_str(m, "cuda"));
	else if (!strcmp(name, "torch") && geak_get_str(m, "hip"))
		printf(", built for ROCm %s", geak_get_str(m, "hip"));
	putchar('\n');
}

/* The GPUs the vendor runtimes list, against those torch sees. */
static void
say_gpus(json_t *probe)
{
	json_t *list, *g, *seen = geak_get(probe, "torch.gpus");
	char err[256];
	size_t i;

	if (geak_gpu_list(&list, err, sizeof err) < 0) {
		printf("GPUs listed (--list-gpus): none: %s\n", err);
	} else {
		printf("GPUs listed (--list-gpus): %s", json_array_size(list) ? "" : "none");
		json_array_foreach(list, i, g)
			printf("%s%lld %s", i ? ", " : "", (long long)json_integer_value(
			    json_object_get(g, "index")), geak_get_str(g, "name"));
		putchar('\n');
		json_decref(list);
	}
	if (!json_is_array(seen))
		return;
	printf("GPUs torch sees: %s", json_array_size(seen) ? "" : "none");
	json_array_foreach(seen, i, g)
		printf("%s%zu %s", i ? ", " : "", i, json_string_value(g));
	if (geak_get_str(probe, "torch.gpu_error"))
		printf(" (%s)", geak_get_str(probe, "torch.gpu_error"));
	putchar('\n');
}

/* 1 when a torch build cannot use the machine's GPUs: a CPU build, or
 * one for the other vendor's. */
static int
unfit_build(json_t *build, const char *vendor)
{
	const char *built_for = geak_pyenv_build_vendor(build);

	return geak_pyenv_cpu_build(build) || (built_for && vendor && strcmp(built_for, vendor));
}

int
geak_eval_check(struct geak_slot *s, const struct geak_pyenv *py, const char *mode_line,
    void (*say_counters)(void))
{
	char err[2048], why[3072];
	json_t *probe, *hello;
	char *missing;
	double t0;

	probe = geak_pyenv_probe(py->python, s->home, err, sizeof err);
	if (!probe) {
		printf("python: %s (%s)\n", py->python, py->from);
		geak_pyenv_explain(py, err, 1, why, sizeof why);
		printf("FAILED: %s\n", why);
		return 1;
	}
	printf("python: %s (%s), Python %s\nharness: %s\n", py->python, py->from,
	    geak_get_str(probe, "python"), s->cfg->harness);
	say_module(probe, "torch");
	say_module(probe, "triton");
	say_module(probe, "numpy");
	say_gpus(probe);
	printf("%s\n", mode_line);
	if (s->gpu)
		say_counters();
	fflush(stdout);
	if ((missing = geak_pyenv_missing(probe))) {
		printf("FAILED: %s (%s) cannot import %s: name a Python that has torch, triton "
		    "and numpy with --python or GEAK_PYTHON, or install them there "
		    "(share/harness/requirements.txt)\n", py->python, py->from, missing);
		free(missing);
		json_decref(probe);
		return 1;
	}
	/* Known without starting the harness (which tries every sandbox
	 * layer before it gives up on a device). */
	if (s->gpu && unfit_build(json_object_get(probe, "torch"), s->cfg->vendor)) {
		say_unusable(py, why, sizeof why, s, geak_get_str(probe, "torch.version"),
		    json_object_get(probe, "torch"), NULL);
		printf("FAILED: %s\n", why);
		json_decref(probe);
		return 1;
	}
	json_decref(probe);
	t0 = geak_now();
	if (geak_slot_up(s, GEAK_W_RUN, err, sizeof err) < 0) {
		geak_pyenv_explain(py, err, 1, why, sizeof why);
		printf("FAILED: %s\n", why);
		return 1;
	}
	if (geak_eval_gpu_unusable(py, s, why, sizeof why)) {
		printf("FAILED: %s\n", why);
		return 1;
	}
	hello = s->w[GEAK_W_RUN].hello;
	printf("worker: started in %.1f s, harness %s, device %s\n", geak_now() - t0,
	    geak_get_str(hello, GEAK_HELLO_HARNESS), geak_get_str(hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_NAME));
	printf("ok: the harness starts and evaluates on %s\n", s->gpu ?
	    geak_get_str(hello, GEAK_HELLO_DEVICE "." GEAK_DEVICE_NAME) : "the CPU");
	return 0;
}
