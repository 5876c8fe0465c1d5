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

#endif
