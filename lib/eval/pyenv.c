/* pyenv.c: the harness's Python, found, asked and explained. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/harness.h"
#include "eval/pyenv.h"
#include "eval/sandbox.h"
#include "runner.h"
#include "util.h"

#define PROBE_TIMEOUT 120.0 /* importing torch on a cold, busy machine */

/* Each module on its own, so that one missing does not hide the others;
 * torch's GPUs as the user's own environment shows them. */
static const char probe_script[] =
	"import json, sys\n"
	"r = {'python': sys.version.split()[0]}\n"
	"for name in ('numpy', 'torch', 'triton'):\n"
	"    try:\n"
	"        m = __import__(name)\n"
	"    except Exception as e:\n"
	"        r[name] = {'error': '%s: %s' % (type(e).__name__, e)}\n"
	"    else:\n"
	"        r[name] = {'version': str(getattr(m, '__version__', '?'))}\n"
	"t = sys.modules.get('torch')\n"
	"if t is not None:\n"
	"    r['torch']['cuda'] = t.version.cuda\n"
	"    r['torch']['hip'] = getattr(t.version, 'hip', None)\n"
	"    try:\n"
	"        n = t.cuda.device_count() if t.cuda.is_available() else 0\n"
	"        r['torch']['gpus'] = [t.cuda.get_device_name(i) for i in range(n)]\n"
	"    except Exception as e:\n"
	"        r['torch']['gpus'] = []\n"
	"        r['torch']['gpu_error'] = '%s: %s' % (type(e).__name__, e)\n"
	"print(json.dumps(r))\n";

static char *
installed_python(void)
{
	char *path = geak_xasprintf("%s/harness-python", geak_sharedir());
	char *text = geak_read_file(path, NULL);

	free(path);
	if (!text)
		return NULL;
	text[strcspn(text, "\r\n")] = '\0';
	if (*text && access(text, X_OK) == 0)
		return text;
	free(text);
	return NULL;
}

/* The harness runs in a folder of its own: a path relative to here is
 * made absolute (a bare name is searched in PATH, as it is). */
static char *
from_here(const char *path)
{
	char cwd[4096];

	if (path[0] == '/' || !strchr(path, '/') || !getcwd(cwd, sizeof cwd))
		return geak_xstrdup(path);
	return geak_xasprintf("%s/%s", cwd, path);
}

void
geak_pyenv_find(struct geak_pyenv *py, const char *given)
{
	const char *env = getenv("GEAK_PYTHON");
	char *p, *venv;

	if (given && *given) {
		py->python = from_here(given), py->from = "--python";
		return;
	}
	if (env && *env) {
		py->python = from_here(env), py->from = "$GEAK_PYTHON";
		return;
	}
	/* The venv's folder without detours, its python as named: a venv
	 * knows itself by the path its interpreter is run by. */
	p = geak_xasprintf("%s/../.venv", geak_sharedir());
	venv = realpath(p, NULL);
	free(p);
	p = venv ? geak_xasprintf("%s/bin/python", venv) : NULL;
	free(venv);
	if (p && access(p, X_OK) == 0) {
		py->python = p, py->from = "the build tree's .venv";
		return;
	}
	free(p);
	if ((p = installed_python())) {
		py->python = p, py->from = "as make install found it";
		return;
	}
	py->python = geak_xstrdup("python3"), py->from = "python3 on PATH: no other was found";
}

void
geak_pyenv_free(struct geak_pyenv *py)
{
	free(py->python);
	memset(py, 0, sizeof *py);
}

json_t *
geak_pyenv_probe(const char *python, const char *home, char *err, size_t errlen)
{
	static const char *const allow[] = {
		"PATH", "LANG", "LC_*", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_*", "HIP_*",
		"ROCR_*", "ROCM_PATH", "HSA_*", "TZ", NULL,
	};
	char *home_var = geak_xasprintf("HOME=%s", home);
	const char *set[] = { home_var, "PYTHONDONTWRITEBYTECODE=1", NULL };
	char *argv[] = { (char *)python, "-B", "-c", (char *)probe_script, NULL };
	char **env = geak_env_build(allow, set);
	struct geak_run r = { .spawn = { .argv = argv, .envp = env, .cwd = home, .keep_fd = -1 },
		.timeout_s = PROBE_TIMEOUT };
	json_t *probe = NULL;
	char *last;

	if (geak_run(&r) < 0) {
		snprintf(err, errlen, "%s", r.errmsg);
	} else if (r.timed_out) {
		snprintf(err, errlen, "it did not answer within %.0f s", PROBE_TIMEOUT);
	} else {
		/* The answer is its last line; anything before it is noise. */
		size_t n = r.out_len;
		while (n && r.out[n - 1] == '\n')
			r.out[--n] = '\0';
		last = strrchr(r.out, '\n');
		probe = json_loads(last ? last + 1 : r.out, 0, NULL);
		if (!json_is_object(probe)) {
			json_decref(probe);
			probe = NULL;
			snprintf(err, errlen, "it answered no probe (exit %d): %.300s", r.code,
			    r.err_len ? r.err : "no message");
		}
	}
	geak_run_free(&r);
	geak_env_free(env);
	free(home_var);
	return probe;
}

char *
geak_pyenv_missing(json_t *probe)
{
	static const char *const names[] = { "numpy", "torch", "triton" };
	const char *gone[3];
	size_t n = 0;

	for (size_t i = 0; i < 3; i++)
		if (!json_is_string(json_object_get(json_object_get(probe, names[i]), "version")))
			gone[n++] = names[i];
	if (n == 0)
		return NULL;
	if (n == 1)
		return geak_xstrdup(gone[0]);
	if (n == 2)
		return geak_xasprintf("%s and %s", gone[0], gone[1]);
	return geak_xasprintf("%s, %s and %s", gone[0], gone[1], gone[2]);
}

int
geak_pyenv_cpu_build(json_t *build)
{
	return json_is_object(build) && !json_is_string(json_object_get(build, GEAK_BUILD_CUDA)) &&
	    !json_is_string(json_object_get(build, GEAK_BUILD_HIP));
}

const char *
geak_pyenv_build_vendor(json_t *build)
{
	if (json_is_string(json_object_get(build, GEAK_BUILD_HIP)))
		return "amd";
	if (json_is_string(json_object_get(build, GEAK_BUILD_CUDA)))
		return "nvidia";
	return NULL;
}

/* PyTorch's wheel index for a driver ("cuda 12.4": .../cu124, "hip 6.2":
 * .../rocm6.2), with a placeholder where the driver is not known. */
static void
torch_index(const char *vendor, const char *driver, char *out, size_t outlen)
{
	unsigned major, minor;
	int amd = !strcmp(vendor, "amd");

	if (driver && sscanf(driver, amd ? "hip %u.%u" : "cuda %u.%u", &major, &minor) == 2)
		snprintf(out, outlen, "https://download.pytorch.org/whl/%s%u%s%u", amd ? "rocm" : "cu",
		    major, amd ? "." : "", minor);
	else
		snprintf(out, outlen, "https://download.pytorch.org/whl/%s", amd ? "rocmX.Y" : "cuXYZ");
}

void
geak_pyenv_gpu_fix(const struct geak_pyenv *py, const char *vendor, const char *driver,
    const char *torch, char *out, size_t outlen)
{
	char index[128], pinned[64] = "torch";
	const char *build, *kind, *then;

	if (!vendor || (strcmp(vendor, "nvidia") && strcmp(vendor, "amd"))) {
		snprintf(out, outlen, "run `make deps TORCH=cuda` (or TORCH=rocm) in geak's source "
		    "tree, or name a Python with a CUDA or ROCm build of torch with --python or "
		    "GEAK_PYTHON");
		return;
	}
	build = strcmp(vendor, "amd") ? "CUDA" : "ROCm";
	kind = strcmp(vendor, "amd") ? "cuda" : "rocm";
	torch_index(vendor, driver, index, sizeof index);
	/* The same release, in the other build: "2.13.0+cpu" is 2.13.0. */
	if (torch && isdigit((unsigned char)*torch))
		snprintf(pinned, sizeof pinned, "torch==%.*s", (int)strcspn(torch, "+ "), torch);
	/* make deps builds the tree's .venv, which a named Python overrides. */
	then = !strcmp(py->from, "--python") ? ", then leave out --python" :
	    !strcmp(py->from, "$GEAK_PYTHON") ? ", then unset GEAK_PYTHON" : "";
	snprintf(out, outlen, "for its %s GPUs run `make deps TORCH=%s` in geak's source tree "
	    "(a %s build of torch in its .venv%s), or put one into that Python: "
	    "%s -m pip install --force-reinstall %s --index-url %s", !strcmp(vendor, "amd") ?
	    "AMD" : "NVIDIA", kind, build, then, py->python, pinned, index);
}

/* "ModuleNotFoundError: ...": a dotted name ending in Error or
 * Exception, then a colon. */
static int
names_exception(const char *p, size_t n)
{
	size_t k = 0;

	while (k < n && (isalnum((unsigned char)p[k]) || p[k] == '_' || p[k] == '.'))
		k++;
	if (k == 0 || k >= n || p[k] != ':')
		return 0;
	return (k >= 5 && !strncmp(p + k - 5, "Error", 5)) ||
	    (k >= 9 && !strncmp(p + k - 9, "Exception", 9));
}

/* The last line of a Python traceback that names the exception. */
static void
exception_line(const char *text, char *out, size_t outlen)
{
	const char *best = NULL;

	for (const char *p = text; p && *p; ) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (names_exception(p, n))
			best = p;
		p = end ? end + 1 : NULL;
	}
	out[0] = '\0';
	if (best)
		snprintf(out, outlen, "%.*s", (int)strcspn(best, "\n"), best);
}

void
geak_pyenv_explain(const struct geak_pyenv *py, const char *error, int in_check,
    char *out, size_t outlen)
{
	const char *fix = in_check ? "name a Python that has torch, triton and numpy with "
	    "--python or GEAK_PYTHON, or install them there (share/harness/requirements.txt)" :
	    "name a Python that has torch, triton and numpy with --python or GEAK_PYTHON, or "
	    "install them there (share/harness/requirements.txt); geak-eval --check says what "
	    "it finds";
	const char *more = in_check ? "" : "; geak-eval --check says more";
	const char *mod = strstr(error, "No module named '");
	char exc[512];

	if (!strncmp(error, "cannot run ", 11)) {
		const char *why = strrchr(error, ':');
		snprintf(out, outlen, "the harness's Python, %s (%s), cannot be run (%s): %s",
		    py->python, py->from, why ? why + 2 : error, fix);
	} else if (mod) {
		mod += strlen("No module named '");
		snprintf(out, outlen, "the harness's Python, %s (%s), cannot import %.*s: %s",
		    py->python, py->from, (int)strcspn(mod, "'."), mod, fix);
	} else if (strstr(error, "did not start in time")) {
		snprintf(out, outlen, "the harness's Python, %s (%s), did not start the harness "
		    "in time (it imports torch and triton): the machine may be too busy%s",
		    py->python, py->from, more);
	} else {
		exception_line(error, exc, sizeof exc);
		snprintf(out, outlen, "the harness could not start under %s (%s): %s%s",
		    py->python, py->from, *exc ? exc : error, more);
	}
	for (char *c = out; *c; c++) /* one message, one line */
		if (*c == '\n')
			*c = ' ';
}
