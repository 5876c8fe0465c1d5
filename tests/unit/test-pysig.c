/* Unit tests of the signature scanner (lib/bench/pysig.c) and the benchmark
 * file conventions (lib/bench/bench.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench/bench.h"
#include "bench/pysig.h"
#include "util.h"

/* The signatures of src joined by '\n'. */
static char *
sigs(const char *src)
{
	json_t *list = geak_pysig_list(src), *s;
	struct geak_buf b = {0};
	size_t i;

	json_array_foreach(list, i, s)
		geak_buf_printf(&b, "%s%s", i ? "\n" : "", json_string_value(s));
	json_decref(list);
	return geak_buf_steal(&b);
}

static void
expect_sigs(const char *src, const char *want)
{
	char *got = sigs(src);

	assert_string_equal(got, want);
	free(got);
}

static void
test_multiline_with_comments(void **state)
{
	(void)state;
	expect_sigs("@triton.jit\n"
	    "def add_kernel(x_ptr,  # *Pointer* to first input vector.\n"
	    "               y_ptr,  # (second)\n"
	    "               BLOCK: tl.constexpr,\n"
	    "               ):\n"
	    "    pass\n",
	    "def add_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr)");
}

static void
test_defaults_with_brackets_and_strings(void **state)
{
	(void)state;
	expect_sigs("def f(shape=(1, (2, 3)), name=\"a)b\", d={'k': [1]}, *args,\n"
	    "      fn=lambda t: t.sum(dim=(0,)), **kw) -> Tuple[int, int]:\n"
	    "    return 0\n",
	    "def f(shape=(1, (2, 3)), name=\"a)b\", d={'k': [1]}, *args, "
	    "fn=lambda t: t.sum(dim=(0,)), **kw)");
}

static void
test_strings_and_comments_are_not_code(void **state)
{
	(void)state;
	expect_sigs("s = '''\ndef fake(a):\n'''\n"
	    "# def commented(b):\n"
	    "x = r\"def raw(c):\"\n"
	    "class A:\n"
	    "    async def m(self, *, k: int = 3):\n"
	    "        pass\n"
	    "    def n(self, path=b'\\'('):\n"
	    "        def inner(): pass\n",
	    "async def m(self, *, k: int = 3)\n"
	    "def n(self, path=b'\\'(')\n"
	    "def inner()");
}

static void
test_continuation_and_truncated(void **state)
{
	(void)state;
	expect_sigs("def g \\\n  (a,\n   b): pass\nundef = 1\ndef h(a, (\n",
	    "def g(a, b)");
	expect_sigs("", "");
	expect_sigs("define(x)\nx.def(y)\n", "");
}

static void
test_split_trailing_blanks(void **state)
{
	char sep[GEAK_BENCH_SEP_LEN + 1], *text, *code, *test;
	const char *why = NULL;

	(void)state;
	memset(sep, '#', GEAK_BENCH_SEP_LEN);
	sep[GEAK_BENCH_SEP_LEN] = '\0';
	text = geak_xasprintf("# header\nimport triton\n\n\n%s   \t\n\n\n    x = 1\nresult_gold = {}\n",
	    sep);
	assert_int_equal(geak_bench_split(text, &code, &test, &why), 0);
	assert_string_equal(code, "# header\nimport triton\n");
	assert_string_equal(test, "    x = 1\nresult_gold = {}\n");
	assert_true(geak_bench_assigns(test, "result_gold"));
	assert_false(geak_bench_assigns("result_gold == 1\nresult_golden = 2\n", "result_gold"));
	free(text);
	free(code);
	free(test);
}

static void
test_split_rejects(void **state)
{
	char sep[GEAK_BENCH_SEP_LEN + 1], *text, *code, *test;
	const char *why = NULL;

	(void)state;
	memset(sep, '#', GEAK_BENCH_SEP_LEN);
	sep[GEAK_BENCH_SEP_LEN] = '\0';
	assert_int_equal(geak_bench_split("no separator\n", &code, &test, &why), -1);
	assert_non_null(strstr(why, "no separator"));
	text = geak_xasprintf("a\n%s\nb\n%s\nc\n", sep, sep);
	assert_int_equal(geak_bench_split(text, &code, &test, &why), -1);
	assert_non_null(strstr(why, "more than one"));
	free(text);
	text = geak_xasprintf("a\n%s#\nb\n", sep);
	assert_int_equal(geak_bench_split(text, &code, &test, &why), -1);
	assert_non_null(strstr(why, "fill its line"));
	free(text);
	text = geak_xasprintf("a\nx = '%s'\nb\n", sep);
	assert_int_equal(geak_bench_split(text, &code, &test, &why), -1);
	assert_null(code);
	free(text);
}

static void
test_hip_libdevice(void **state)
{
	(void)state;
	assert_true(geak_bench_uses_hip_libdevice("y = tl.extra.hip.libdevice.pow(x, 2)"));
	assert_true(geak_bench_uses_hip_libdevice(
	    "from triton.language.extra.hip.libdevice import isinf, isnan"));
	assert_false(geak_bench_uses_hip_libdevice(
	    "y = tl.extra.cuda.libdevice.pow(x, 2)\nif torch.version.hip: pass"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multiline_with_comments),
		cmocka_unit_test(test_defaults_with_brackets_and_strings),
		cmocka_unit_test(test_strings_and_comments_are_not_code),
		cmocka_unit_test(test_continuation_and_truncated),
		cmocka_unit_test(test_split_trailing_blanks),
		cmocka_unit_test(test_split_rejects),
		cmocka_unit_test(test_hip_libdevice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
