/* linediff.h: the shortest edit script between two texts, line by line
 * (Myers' O(ND) greedy algorithm), for showing a kernel against the
 * code it started from. */
#ifndef GEAK_LINEDIFF_H
#define GEAK_LINEDIFF_H

#include <stddef.h>

/* One line of the script: ' ' a line of both (a[ia] equals b[ib]),
 * '-' a[ia] removed, '+' b[ib] added (the other index is meaningless). */
struct geak_diff_op {
	char op;
	size_t ia, ib;
};

/* The lines of text, split at '\n' in place (a final '\r' of a line is
 * dropped); *n gets their number.  A final line without '\n' counts; an
 * empty text has none.  Caller frees the array, not the lines. */
char **geak_split_lines(char *text, size_t *n);

/* The edit script from a[0..na) to b[0..nb): the equal lines and the
 * fewest removals and additions, in order, removals of a place before
 * its additions.  *ops is allocated (free it) and *nops set.  Returns
 * the number of removals and additions, or -1 when there are more than
 * max_d (the work grows with its square), leaving *ops NULL. */
long geak_diff(const char *const *a, size_t na, const char *const *b, size_t nb,
	size_t max_d, struct geak_diff_op **ops, size_t *nops);

#endif
