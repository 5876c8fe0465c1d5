/* pyenv.h: the Python that runs geak-eval's harness: which one, why that
 * one, what it has and what it sees, and what its failures mean in the
 * user's terms (geak-eval --check, and a run that cannot start). */
#ifndef GEAK_PYENV_H
#define GEAK_PYENV_H

#include <stddef.h>
#include <jansson.h>

struct geak_pyenv {
	char *python;       /* the interpreter */
	const char *from;   /* why this one: "--python", "$GEAK_PYTHON", ... */
};

/* The first of: given (--python), $GEAK_PYTHON, the build tree's .venv,
 * the one `make install` wrote into SHAREDIR/harness-python, python3 on
 * PATH. */
void geak_pyenv_find(struct geak_pyenv *py, const char *given);
void geak_pyenv_free(struct geak_pyenv *py);

/* Run the interpreter on a short script that imports numpy, torch and
 * triton, each on its own, and asks torch what it was built for and
 * which GPUs it sees:
 *   {"python": "3.11.7",
 *    "numpy": {"version"} | {"error"}, "triton": ..., "torch": {"version",
 *    "cuda", "hip", "gpus": [name, ...], "gpu_error"} | {"error"}}
 * NULL with err set when the interpreter did not run or said nothing. */
json_t *geak_pyenv_probe(const char *python, const char *home, char *err, size_t errlen);

/* The modules of a probe that did not import, as "numpy and torch";
 * NULL when all did.  Caller frees. */
char *geak_pyenv_missing(json_t *probe);

/* 1 when torch was built for neither CUDA nor ROCm: the build field of a
 * worker's greeting, or of a probe's torch. */
int geak_pyenv_cpu_build(json_t *build);

/* The vendor whose GPUs a torch build runs on: "amd" for a ROCm build,
 * "nvidia" for a CUDA build, NULL for a CPU build (the same build fields
 * as geak_pyenv_cpu_build). */
const char *geak_pyenv_build_vendor(json_t *build);

/* How to get a torch that can use the machine's GPUs, as one clause:
 * vendor and driver as geak_gpu_list gives them ("nvidia", "cuda 12.4";
 * "amd", "hip 6.2"; either may be NULL), torch the version the Python
 * has now (NULL when none).  It names `make deps TORCH=...` and the pip
 * command that puts such a build into that Python. */
void geak_pyenv_gpu_fix(const struct geak_pyenv *py, const char *vendor, const char *driver,
	const char *torch, char *out, size_t outlen);

/* Why the harness worker would not start, in the user's terms, from
 * the error geak-eval got (the worker's traceback, or why it could not
 * be run): what is missing and what to do, and, unless in_check, that
 * geak-eval --check says more. */
void geak_pyenv_explain(const struct geak_pyenv *py, const char *error, int in_check,
	char *out, size_t outlen);

#endif
