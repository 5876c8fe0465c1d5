/* record.h: JSON Lines records in and out (see geak-record(5)). */
#ifndef GEAK_RECORD_H
#define GEAK_RECORD_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "util.h"

#define GEAK_SCHEMA 1
/* Longest input line accepted, in bytes; GEAK_MAX_RECORD overrides it. */
#define GEAK_MAX_RECORD_DEFAULT (16u << 20)

/* Input: the named files in order ("-" or none at all: stdin). */
struct geak_input;

struct geak_input *geak_input_open(char *const *paths, int npaths);
void geak_input_close(struct geak_input *in);
void geak_input_set_max(struct geak_input *in, size_t max_bytes);
/* Read only a deterministic slice: of the lines that are not blank,
 * numbered from 0 across every file, those whose number is shard modulo
 * shards.  The other lines are skipped unread, so that shards 0 to
 * shards-1 together read every record once; line numbers stay those of
 * the files. */
void geak_input_set_shard(struct geak_input *in, long shard, long shards);

enum {
	GEAK_READ_EOF = 0,  /* no more input */
	GEAK_READ_OK = 1,   /* *rec holds the next record */
	GEAK_READ_BAD = 2,  /* the line was rejected: the warning is printed
	                     * and *rec is an error record that keeps the raw
	                     * line, to be written out in its place */
	GEAK_READ_FAIL = 3, /* an input file could not be read (reported) */
};
int geak_input_next(struct geak_input *in, json_t **rec);
/* "file:line" of the line last returned, for messages; the file and the
 * line number alone. */
const char *geak_input_where(const struct geak_input *in);
const char *geak_input_file(const struct geak_input *in);
long geak_input_lineno(const struct geak_input *in);
/* The raw bytes of the line last returned (no newline); valid until the
 * next geak_input_next. */
const char *geak_input_raw(const struct geak_input *in, size_t *len);

/* Output: one compact line per record, written in one piece and flushed,
 * so that records from parallel writers never interleave mid-line. */
struct geak_output {
	FILE *fp;
	const char *name;
	struct geak_buf buf;
	int failed;
};
void geak_output_init(struct geak_output *out, FILE *fp, const char *name);
int geak_output_write(struct geak_output *out, json_t *rec);
/* Write a line that is already a compact JSON object (no newline in it). */
int geak_output_write_line(struct geak_output *out, const char *line, size_t len);
int geak_output_close(struct geak_output *out);

/* Fields: dotted paths ("task.id") into nested objects. */
enum geak_type {
	GEAK_T_ANY, GEAK_T_STRING, GEAK_T_INT, GEAK_T_NUMBER, GEAK_T_BOOL,
	GEAK_T_OBJECT, GEAK_T_ARRAY,
};
struct geak_field {
	const char *path;
	enum geak_type type;
	int required;
};
json_t *geak_get(json_t *rec, const char *path);
const char *geak_get_str(json_t *rec, const char *path);
/* 1 when the field is absent or JSON null. */
int geak_absent(json_t *rec, const char *path);
/* Set a dotted path, creating objects on the way; steals value. */
int geak_set(json_t *rec, const char *path, json_t *value);
/* Check the spec (terminated by a NULL path); on failure write a message
 * naming the field into msg and return -1. */
int geak_check_fields(json_t *rec, const struct geak_field *spec, char *msg, size_t msglen);

/* Attach rec.error = {tool, stage, kind, message}, replacing an older one,
 * and leave every other field as it was. */
void geak_set_error(json_t *rec, const char *stage, const char *kind,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Replace each byte that is not part of valid UTF-8 with '?', in place,
 * so that text from outside (stderr of a candidate, a parser message) can
 * go into a JSON string. */
void geak_utf8_scrub(char *s);

/* 1 when rec carries an error object. */
int geak_has_error(json_t *rec);

/* Compact JSON text of any value, as records are written.  Caller frees. */
char *geak_json_compact(json_t *v);

/* A deep copy of v (NULL for NULL); exits on allocation failure. */
json_t *geak_json_copy(json_t *v);

/* The ranges of integer fields (geak-record(5), LIMITS): indexes (run,
 * iter, sample, ...) and counts (tokens, calls, ...).  Sums of counts
 * saturate (geak_add_sat). */
#define GEAK_MAX_INDEX 1000000000LL
#define GEAK_MAX_COUNT 1000000000000000LL

/* a + b for counts of at least 0, held at INT64_MAX instead of
 * overflowing. */
static inline long long
geak_add_sat(long long a, long long b)
{
	long long sum;

	return __builtin_add_overflow(a, b, &sum) ? (b < 0 ? INT64_MIN : INT64_MAX) : sum;
}

/* Check the types and ranges geak-record(5) gives the fields of every
 * record, and that names (id, task.name, code_sha, ...) hold no control
 * character or NUL; on
 * failure write "field 'x': expected ..., got ..." into msg and return -1.
 * The record loop (recpool.h) applies it to every record it reads. */
int geak_check_record(json_t *rec, char *msg, size_t msglen);

/* A field the stage needs is missing or unusable: say so on stderr as
 * "prog: where: message" and attach the error (stage "input", kind
 * "bad_field") that geak-record(5) gives it.  Returns GEAK_FAILED. */
int geak_bad_field(json_t *rec, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* What a stage did with a record (recpool.h): changed it, attached an
 * error, or left it alone (then it is written byte for byte as read). */
enum { GEAK_DONE = 0, GEAK_FAILED = 1, GEAK_PASS = 2 };

#endif
