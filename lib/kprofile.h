/* kprofile.h: the kernel profile of a candidate's largest performance
 * case (geak-eval --profile; geak-record(5), eval.profile) in the words
 * the prompts show. */
#ifndef GEAK_KPROFILE_H
#define GEAK_KPROFILE_H

#include <stddef.h>
#include <jansson.h>

/* Kernels the prompts show, the longest first. */
#define GEAK_KPROFILE_KERNELS 5

/* A heading line and one line per kernel (at most max, the rest summed
 * in one line), or one line saying why there is no profile; NULL when
 * profile is not an object.  Caller frees. */
char *geak_kprofile_text(json_t *profile, size_t max);

#endif
