/* Unit tests of the prompt template engine (lib/prompt.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "prompt.h"
#include "util.h"

static json_t *vars;

static int
setup(void **state)
{
	(void)state;
	vars = json_loads("{\"name\": \"add\", \"n\": 3, \"x\": 1.5, \"yes\": true, \"no\": false,"
	    " \"empty\": \"\", \"zero\": 0, \"none\": [], \"task\": {\"id\": \"t/1\"},"
	    " \"list\": [\"a\", \"b\"], \"objs\": [{\"code\": \"c1\"}, {\"code\": \"c2\"}],"
	    " \"brace\": \"{{name}}\"}", 0, NULL);
	return vars ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	json_decref(vars);
	return 0;
}

static void
want(const char *tmpl, const char *out)
{
	char *err = NULL, *got = geak_prompt_render(tmpl, vars, NULL, &err);

	if (!got)
		fail_msg("render failed: %s", err);
	assert_string_equal(got, out);
	free(got);
}

static void
want_error(const char *tmpl, const char *part)
{
	char *err = NULL, *got = geak_prompt_render(tmpl, vars, NULL, &err);

	assert_null(got);
	assert_non_null(err);
	assert_non_null(strstr(err, part));
	free(err);
}

static void
test_values(void **state)
{
	(void)state;
	want("op {{name}}, {{ n }} times, {{x}}, {{yes}}/{{no}}", "op add, 3 times, 1.5, true/false");
	want("id={{task.id}} missing=[{{nope}}][{{task.nope}}]", "id=t/1 missing=[][]");
	/* A value's own braces are text, not a tag. */
	want("{{brace}}", "{{name}}");
	want("{{! a comment }}x", "x");
}

static void
test_sections(void **state)
{
	(void)state;
	want("{{#yes}}Y{{/yes}}{{#no}}N{{/no}}{{#empty}}E{{/empty}}{{#zero}}Z{{/zero}}"
	    "{{#none}}L{{/none}}{{#nope}}U{{/nope}}", "Y");
	want("{{^no}}a{{/no}}{{^empty}}b{{/empty}}{{^yes}}c{{/yes}}{{^nope}}d{{/nope}}", "abd");
	want("{{#list}}[{{.}}:{{@index}}:{{@number}}]{{/list}}", "[a:0:1][b:1:2]");
	want("{{#objs}}{{code}} of {{name}};{{/objs}}", "c1 of add;c2 of add;");
	want("{{#task}}{{id}}{{/task}}", "t/1");
	want("{{#name}}is {{.}}{{/name}}", "is add");
	/* The same name nested. */
	want("{{#yes}}1{{#yes}}2{{/yes}}3{{/yes}}", "123");
}

static void
test_standalone_lines(void **state)
{
	(void)state;
	/* Lines holding only a section tag vanish with their line end. */
	want("a\n{{#yes}}\nb\n{{/yes}}\nc\n", "a\nb\nc\n");
	want("a\n  {{#no}}\nb\n  {{/no}}\nc\n", "a\nc\n");
	want("{{! one\n two }}\nx\n", "x\n");
	want("a {{#yes}}b{{/yes}}\n", "a b\n");
}

static void
test_errors(void **state)
{
	(void)state;
	want_error("{{#yes}}open", "never closed");
	want_error("x{{/yes}}", "closes no section");
	want_error("{{> no-such-template.txt}}", "cannot read");
}

static void
test_include(void **state)
{
	char dir[] = "/tmp/geak-unit-promptXXXXXX", *path, *err = NULL, *got;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = geak_xasprintf("%s/part.txt", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("{{! a part }}\npart {{name}}\n", fp);
	fclose(fp);
	got = geak_prompt_render("A\n{{> part.txt}}\nB", vars, dir, &err);
	assert_non_null(got);
	assert_string_equal(got, "A\npart add\nB");
	free(got);
	/* The search path: the directory first. */
	free(path);
	path = geak_prompt_path(dir, "part.txt");
	assert_non_null(strstr(path, dir));
	unlink(path);
	free(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_standalone_lines),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_include),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
