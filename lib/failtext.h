/* failtext.h: what a prompt shows of an evaluation that failed (geak-gen's
 * debug prompt, geak-reflect's): the evaluator's message, the trimmed
 * traceback, the lines of the output that report a mismatch. */
#ifndef GEAK_FAILTEXT_H
#define GEAK_FAILTEXT_H

#include <stddef.h>
#include <jansson.h>

/* The text, at most about max bytes (cut at a line start, keeping the
 * end, where the exception is, and saying how much was cut); NULL when
 * the evaluation says nothing.  Caller frees. */
char *geak_fail_text(json_t *eval, size_t max);

#endif
