/* report.h: a run summary (geak-select(1)'s JSON) as a page a person
 * reads: HTML with inline SVG plots, or Markdown tables. */
#ifndef GEAK_REPORT_H
#define GEAK_REPORT_H

#include <jansson.h>

enum { GEAK_REPORT_HTML, GEAK_REPORT_MD };

/* The format a file name asks for (.html/.htm or .md); -1 for others. */
int geak_report_format(const char *path);

/* Write the report for summary to path, through a temporary file renamed
 * into place.  0, or -1 after reporting why. */
int geak_report_write(const char *path, json_t *summary);

/* The parts of the HTML page about each kernel (reportkernel.c): the
 * style they need, the script they carry, the best wins table and a
 * folded section per task; gloss says a failure's reason in words. */
#include "util.h"
extern const char geak_report_kernel_css[];
extern const char geak_report_script[];
void geak_report_wins(struct geak_buf *b, json_t *kernels);
void geak_report_tasks(struct geak_buf *b, json_t *kernels, const char *(*gloss)(const char *));

/* Write the page comparing two runs (geak-select --compare's JSON) to
 * path, as geak_report_write does. */
int geak_report_compare_write(const char *path, json_t *cmp);

#endif
