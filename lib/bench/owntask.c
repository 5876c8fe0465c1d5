/* owntask.c: the form of a user's own Python file (see owntask.h).
 *
 * Only the module's top level counts: a `def` or `class` at column 0.
 * A name bound otherwise (an assignment, an import) is not seen, so a
 * file that builds its functions at run time must define them. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench/owntask.h"
#include "bench/pysig.h"
#include "bench/pysrc.h"
#include "util.h"

/* Functions a task file defines for the harness, never the reference. */
static const char *const harness_names[] = {
	"inputs", "perf_inputs", "test", "gbps", "tflops", "get_inputs", "get_init_inputs", NULL,
};

static int
tok_is(const struct geak_pyfile *f, size_t i, const char *word)
{
	const struct geak_pytok *t = &f->tok[i];
	size_t n = strlen(word);

	return t->type == GEAK_PY_NAME && t->len == n && memcmp(f->src + t->off, word, n) == 0;
}

/* 1 when the module defines `kw name` at its top level (kw "def" or
 * "class"; "async def" counts). */
static int
defines(const struct geak_pyfile *f, const char *kw, const char *name)
{
	for (size_t i = 0; i + 1 < f->ntok; i++) {
		int top = f->tok[i].indent == 0 ||
		    (i > 0 && f->tok[i - 1].indent == 0 && tok_is(f, i - 1, "async"));
		if (top && tok_is(f, i, kw) && tok_is(f, i + 1, name))
			return 1;
	}
	return 0;
}

static int
is_harness_name(const char *name)
{
	for (int i = 0; harness_names[i]; i++)
		if (strcmp(name, harness_names[i]) == 0)
			return 1;
	return 0;
}

/* The top-level functions that could be the reference, in source order,
 * each once. */
static json_t *
reference_candidates(const struct geak_pyfile *f)
{
	json_t *names = json_array();

	if (!names)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	for (size_t i = 0; i < f->nfunc; i++) {
		const struct geak_pyfunc *fn = &f->func[i];
		json_t *name;
		size_t j;
		int seen = 0;
		if (fn->indent != 0 || fn->is_kernel || fn->name[0] == '_' || is_harness_name(fn->name))
			continue;
		json_array_foreach(names, j, name)
			seen |= strcmp(json_string_value(name), fn->name) == 0;
		if (!seen && json_array_append_new(names, json_string(fn->name)) < 0)
			geak_die(GEAK_EXIT_FATAL, "out of memory");
	}
	return names;
}

static const struct geak_pyfunc *
top_function(const struct geak_pyfile *f, const char *name)
{
	for (size_t i = 0; i < f->nfunc; i++)
		if (f->func[i].indent == 0 && strcmp(f->func[i].name, name) == 0)
			return &f->func[i];
	return NULL;
}

/* "a, b and c" */
static char *
name_list(json_t *names)
{
	struct geak_buf b = {0};
	size_t i, n = json_array_size(names);
	json_t *name;

	json_array_foreach(names, i, name)
		geak_buf_printf(&b, "%s%s()", i == 0 ? "" : i + 1 == n ? " and " : ", ",
		    json_string_value(name));
	return geak_buf_steal(&b);
}

/* The reference function's name, or NULL with o->why set. */
static char *
choose_entry(const struct geak_pyfile *f, const char *want, const char *stem, struct geak_own *o)
{
	json_t *names = reference_candidates(f), *name;
	char *entry = NULL, *list;
	size_t i;

	if (want) {
		if (top_function(f, want))
			entry = geak_xstrdup(want);
		else
			o->why = geak_xasprintf("defines no top-level function %s() (--entry)", want);
	} else if (json_array_size(names) == 1) {
		entry = geak_xstrdup(json_string_value(json_array_get(names, 0)));
	} else if (json_array_size(names) == 0) {
		o->why = geak_xstrdup("defines no reference function: only inputs() and the like, "
		    "Triton kernels or names starting with '_'");
	} else {
		json_array_foreach(names, i, name)
			if (stem && strcmp(json_string_value(name), stem) == 0)
				entry = geak_xstrdup(stem);
		if (!entry) {
			list = name_list(names);
			o->why = geak_xasprintf("defines several functions (%s): name the reference "
			    "with --entry", list);
			free(list);
		}
	}
	json_decref(names);
	return entry;
}

/* The "def entry(...)" line of the reference, as pysig writes it. */
static char *
signature_of(const char *src, const char *entry)
{
	json_t *sigs = geak_pysig_list(src), *sig;
	char *want = geak_xasprintf("def %s(", entry), *found = NULL;
	size_t i;

	json_array_foreach(sigs, i, sig) {
		const char *s = json_string_value(sig);
		if (strncmp(s, "async ", 6) == 0)
			s += 6;
		if (!found && strncmp(s, want, strlen(want)) == 0)
			found = geak_xstrdup(json_string_value(sig));
	}
	json_decref(sigs);
	free(want);
	return found;
}

/* A file that has some of KernelBench's names but not all: what it lacks. */
static char *
kernelbench_missing(const struct geak_pyfile *f)
{
	int model = defines(f, "class", "Model"), gi = defines(f, "def", "get_inputs"),
	    gii = defines(f, "def", "get_init_inputs");

	if (!model && !gi && !gii)
		return NULL;
	return geak_xasprintf("looks like a KernelBench problem but defines no %s",
	    !model ? "class Model" : !gi ? "get_inputs()" : "get_init_inputs()");
}

static enum geak_own_form
read_plain(const struct geak_pyfile *f, const char *src, const char *want, const char *stem,
	struct geak_own *o)
{
	const struct geak_pyfunc *fn;

	if (defines(f, "def", "test") && defines(f, "def", "inputs")) {
		o->why = geak_xstrdup("defines both inputs() and test(): the harness would call "
		    "test(fn) alone; keep one");
		return GEAK_OWN_NONE;
	}
	if (!(o->entry = choose_entry(f, want, stem, o)))
		return GEAK_OWN_NONE;
	fn = top_function(f, o->entry);
	if (!(o->signature = signature_of(src, o->entry))) {
		o->why = geak_xasprintf("the parameter list of %s() is not closed", o->entry);
		return GEAK_OWN_NONE;
	}
	if (fn->docstring)
		o->docstring = geak_xstrdup(fn->docstring);
	o->has_perf = defines(f, "def", "perf_inputs");
	return o->form = GEAK_OWN_PLAIN;
}

enum geak_own_form
geak_own_read(const char *src, const char *want_entry, const char *stem, struct geak_own *o)
{
	struct geak_pyfile *f = geak_pyfile_scan(src, strlen(src));

	memset(o, 0, sizeof *o);
	if (defines(f, "class", "Model") && defines(f, "def", "get_inputs") &&
	    defines(f, "def", "get_init_inputs"))
		o->form = GEAK_OWN_KERNELBENCH;
	else if (defines(f, "def", "inputs") || defines(f, "def", "test"))
		read_plain(f, src, want_entry, stem, o);
	else if (!(o->why = kernelbench_missing(f)))
		o->why = geak_xstrdup(f->nfunc ? "defines no inputs(): a task file defines the "
		    "reference function and inputs(), the argument tuples to call it with "
		    "(or test(fn), which calls it)" :
		    "defines no function: it is neither a task (a function and inputs()) nor a "
		    "KernelBench problem (class Model, get_inputs(), get_init_inputs())");
	geak_pyfile_free(f);
	return o->form;
}

int
geak_own_defines(const char *src, const char *kw, const char *name)
{
	struct geak_pyfile *f = geak_pyfile_scan(src, strlen(src));
	int found = defines(f, kw, name);

	geak_pyfile_free(f);
	return found;
}

void
geak_own_free(struct geak_own *o)
{
	free(o->entry);
	free(o->signature);
	free(o->docstring);
	free(o->why);
	memset(o, 0, sizeof *o);
}
