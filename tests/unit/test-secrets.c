/* Unit tests of secrets.c: credentials taken out of the environment and
 * out of what /proc shows of it, and redacted from text by fingerprint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "secrets.h"
#include "util.h"

#define KEY "sk-geak-unit-0123456789"
#define TOKEN "tok-geak-unit-abcdefgh"

static int
setup(void **state)
{
	(void)state;
	setenv("OPENAI_API_KEY", KEY, 1);
	setenv("GEAK_UNIT_TOKEN", TOKEN, 1);
	setenv("GEAK_UNIT_AUTH", "1", 1);       /* too short to redact */
	setenv("GEAK_UNIT_PLAIN", KEY, 1);      /* not a credential's name */
	geak_secrets_take();
	return 0;
}

static void
test_taken_from_environment(void **state)
{
	(void)state;
	assert_null(getenv("OPENAI_API_KEY"));
	assert_null(getenv("GEAK_UNIT_TOKEN"));
	assert_null(getenv("GEAK_UNIT_AUTH"));
	assert_string_equal(getenv("GEAK_UNIT_PLAIN"), KEY);
}

static char *
redacted(const char *in, size_t *hits)
{
	char *s = geak_xstrdup(in);

	*hits = geak_redact(&s);
	return s;
}

static void
test_redact(void **state)
{
	size_t hits;
	char *s;

	(void)state;
	s = redacted("before " KEY " after", &hits);
	assert_string_equal(s, "before [redacted:OPENAI_API_KEY] after");
	assert_int_equal(hits, 1);
	assert_int_equal(geak_redacted_marks(s), 1);
	free(s);
	s = redacted(KEY KEY "\n" TOKEN, &hits);
	assert_string_equal(s, "[redacted:OPENAI_API_KEY][redacted:OPENAI_API_KEY]\n"
	    "[redacted:GEAK_UNIT_TOKEN]");
	assert_int_equal(hits, 3);
	free(s);
	/* One byte short, or one byte changed, is not the value. */
	s = redacted("sk-geak-unit-012345678 sk-geak-unit-0123456780 sk-geak-unit-1123456789 " KEY, &hits);
	assert_string_equal(s, "sk-geak-unit-012345678 sk-geak-unit-0123456780 sk-geak-unit-1123456789 "
	    "[redacted:OPENAI_API_KEY]");
	assert_int_equal(hits, 1);
	free(s);
	/* A value under 8 bytes stays, as common text would. */
	s = redacted("exit 1", &hits);
	assert_string_equal(s, "exit 1");
	assert_int_equal(hits, 0);
	free(s);
	s = redacted("", &hits);
	assert_int_equal(hits, 0);
	free(s);
}

static void
test_redact_json(void **state)
{
	json_t *v = json_pack("{s:s, s:[s, {s:s}], s:i}", "a", "x " KEY, "b", "no", "c",
	    TOKEN " y", "n", 7);
	char *dump;

	(void)state;
	assert_int_equal(geak_redact_json(v), 2);
	dump = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(dump, "{\"a\":\"x [redacted:OPENAI_API_KEY]\",\"b\":[\"no\","
	    "{\"c\":\"[redacted:GEAK_UNIT_TOKEN] y\"}],\"n\":7}");
	free(dump);
	json_decref(v);
}

/* What /proc/self/environ shows is the environment the process was
 * started with: a child started with the key checks it is gone there. */
static int
environ_child(void)
{
	char *env = NULL;
	size_t len = 0;

	geak_secrets_take();
	if (getenv("OPENAI_API_KEY"))
		return 2;
	env = geak_read_file("/proc/self/environ", &len);
	if (!env)
		return 3;
	for (size_t i = 0; i + strlen(KEY) <= len; i++)
		if (!memcmp(env + i, KEY, strlen(KEY)))
			return 1;
	for (size_t i = 0; i + 14 <= len; i++)
		if (!memcmp(env + i, "OPENAI_API_KEY", 14))
			return 1;
	free(env);
	return 0;
}

static void
test_proc_environ_wiped(void **state)
{
	char *env[] = { "PATH=/usr/bin:/bin", "OPENAI_API_KEY=" KEY, "HOME=/", NULL };
	int st;
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0) {
		execle("/proc/self/exe", "test-secrets", "--environ", (char *)NULL, env);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken_from_environment),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_redact_json),
		cmocka_unit_test(test_proc_environ_wiped),
	};

	if (argc > 1 && !strcmp(argv[1], "--environ"))
		return environ_child();
	return cmocka_run_group_tests_name("secrets", tests, setup, NULL);
}
