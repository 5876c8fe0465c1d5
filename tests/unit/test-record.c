/* Unit tests of record I/O: the reader's line handling and limits, field
 * access and checks, error records, the writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "record.h"

/* Write data to a temporary file and open a reader on it. */
static struct geak_input *
reader_on(const char *data, size_t len, char *path)
{
	int fd;
	static char *keep[1];

	strcpy(path, "/tmp/geak-unit-recXXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(geak_write_all(fd, data, len), 0);
	close(fd);
	keep[0] = path;
	return geak_input_open(keep, 1);
}

static void
test_lines_and_numbers(void **state)
{
	char path[64];
	const char data[] = "{\"a\":1}\n\n   \n{\"b\":2}\r\n{\"c\":3}";
	struct geak_input *in = reader_on(data, sizeof data - 1, path);
	json_t *rec;

	(void)state;
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_OK);
	assert_int_equal(json_integer_value(json_object_get(rec, "a")), 1);
	assert_non_null(strstr(geak_input_where(in), ":1"));
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_OK);
	assert_int_equal(json_integer_value(json_object_get(rec, "b")), 2);
	assert_non_null(strstr(geak_input_where(in), ":4"));
	json_decref(rec);
	/* The last line has no newline and still counts. */
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_OK);
	assert_int_equal(json_integer_value(json_object_get(rec, "c")), 3);
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_EOF);
	geak_input_close(in);
	unlink(path);
}

static void
test_bad_lines_keep_raw(void **state)
{
	char path[64];
	const char data[] = "{\"a\":\n[1,2]\n\"str\"\n\xff\xfe garbage\n{\"schema\":\"1\"}\n";
	struct geak_input *in = reader_on(data, sizeof data - 1, path);
	json_t *rec, *err;

	(void)state;
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_BAD);
	err = json_object_get(rec, "error");
	assert_string_equal(json_string_value(json_object_get(err, "raw")), "{\"a\":");
	assert_string_equal(json_string_value(json_object_get(err, "kind")), "bad_record");
	assert_int_equal(json_integer_value(json_object_get(err, "line")), 1);
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_BAD);
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_object_get(rec, "error"), "message")), "not a JSON object"));
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_BAD);
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_BAD);
	err = json_object_get(rec, "error");
	assert_null(json_object_get(err, "raw"));
	assert_string_equal(json_string_value(json_object_get(err, "raw_base64")),
	    "//4gZ2FyYmFnZQ==");
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_BAD);
	assert_non_null(strstr(json_string_value(json_object_get(
	    json_object_get(rec, "error"), "message")), "'schema'"));
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_EOF);
	geak_input_close(in);
	unlink(path);
}

/* Over-long lines are skipped without being held, and the next line is
 * read normally. */
static void
test_line_limit(void **state)
{
	char path[64];
	size_t big = 3u << 20;
	char *data = malloc(big + 64);
	struct geak_input *in;
	json_t *rec, *err;

	(void)state;
	memset(data, 'x', big);
	strcpy(data + big, "\n{\"ok\":true}\n");
	in = reader_on(data, strlen(data), path);
	geak_input_set_max(in, 1u << 20);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_BAD);
	err = json_object_get(rec, "error");
	assert_int_equal(json_integer_value(json_object_get(err, "raw_bytes")), (json_int_t)big);
	assert_int_equal(strlen(json_string_value(json_object_get(err, "raw"))), 4096);
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_OK);
	assert_true(json_is_true(json_object_get(rec, "ok")));
	assert_non_null(strstr(geak_input_where(in), ":2"));
	json_decref(rec);
	assert_int_equal(geak_input_next(in, &rec), GEAK_READ_EOF);
	geak_input_close(in);
	unlink(path);
	free(data);
}

/* Shards 0..2 of 3 read every line that is not blank once, an over-long
 * or bad one included, and keep the file's line numbers. */
static void
test_shards(void **state)
{
	char path[64];
	size_t big = 2u << 20;
	char *data = malloc(big + 128);
	const char *head = "{\"n\":0}\n\n{\"n\":1}\n  \nnot json\n";
	long want_line[] = { 1, 3, 5, 6, 7 }; /* record i is on this line */
	int seen[5] = { 0 };

	(void)state;
	strcpy(data, head);
	memset(data + strlen(head), 'x', big);
	strcpy(data + strlen(head) + big, "\n{\"n\":4}\n");
	for (long k = 0; k < 3; k++) {
		struct geak_input *in = reader_on(data, strlen(data), path);
		json_t *rec;
		int r;
		long i = k;
		geak_input_set_max(in, 1u << 20);
		geak_input_set_shard(in, k, 3);
		while ((r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
			assert_true(i < 5);
			assert_int_equal(geak_input_lineno(in), want_line[i]);
			assert_int_equal(r, i == 2 || i == 3 ? GEAK_READ_BAD : GEAK_READ_OK);
			seen[i]++;
			json_decref(rec);
			i += 3;
		}
		geak_input_close(in);
		unlink(path);
	}
	for (int i = 0; i < 5; i++)
		assert_int_equal(seen[i], 1);
	free(data);
}

static void
test_fields(void **state)
{
	json_t *rec = json_loads("{\"id\":\"t/x\",\"task\":{\"name\":\"x\",\"difficulty\":3},"
	    "\"n\":1.5,\"code\":null}", 0, NULL);
	const struct geak_field good[] = {
		{ "id", GEAK_T_STRING, 1 }, { "task.name", GEAK_T_STRING, 1 },
		{ "task.difficulty", GEAK_T_INT, 1 }, { "n", GEAK_T_NUMBER, 1 },
		{ "code", GEAK_T_STRING, 0 }, { "missing", GEAK_T_OBJECT, 0 },
		{ NULL, 0, 0 },
	};
	const struct geak_field wrong[] = {
		{ "task.difficulty", GEAK_T_STRING, 1 }, { NULL, 0, 0 },
	};
	const struct geak_field missing[] = {
		{ "task.reference", GEAK_T_STRING, 1 }, { NULL, 0, 0 },
	};
	char msg[200];

	(void)state;
	assert_int_equal(geak_check_fields(rec, good, msg, sizeof msg), 0);
	assert_int_equal(geak_check_fields(rec, wrong, msg, sizeof msg), -1);
	assert_string_equal(msg, "field 'task.difficulty': expected a string, got an integer");
	assert_int_equal(geak_check_fields(rec, missing, msg, sizeof msg), -1);
	assert_string_equal(msg, "field 'task.reference': missing (want a string)");
	assert_string_equal(geak_get_str(rec, "task.name"), "x");
	assert_true(geak_absent(rec, "code"));
	assert_true(geak_absent(rec, "task.nothing"));
	assert_int_equal(geak_set(rec, "eval.shapes.count", json_integer(4)), 0);
	assert_int_equal(json_integer_value(geak_get(rec, "eval.shapes.count")), 4);
	geak_set_error(rec, "eval", "harness", "failed %d times", 2);
	assert_true(geak_has_error(rec));
	assert_string_equal(geak_get_str(rec, "error.message"), "failed 2 times");
	assert_string_equal(geak_get_str(rec, "id"), "t/x"); /* untouched */
	json_decref(rec);
}

static void
test_writer_one_line(void **state)
{
	char path[] = "/tmp/geak-unit-outXXXXXX";
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w+");
	struct geak_output out;
	json_t *rec = json_loads("{\"z\":1,\"a\":{\"s\":\"line\\nbreak\"}}", 0, NULL);
	char line[256];

	(void)state;
	geak_output_init(&out, fp, path);
	assert_int_equal(geak_output_write(&out, rec), 0);
	assert_int_equal(geak_output_write(&out, rec), 0);
	rewind(fp);
	assert_non_null(fgets(line, sizeof line, fp));
	/* Key order kept, compact, schema added once, newline only at the end. */
	assert_string_equal(line, "{\"z\":1,\"a\":{\"s\":\"line\\nbreak\"},\"schema\":1}\n");
	assert_non_null(fgets(line, sizeof line, fp));
	assert_null(fgets(line, sizeof line, fp));
	assert_int_equal(geak_output_close(&out), 0);
	fclose(fp);
	unlink(path);
	json_decref(rec);
}

static void
test_compact_reals(void **state)
{
	json_t *v = json_pack("[f,f,f,f,f,I,s]", 0.1, 1.2345, 3.0, 1e300, -2.5e-7,
	    (json_int_t)-42, "tab\there \"q\" \x01");
	char *s = geak_json_compact(v);

	(void)state;
	assert_string_equal(s, "[0.1,1.2345,3.0,1e+300,-2.5e-07,-42,"
	    "\"tab\\there \\\"q\\\" \\u0001\"]");
	free(s);
	json_decref(v);
}

static void
test_sha256(void **state)
{
	char hex[65];

	(void)state;
	geak_sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	geak_sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	geak_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_and_numbers),
		cmocka_unit_test(test_bad_lines_keep_raw),
		cmocka_unit_test(test_line_limit),
		cmocka_unit_test(test_shards),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_writer_one_line),
		cmocka_unit_test(test_compact_reals),
		cmocka_unit_test(test_sha256),
	};
	return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}
