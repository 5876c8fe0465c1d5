/* Unit tests of the line diff: scripts worked out by hand, the shortest
 * length on known cases, the limit, and that every script rebuilds both
 * texts over random edits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/linediff.h"

/* The script as text: one op letter per line ("  -+"), for comparing. */
static char *
ops_text(const struct geak_diff_op *ops, size_t n)
{
	char *s = malloc(n + 1);

	for (size_t i = 0; i < n; i++)
		s[i] = ops[i].op;
	s[n] = '\0';
	return s;
}

/* Both texts come back from the script: ' ' and '-' walk a in order,
 * ' ' and '+' walk b, and ' ' lines are equal. */
static void
assert_rebuilds(const char *const *a, size_t na, const char *const *b, size_t nb,
    const struct geak_diff_op *ops, size_t n)
{
	size_t ia = 0, ib = 0;

	for (size_t i = 0; i < n; i++) {
		if (ops[i].op != '+') {
			assert_int_equal(ops[i].ia, ia);
			ia++;
		}
		if (ops[i].op != '-') {
			assert_int_equal(ops[i].ib, ib);
			ib++;
		}
		if (ops[i].op == ' ')
			assert_string_equal(a[ops[i].ia], b[ops[i].ib]);
	}
	assert_int_equal(ia, na);
	assert_int_equal(ib, nb);
}

static long
diff_of(const char *const *a, size_t na, const char *const *b, size_t nb, char **text)
{
	struct geak_diff_op *ops;
	size_t n;
	long d = geak_diff(a, na, b, nb, 1000, &ops, &n);

	if (d >= 0)
		assert_rebuilds(a, na, b, nb, ops, n);
	*text = d >= 0 ? ops_text(ops, n) : NULL;
	free(ops);
	return d;
}

static void
known_scripts(void **state)
{
	/* Myers' paper's example: ABCABBA to CBABAC takes 5 edits. */
	const char *a[] = { "A", "B", "C", "A", "B", "B", "A" };
	const char *b[] = { "C", "B", "A", "B", "A", "C" };
	const char *x[] = { "def f():", "    return 1", "" };
	const char *y[] = { "def f():", "    return 2", "" };
	char *t;

	(void)state;
	assert_int_equal(diff_of(a, 7, b, 6, &t), 5);
	free(t);
	assert_int_equal(diff_of(x, 3, y, 3, &t), 2);
	assert_string_equal(t, " -+ ");
	free(t);
	assert_int_equal(diff_of(x, 3, x, 3, &t), 0);
	assert_string_equal(t, "   ");
	free(t);
	assert_int_equal(diff_of(x, 0, y, 3, &t), 3);
	assert_string_equal(t, "+++");
	free(t);
	assert_int_equal(diff_of(x, 3, y, 0, &t), 3);
	assert_string_equal(t, "---");
	free(t);
	assert_int_equal(diff_of(x, 0, y, 0, &t), 0);
	assert_string_equal(t, "");
	free(t);
}

static void
removals_before_additions(void **state)
{
	const char *a[] = { "k", "a1", "a2", "z" };
	const char *b[] = { "k", "b1", "b2", "b3", "z" };
	char *t;

	(void)state;
	assert_int_equal(diff_of(a, 4, b, 5, &t), 5);
	assert_string_equal(t, " --+++ ");
	free(t);
}

static void
limit(void **state)
{
	const char *a[] = { "1", "2", "3", "4" };
	const char *b[] = { "5", "6", "7", "8" };
	struct geak_diff_op *ops = (void *)1;
	size_t n = 9;

	(void)state;
	assert_int_equal(geak_diff(a, 4, b, 4, 7, &ops, &n), -1);
	assert_null(ops);
	assert_int_equal(n, 0);
	assert_int_equal(geak_diff(a, 4, b, 4, 8, &ops, &n), 8);
	free(ops);
}

static void
split(void **state)
{
	char text[] = "one\r\ntwo\n\nlast";
	char empty[] = "";
	size_t n;
	char **l = geak_split_lines(text, &n);

	(void)state;
	assert_int_equal(n, 4);
	assert_string_equal(l[0], "one");
	assert_string_equal(l[1], "two");
	assert_string_equal(l[2], "");
	assert_string_equal(l[3], "last");
	free(l);
	l = geak_split_lines(empty, &n);
	assert_int_equal(n, 0);
	free(l);
}

/* The length of a longest common subsequence, by the textbook table:
 * the shortest script has na + nb - 2 * lcs edits. */
static size_t
lcs(const char *const *a, size_t na, const char *const *b, size_t nb)
{
	size_t *t = calloc((na + 1) * (nb + 1), sizeof *t), r;

	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++)
			t[i * (nb + 1) + j] = !strcmp(a[i - 1], b[j - 1]) ?
			    t[(i - 1) * (nb + 1) + j - 1] + 1 :
			    t[(i - 1) * (nb + 1) + j] > t[i * (nb + 1) + j - 1] ?
			    t[(i - 1) * (nb + 1) + j] : t[i * (nb + 1) + j - 1];
	r = t[na * (nb + 1) + nb];
	free(t);
	return r;
}

static void
random_edits_are_shortest(void **state)
{
	static const char *const words[] = { "a", "b", "c", "d" };
	const char *a[40], *b[40];

	(void)state;
	srand(7);
	for (int round = 0; round < 300; round++) {
		size_t na = (size_t)rand() % 40, nb = (size_t)rand() % 40;
		char *t;
		for (size_t i = 0; i < na; i++)
			a[i] = words[rand() % 4];
		for (size_t i = 0; i < nb; i++)
			b[i] = words[rand() % 4];
		assert_int_equal(diff_of(a, na, b, nb, &t),
		    (long)(na + nb - 2 * lcs(a, na, b, nb)));
		free(t);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_scripts),
		cmocka_unit_test(removals_before_additions),
		cmocka_unit_test(limit),
		cmocka_unit_test(split),
		cmocka_unit_test(random_edits_are_shortest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
