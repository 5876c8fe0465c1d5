/* pyhtml.h: Python source as HTML with its tokens in spans, for a
 * report's code blocks (no script: the colours come from the page's
 * style sheet). */
#ifndef GEAK_PYHTML_H
#define GEAK_PYHTML_H

#include "util.h"

/* src, escaped, with keywords in <span class="kw">, strings "st",
 * comments "cm", numbers "nu", decorators "de" and the names that def
 * and class define "fn".  A string left open runs to the end. */
void geak_html_python(struct geak_buf *b, const char *src);

#endif
