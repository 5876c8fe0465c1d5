/* owntask.h: what a user's own Python file holds, read without running
 * it: a KernelBench-style problem (class Model, get_inputs(),
 * get_init_inputs() at the top level), or a plain task (a reference
 * function and inputs() or test(fn), perhaps perf_inputs()), or neither,
 * and then what it lacks. */
#ifndef GEAK_OWNTASK_H
#define GEAK_OWNTASK_H

#include <stddef.h>

enum geak_own_form {
	GEAK_OWN_NONE,        /* none of the forms: see why */
	GEAK_OWN_KERNELBENCH, /* a KernelBench-style problem */
	GEAK_OWN_PLAIN,       /* a function and its inputs */
};

struct geak_own {
	enum geak_own_form form;
	char *entry;      /* plain: the reference function's name */
	char *signature;  /* plain: its "def name(params)" line */
	char *docstring;  /* plain: its docstring, cleaned, or NULL */
	int has_perf;     /* plain: defines perf_inputs() */
	char *why;        /* GEAK_OWN_NONE: what the file lacks, a clause */
};

/* Read src (NUL-terminated).  want_entry names the reference function
 * (NULL: the only public top-level function that is not inputs(),
 * perf_inputs(), test(), gbps(), tflops() or a Triton kernel, or the one
 * named stem when there are several).  Returns the form; free with
 * geak_own_free. */
enum geak_own_form geak_own_read(const char *src, const char *want_entry, const char *stem,
	struct geak_own *out);
void geak_own_free(struct geak_own *o);

/* 1 when src defines `kw name` at its top level (kw "def" or "class"). */
int geak_own_defines(const char *src, const char *kw, const char *name);

#endif
