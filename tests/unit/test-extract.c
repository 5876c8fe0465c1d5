/* Unit tests of code extraction (lib/extract.c) on the answers models
 * really give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "extract.h"

static void
want_code(const char *reply, const char *code, const char *how)
{
	struct geak_extract ex;

	assert_int_equal(geak_extract_code(reply, &ex), 0);
	assert_non_null(ex.code);
	assert_string_equal(ex.code, code);
	assert_string_equal(ex.how, how);
	geak_extract_free(&ex);
}

static void
want_none(const char *reply, const char *why_part)
{
	struct geak_extract ex;

	assert_int_equal(geak_extract_code(reply, &ex), -1);
	assert_null(ex.code);
	assert_non_null(ex.why);
	assert_non_null(strstr(ex.why, why_part));
	geak_extract_free(&ex);
}

static void
test_json_contract(void **state)
{
	struct geak_extract ex;

	(void)state;
	assert_int_equal(geak_extract_code(
	    "{\"thought\": \"add them\", \"code\": \"import triton\\nx = 1\\n\"}", &ex), 0);
	assert_string_equal(ex.code, "import triton\nx = 1\n");
	assert_string_equal(ex.thought, "add them");
	assert_string_equal(ex.how, "json");
	geak_extract_free(&ex);
	/* v2's contract names the thought "strategy". */
	assert_int_equal(geak_extract_code("{\"strategy\": \"s\", \"code\": \"y = 2\"}", &ex), 0);
	assert_string_equal(ex.thought, "s");
	geak_extract_free(&ex);
}

static void
test_json_quirks(void **state)
{
	(void)state;
	/* Inside a ```json fence. */
	want_code("```json\n{\"thought\": \"t\", \"code\": \"a = 1\"}\n```\n", "a = 1", "json");
	/* Followed by prose. */
	want_code("{\"thought\": \"t\", \"code\": \"b = 2\"}\nHope this helps!", "b = 2", "json");
	/* Raw newlines and tabs inside the JSON string. */
	want_code("{\"thought\": \"t\", \"code\": \"def f():\n\treturn 1\n\"}", "def f():\n\treturn 1\n",
	    "json");
	/* A chat-template end token after it. */
	want_code("{\"thought\": \"t\", \"code\": \"c = 3\"}<|im_end|>", "c = 3", "json");
	/* Prose before the object. */
	want_code("Sure. Here it is:\n{\"thought\": \"t\", \"code\": \"d = 4\"}", "d = 4", "json");
	/* The code string wraps its own fence. */
	want_code("{\"thought\": \"t\", \"code\": \"```python\\ne = 5\\n```\"}", "e = 5\n", "json");
	/* A ```json fence whose code holds ``` itself. */
	want_code("```json\n{\"thought\": \"t\", \"code\": \"s = '```'\\nf = 6\"}\n```", "s = '```'\nf = 6",
	    "json");
	/* Escaped quotes and backslashes survive. */
	want_code("{\"code\": \"s = \\\"a\\\\\\\"b\\\"\"}", "s = \"a\\\"b\"", "json");
}

static void
test_fences(void **state)
{
	(void)state;
	want_code("Here:\n```python\nimport torch\nx = 1\n```\nDone.", "import torch\nx = 1\n", "fence");
	/* The longest code block wins; other languages are not code. */
	want_code("```bash\npip install triton triton triton\n```\n```py\na = 1\n```\n"
	    "```python\nimport triton\nb = 2\n```", "import triton\nb = 2\n", "fence");
	/* A block cut by the token limit runs to the end. */
	want_code("```python\nimport triton\ndef f(", "import triton\ndef f(", "fence");
	/* A <think> block is not the answer. */
	want_code("<think>```python\nwrong = 1\n```</think>\n```python\nright = 1\n```", "right = 1\n",
	    "fence");
}

static void
test_raw(void **state)
{
	(void)state;
	want_code("import triton\nimport triton.language as tl\n",
	    "import triton\nimport triton.language as tl\n", "raw");
	want_code("@triton.jit\ndef k(x):\n    pass\n<|im_end|>", "@triton.jit\ndef k(x):\n    pass\n", "raw");
}

static void
test_nothing(void **state)
{
	(void)state;
	want_none("", "empty");
	want_none("   \n", "empty");
	want_none(NULL, "empty");
	want_none("I cannot help with that.", "no code");
	want_none("{\"thought\": \"t\", \"code\": \"\"}", "no code");
	want_none("```python\n\n```", "no code");
	/* Broken JSON without any Python in it. */
	want_none("{\"thought\": \"t\", \"code\": ", "no code");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_contract),
		cmocka_unit_test(test_json_quirks),
		cmocka_unit_test(test_fences),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
