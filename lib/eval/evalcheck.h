/* evalcheck.h: geak-eval's preflight (--check), beside the LLM client's
 * (llm/llmcheck.c), and what both it and a run say of a GPU that torch
 * cannot use. */
#ifndef GEAK_EVALCHECK_H
#define GEAK_EVALCHECK_H

#include <stddef.h>

#include "eval/evaljob.h"
#include "eval/pyenv.h"

/* 1, with why, when the slot's GPU gives torch no device: a CPU build, a
 * build for the other vendor's GPUs (with how to get the right one), or
 * a device that a fitting build does not see. */
int geak_eval_gpu_unusable(const struct geak_pyenv *py, struct geak_slot *s, char *why,
	size_t n);

/* The answer, on stdout: what the harness of py would run with (where:
 * mode_line, without its newline; say_counters prints the line of the
 * hardware counters), then 0 when it starts on the slot and can use
 * what it was given, else 1 after a line that says what is wrong. */
int geak_eval_check(struct geak_slot *s, const struct geak_pyenv *py, const char *mode_line,
	void (*say_counters)(void));

#endif
