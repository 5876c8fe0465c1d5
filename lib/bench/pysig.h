/* pysig.h: the function signatures of Python source, found by a small
 * lexer rather than a regular expression, so that multi-line parameter
 * lists, defaults that hold parentheses or strings, annotations and
 * comments inside the list come out whole. */
#ifndef GEAK_PYSIG_H
#define GEAK_PYSIG_H

#include <jansson.h>

/* Every `def` statement of src, in source order, as a JSON array of
 * strings "def name(params)" ("async def ..." for coroutines).  Inside the
 * parameter list comments are dropped, each run of white space outside
 * string literals becomes one space, and a trailing comma goes; string
 * literals are kept as written.  A `def` that is not followed by a name
 * and a closed parameter list (truncated source) is left out.  Text in
 * string literals and comments never counts as a statement. */
json_t *geak_pysig_list(const char *src);

/* q at the opening quote of a string literal (one-line or triple-quoted,
 * with backslash escapes): the byte after its end.  An unterminated
 * one-line literal ends at the newline, an unterminated triple-quoted one
 * at the end of the text. */
const char *geak_py_skip_string(const char *q);

#endif
