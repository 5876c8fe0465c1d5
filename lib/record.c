/* record.c: reading and writing JSON Lines records.
 *
 * Lines are cut by hand from a large read buffer rather than with
 * getline(): a line over the limit is skipped without ever being held in
 * memory, so a 100 MB line costs no more memory than a short one. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"

#define CHUNK (1u << 20)
#define RAW_KEEP 4096 /* bytes of an over-long line kept in its error record */

struct geak_input {
	char *const *paths;
	int npaths, next_path;
	int fd;
	const char *name;      /* current file, "-" for stdin */
	char *buf;             /* read buffer */
	size_t start, end, cap;
	long line;             /* number of the line last returned */
	size_t raw_off, raw_len; /* that line in buf, until the next read */
	size_t max;
	int eof;
	long ordinal;          /* lines that are not blank, so far */
	long shard, shards;    /* read only ordinals that are shard mod shards */
	char where[512];
};

struct geak_input *
geak_input_open(char *const *paths, int npaths)
{
	struct geak_input *in = geak_xcalloc(1, sizeof *in);
	const char *env = getenv("GEAK_MAX_RECORD");

	in->paths = paths;
	in->npaths = npaths;
	in->fd = -1;
	in->max = GEAK_MAX_RECORD_DEFAULT;
	if (env && *env) {
		char *end;
		unsigned long long v = strtoull(env, &end, 10);
		if (*end == '\0' && v >= 1024)
			in->max = (size_t)v;
		else
			geak_warn("GEAK_MAX_RECORD: '%s' ignored (want bytes, at least 1024)", env);
	}
	in->cap = CHUNK;
	in->buf = geak_xmalloc(in->cap + 1);
	return in;
}

void
geak_input_set_max(struct geak_input *in, size_t max_bytes)
{
	in->max = max_bytes;
}

void
geak_input_set_shard(struct geak_input *in, long shard, long shards)
{
	in->shard = shard;
	in->shards = shards;
}

void
geak_input_close(struct geak_input *in)
{
	if (!in)
		return;
	if (in->fd > 0)
		close(in->fd);
	free(in->buf);
	free(in);
}

const char *
geak_input_where(const struct geak_input *in)
{
	return in->where;
}

const char *
geak_input_file(const struct geak_input *in)
{
	return in->name ? in->name : "-";
}

long
geak_input_lineno(const struct geak_input *in)
{
	return in->line;
}

const char *
geak_input_raw(const struct geak_input *in, size_t *len)
{
	*len = in->raw_len;
	return in->buf + in->raw_off;
}

/* Open the next input file; 0 when there is none left, -1 on error. */
static int
open_next(struct geak_input *in)
{
	const char *path;

	if (in->fd > 0)
		close(in->fd);
	in->fd = -1;
	if (in->npaths == 0 && in->next_path == 0)
		path = "-";
	else if (in->next_path < in->npaths)
		path = in->paths[in->next_path];
	else
		return 0;
	in->next_path++;
	in->name = path;
	in->line = 0;
	in->start = in->end = 0;
	in->eof = 0;
	if (strcmp(path, "-") == 0) {
		in->fd = 0;
		return 1;
	}
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		geak_warn("%s: cannot open:", path);
		return -1;
	}
	return 1;
}

/* Fill the buffer after moving unread bytes to the front; 0 at EOF. */
static ssize_t
fill(struct geak_input *in)
{
	ssize_t n;

	if (in->start > 0) {
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
	}
	if (in->end == in->cap) {
		in->cap *= 2;
		in->buf = geak_xrealloc(in->buf, in->cap + 1);
	}
	do
		n = read(in->fd, in->buf + in->end, in->cap - in->end);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		in->end += (size_t)n;
	return n;
}

/* Length of the valid UTF-8 sequence (NUL excluded) at s, or 0. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t k;
	unsigned long cp;

	if (c < 0x80)
		return c != 0;
	if ((c & 0xe0) == 0xc0)
		k = 1, cp = c & 0x1f;
	else if ((c & 0xf0) == 0xe0)
		k = 2, cp = c & 0x0f;
	else if ((c & 0xf8) == 0xf0)
		k = 3, cp = c & 0x07;
	else
		return 0;
	if (k >= n)
		return 0;
	for (size_t j = 1; j <= k; j++) {
		if ((s[j] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[j] & 0x3f);
	}
	if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) ||
	    (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k + 1;
}

static int
valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_seq(s + i, n - i)))
			return 0;
	return 1;
}

void
geak_utf8_scrub(char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_seq((unsigned char *)s + i, n - i)))
			s[i] = '?', k = 1;
}

static char *
base64(const unsigned char *s, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = geak_xmalloc((n + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		*o++ = tab[s[i] >> 2];
		*o++ = tab[(s[i] & 3) << 4 | s[i + 1] >> 4];
		*o++ = tab[(s[i + 1] & 15) << 2 | s[i + 2] >> 6];
		*o++ = tab[s[i + 2] & 63];
	}
	if (i < n) {
		*o++ = tab[s[i] >> 2];
		if (i + 1 < n) {
			*o++ = tab[(s[i] & 3) << 4 | s[i + 1] >> 4];
			*o++ = tab[(s[i + 1] & 15) << 2];
		} else {
			*o++ = tab[(s[i] & 3) << 4];
			*o++ = '=';
		}
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* The record that stands in for a rejected line: it keeps the raw bytes
 * (as text when they are UTF-8, else base64) so nothing is lost. */
static json_t *
bad_line_record(struct geak_input *in, const char *raw, size_t n,
    size_t total, const char *msg)
{
	json_t *rec = json_object(), *err;
	char clean_msg[400], clean_name[256];

	/* Parser messages quote the offending bytes, which need not be UTF-8. */
	snprintf(clean_msg, sizeof clean_msg, "%s", msg);
	snprintf(clean_name, sizeof clean_name, "%s", in->name);
	geak_utf8_scrub(clean_msg);
	geak_utf8_scrub(clean_name);
	err = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}",
	    "tool", geak_prog, "stage", "input", "kind", "bad_record",
	    "message", clean_msg, "file", clean_name, "line", (json_int_t)in->line);

	if (!rec || !err)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	if (valid_utf8((const unsigned char *)raw, n))
		json_object_set_new(err, "raw", json_stringn(raw, n));
	else {
		char *b64 = base64((const unsigned char *)raw, n);
		json_object_set_new(err, "raw_base64", json_string(b64));
		free(b64);
	}
	if (total > n)
		json_object_set_new(err, "raw_bytes", json_integer((json_int_t)total));
	json_object_set_new(rec, "schema", json_integer(GEAK_SCHEMA));
	json_object_set_new(rec, "error", err);
	geak_warn("%s: %s", in->where, clean_msg);
	return rec;
}

/* Skip the rest of an over-long line; returns its total length. */
static size_t
skip_line(struct geak_input *in, size_t seen)
{
	for (;;) {
		char *nl = memchr(in->buf + in->start, '\n', in->end - in->start);
		if (nl) {
			seen += (size_t)(nl - (in->buf + in->start));
			in->start = (size_t)(nl - in->buf) + 1;
			return seen;
		}
		seen += in->end - in->start;
		in->start = in->end = 0;
		if (fill(in) <= 0) {
			in->eof = 1;
			return seen;
		}
	}
}

static int
blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

static int
check_schema(json_t *rec, char *msg, size_t len)
{
	json_t *v = json_object_get(rec, "schema");

	if (!v)
		return 0;
	if (!json_is_integer(v)) {
		snprintf(msg, len, "field 'schema': expected an integer, got %s",
		    json_is_string(v) ? "a string" : "another type");
		return -1;
	}
	if (json_integer_value(v) < 1 || json_integer_value(v) > GEAK_SCHEMA) {
		snprintf(msg, len, "field 'schema': version %lld is not one this tool reads (1 to %d)",
		    (long long)json_integer_value(v), GEAK_SCHEMA);
		return -1;
	}
	return 0;
}

static int
parse_line(struct geak_input *in, const char *s, size_t n, json_t **rec)
{
	json_error_t jerr;
	char msg[400];
	json_t *v;

	v = json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!v) {
		snprintf(msg, sizeof msg, "invalid JSON at column %d: %s", jerr.column, jerr.text);
		*rec = bad_line_record(in, s, n, n, msg);
		return GEAK_READ_BAD;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		*rec = bad_line_record(in, s, n, n, "not a JSON object");
		return GEAK_READ_BAD;
	}
	if (check_schema(v, msg, sizeof msg) < 0) {
		json_decref(v);
		*rec = bad_line_record(in, s, n, n, msg);
		return GEAK_READ_BAD;
	}
	*rec = v;
	return GEAK_READ_OK;
}

/* Whether the line just found, not blank, is this reader's slice.
 * Another shard's line is not even parsed: its warnings are that
 * shard's to give. */
static int
mine(struct geak_input *in)
{
	return in->shards <= 1 || in->ordinal++ % in->shards == in->shard;
}

int
geak_input_next(struct geak_input *in, json_t **rec)
{
	*rec = NULL;
	for (;;) {
		char *line, *nl;
		size_t n;

		if (in->fd < 0) {
			int r = open_next(in);
			if (r == 0)
				return GEAK_READ_EOF;
			if (r < 0)
				return GEAK_READ_FAIL;
		}
		nl = memchr(in->buf + in->start, '\n', in->end - in->start);
		/* max is at least 1024, and RAW_KEEP fits in what is buffered. */
		if (!nl && in->end - in->start > in->max && in->end - in->start >= RAW_KEEP) {
			char raw[RAW_KEEP], msg[200];
			size_t total;
			in->line++;
			if (!mine(in)) {
				skip_line(in, 0);
				continue;
			}
			snprintf(in->where, sizeof in->where, "%s:%ld", in->name, in->line);
			memcpy(raw, in->buf + in->start, RAW_KEEP);
			total = skip_line(in, 0);
			snprintf(msg, sizeof msg, "line is %zu bytes, over the limit of %zu (GEAK_MAX_RECORD)",
			    total, in->max);
			*rec = bad_line_record(in, raw, sizeof raw, total, msg);
			return GEAK_READ_BAD;
		}
		if (!nl && !in->eof) {
			ssize_t r = fill(in);
			if (r < 0) {
				geak_warn("%s: read error:", in->name);
				if (in->fd > 0)
					close(in->fd);
				in->fd = -1;
				return GEAK_READ_FAIL;
			}
			if (r == 0)
				in->eof = 1;
			continue;
		}
		line = in->buf + in->start;
		if (nl) {
			n = (size_t)(nl - line);
			in->start += n + 1;
		} else {
			n = in->end - in->start;
			in->start = in->end;
			if (n == 0) {
				if (in->fd > 0)
					close(in->fd);
				in->fd = -1;
				continue;
			}
		}
		in->line++;
		snprintf(in->where, sizeof in->where, "%s:%ld", in->name, in->line);
		if (blank(line, n))
			continue;
		if (!mine(in))
			continue;
		in->raw_off = (size_t)(line - in->buf);
		in->raw_len = n;
		if (n && line[n - 1] == '\r')
			in->raw_len--; /* a CRLF file passes through as LF */
		if (n > in->max) {
			char msg[200];
			snprintf(msg, sizeof msg, "line is %zu bytes, over the limit of %zu (GEAK_MAX_RECORD)",
			    n, in->max);
			*rec = bad_line_record(in, line, n < RAW_KEEP ? n : RAW_KEEP, n, msg);
			return GEAK_READ_BAD;
		}
		return parse_line(in, line, n, rec);
	}
}

/* The serializer.  jansson's own prints reals with 17 digits (0.1 comes
 * out as 0.10000000000000001); this one prints the shortest form that
 * reads back as the same double, and keeps UTF-8 as it is. */
static void dump(struct geak_buf *b, json_t *v);

static void
dump_string(struct geak_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	geak_buf_reserve(b, n + 2);
	b->data[b->len++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];
		size_t elen = 2;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		geak_buf_append(b, s + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\t': esc[1] = 't'; break;
		case '\r': esc[1] = 'r'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			elen = 6;
		}
		geak_buf_append(b, esc, elen);
	}
	geak_buf_append(b, s + run, n - run);
	geak_buf_append(b, "\"", 1);
}

static void
dump_real(struct geak_buf *b, double d)
{
	char tmp[40];

	if (!isfinite(d)) { /* not JSON; jansson never makes these */
		geak_buf_puts(b, "null");
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	geak_buf_puts(b, tmp);
	/* Keep it a real when read back: 3.0 stays 3.0, not 3. */
	if (!strpbrk(tmp, ".eEn"))
		geak_buf_puts(b, ".0");
}

static void
dump(struct geak_buf *b, json_t *v)
{
	const char *key;
	json_t *item;
	size_t i;
	int first = 1;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		geak_buf_append(b, "{", 1);
		json_object_foreach(v, key, item) {
			if (!first)
				geak_buf_append(b, ",", 1);
			first = 0;
			dump_string(b, key, strlen(key));
			geak_buf_append(b, ":", 1);
			dump(b, item);
		}
		geak_buf_append(b, "}", 1);
		break;
	case JSON_ARRAY:
		geak_buf_append(b, "[", 1);
		json_array_foreach(v, i, item) {
			if (i)
				geak_buf_append(b, ",", 1);
			dump(b, item);
		}
		geak_buf_append(b, "]", 1);
		break;
	case JSON_STRING:
		dump_string(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		geak_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		dump_real(b, json_real_value(v));
		break;
	case JSON_TRUE:
		geak_buf_puts(b, "true");
		break;
	case JSON_FALSE:
		geak_buf_puts(b, "false");
		break;
	case JSON_NULL:
		geak_buf_puts(b, "null");
		break;
	}
}

char *
geak_json_compact(json_t *v)
{
	struct geak_buf b = {0};

	dump(&b, v);
	return geak_buf_steal(&b);
}

json_t *
geak_json_copy(json_t *v)
{
	json_t *copy = json_deep_copy(v);

	if (!copy && v)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	return copy;
}

void
geak_output_init(struct geak_output *out, FILE *fp, const char *name)
{
	memset(out, 0, sizeof *out);
	out->fp = fp;
	out->name = name;
}

int
geak_output_write_line(struct geak_output *out, const char *line, size_t len)
{
	if (out->failed)
		return -1;
	if (fwrite(line, 1, len, out->fp) != len || putc('\n', out->fp) == EOF ||
	    fflush(out->fp) != 0) {
		geak_warn("%s: write failed:", out->name);
		out->failed = 1;
		return -1;
	}
	return 0;
}

int
geak_output_write(struct geak_output *out, json_t *rec)
{
	if (out->failed)
		return -1;
	if (!json_object_get(rec, "schema"))
		json_object_set_new(rec, "schema", json_integer(GEAK_SCHEMA));
	geak_buf_reset(&out->buf);
	dump(&out->buf, rec);
	return geak_output_write_line(out, out->buf.data, out->buf.len);
}

int
geak_output_close(struct geak_output *out)
{
	int r = out->failed ? -1 : geak_fshut(out->fp, out->name);

	geak_buf_free(&out->buf);
	return r;
}

json_t *
geak_get(json_t *rec, const char *path)
{
	const char *dot;
	char key[256];

	while (rec && (dot = strchr(path, '.'))) {
		size_t n = (size_t)(dot - path);
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		rec = json_object_get(rec, key);
		path = dot + 1;
	}
	return rec ? json_object_get(rec, path) : NULL;
}

const char *
geak_get_str(json_t *rec, const char *path)
{
	return json_string_value(geak_get(rec, path));
}

int
geak_absent(json_t *rec, const char *path)
{
	json_t *v = geak_get(rec, path);

	return !v || json_is_null(v);
}

int
geak_set(json_t *rec, const char *path, json_t *value)
{
	const char *dot;
	char key[256];

	while ((dot = strchr(path, '.'))) {
		size_t n = (size_t)(dot - path);
		json_t *next;
		if (n >= sizeof key)
			goto fail;
		memcpy(key, path, n);
		key[n] = '\0';
		next = json_object_get(rec, key);
		if (!json_is_object(next)) {
			next = json_object();
			if (json_object_set_new(rec, key, next) < 0)
				goto fail;
		}
		rec = next;
		path = dot + 1;
	}
	return json_object_set_new(rec, path, value);
fail:
	json_decref(value);
	return -1;
}

static const char *
type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "something";
}

static const char *
want_name(enum geak_type t)
{
	static const char *names[] = {
		[GEAK_T_ANY] = "a value", [GEAK_T_STRING] = "a string",
		[GEAK_T_INT] = "an integer", [GEAK_T_NUMBER] = "a number",
		[GEAK_T_BOOL] = "a boolean", [GEAK_T_OBJECT] = "an object",
		[GEAK_T_ARRAY] = "an array",
	};
	return names[t];
}

static int
has_type(json_t *v, enum geak_type t)
{
	switch (t) {
	case GEAK_T_ANY: return 1;
	case GEAK_T_STRING: return json_is_string(v);
	case GEAK_T_INT: return json_is_integer(v);
	case GEAK_T_NUMBER: return json_is_number(v);
	case GEAK_T_BOOL: return json_is_boolean(v);
	case GEAK_T_OBJECT: return json_is_object(v);
	case GEAK_T_ARRAY: return json_is_array(v);
	}
	return 0;
}

int
geak_check_fields(json_t *rec, const struct geak_field *spec, char *msg, size_t msglen)
{
	for (; spec->path; spec++) {
		json_t *v = geak_get(rec, spec->path);
		if (!v || json_is_null(v)) {
			if (!spec->required)
				continue;
			snprintf(msg, msglen, "field '%s': missing (want %s)",
			    spec->path, want_name(spec->type));
			return -1;
		}
		if (!has_type(v, spec->type)) {
			snprintf(msg, msglen, "field '%s': expected %s, got %s",
			    spec->path, want_name(spec->type), type_name(v));
			return -1;
		}
	}
	return 0;
}

void
geak_set_error(json_t *rec, const char *stage, const char *kind, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	json_t *err;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	geak_utf8_scrub(msg);
	err = json_pack("{s:s, s:s, s:s, s:s}", "tool", geak_prog, "stage", stage,
	    "kind", kind, "message", msg);
	if (!err || json_object_set_new(rec, "error", err) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
}

int
geak_bad_field(json_t *rec, const char *where, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	geak_warn("%s: %s", where, msg);
	geak_set_error(rec, "input", "bad_field", "%s", msg);
	return GEAK_FAILED;
}

int
geak_has_error(json_t *rec)
{
	return json_is_object(json_object_get(rec, "error"));
}

/* The fields geak-record(5) gives a type, for every record every tool
 * reads: a record that breaks one is refused the same way everywhere,
 * whichever fields the tool itself uses. */
static const struct geak_field record_fields[] = {
	{ "id", GEAK_T_STRING, 0 }, { "run", GEAK_T_INT, 0 },
	{ "iter", GEAK_T_INT, 0 }, { "sample", GEAK_T_INT, 0 },
	{ "error", GEAK_T_OBJECT, 0 },
	{ "task", GEAK_T_OBJECT, 0 }, { "task.suite", GEAK_T_STRING, 0 },
	{ "task.name", GEAK_T_STRING, 0 }, { "task.instruction", GEAK_T_STRING, 0 },
	{ "task.reference", GEAK_T_STRING, 0 }, { "task.test", GEAK_T_STRING, 0 },
	{ "task.test_autotune", GEAK_T_STRING, 0 }, { "task.perf", GEAK_T_STRING, 0 },
	{ "task.entry", GEAK_T_STRING, 0 }, { "task.difficulty", GEAK_T_INT, 0 },
	{ "task.target_kernels", GEAK_T_ARRAY, 0 }, { "task.signatures", GEAK_T_ARRAY, 0 },
	{ "task.cpu_ok", GEAK_T_BOOL, 0 }, { "task.tolerance", GEAK_T_OBJECT, 0 },
	{ "task.level", GEAK_T_INT, 0 }, { "task.timeout", GEAK_T_NUMBER, 0 },
	{ "task.memory_mib", GEAK_T_INT, 0 }, { "task.input_elements", GEAK_T_INT, 0 },
	{ "task.tolerance.rtol", GEAK_T_NUMBER, 0 }, { "task.tolerance.atol", GEAK_T_NUMBER, 0 },
	{ "code", GEAK_T_STRING, 0 }, { "code_sha", GEAK_T_STRING, 0 },
	{ "mode", GEAK_T_STRING, 0 }, { "thought", GEAK_T_STRING, 0 },
	{ "knowledge", GEAK_T_OBJECT, 0 }, { "llm", GEAK_T_OBJECT, 0 },
	{ "usage_total", GEAK_T_OBJECT, 0 }, { "usage_total.calls", GEAK_T_INT, 0 },
	{ "usage_total.input_tokens", GEAK_T_INT, 0 },
	{ "usage_total.output_tokens", GEAK_T_INT, 0 },
	{ "oneshot", GEAK_T_OBJECT, 0 }, { "oneshot.code", GEAK_T_STRING, 0 },
	{ "oneshots", GEAK_T_ARRAY, 0 },
	{ "eval", GEAK_T_OBJECT, 0 }, { "eval.code_sha", GEAK_T_STRING, 0 },
	{ "eval.call", GEAK_T_BOOL, 0 }, { "eval.exec", GEAK_T_BOOL, 0 },
	{ "eval.speedup", GEAK_T_NUMBER, 0 }, { "eval.stage", GEAK_T_STRING, 0 },
	{ "eval.reason", GEAK_T_STRING, 0 }, { "eval.message", GEAK_T_STRING, 0 },
	{ "eval.traceback", GEAK_T_STRING, 0 }, { "eval.shapes", GEAK_T_ARRAY, 0 },
	{ "eval.flags", GEAK_T_ARRAY, 0 }, { "eval.stdout_tail", GEAK_T_STRING, 0 },
	{ "eval.stderr_tail", GEAK_T_STRING, 0 },
	{ "reflection", GEAK_T_STRING, 0 }, { "history", GEAK_T_ARRAY, 0 },
	{ "best", GEAK_T_ARRAY, 0 }, { "perf_debug", GEAK_T_INT, 0 },
	{ "strategy", GEAK_T_STRING, 0 }, { "selected", GEAK_T_OBJECT, 0 },
	{ NULL, 0, 0 },
};

/* The ranges geak-record(5) gives integer fields: a value outside one is
 * refused before any tool sizes a loop, an allocation or a sum by it.
 * "best[].iter" is the field iter of every element of the array best. */
struct range {
	const char *path;
	json_int_t min, max;
};

static const struct range record_ranges[] = {
	{ "run", 0, GEAK_MAX_INDEX }, { "iter", 0, GEAK_MAX_INDEX },
	{ "sample", 0, GEAK_MAX_INDEX }, { "perf_debug", 0, GEAK_MAX_INDEX },
	{ "task.difficulty", 0, GEAK_MAX_INDEX }, { "task.level", 0, GEAK_MAX_INDEX },
	{ "task.memory_mib", 0, GEAK_MAX_COUNT }, { "task.input_elements", 0, GEAK_MAX_COUNT },
	{ "usage_total.calls", 0, GEAK_MAX_COUNT },
	{ "usage_total.input_tokens", 0, GEAK_MAX_COUNT },
	{ "usage_total.output_tokens", 0, GEAK_MAX_COUNT },
	{ "llm.usage.input_tokens", 0, GEAK_MAX_COUNT },
	{ "llm.usage.output_tokens", 0, GEAK_MAX_COUNT },
	{ "llm.attempts", 0, GEAK_MAX_INDEX },
	{ "eval.shapes_total", 0, GEAK_MAX_INDEX },
	{ "oneshot.excluded", 0, GEAK_MAX_COUNT },
	{ "best[].iter", 0, GEAK_MAX_INDEX },
	{ "history[].iter", 0, GEAK_MAX_INDEX }, { "history[].sample", 0, GEAK_MAX_INDEX },
	{ "selected.run", 0, GEAK_MAX_INDEX }, { "selected.iter", 0, GEAK_MAX_INDEX },
	{ "selected.rank", 0, GEAK_MAX_INDEX },
	{ NULL, 0, 0 },
};

/* Fields compared as C strings, so that a NUL or a control character
 * would merge records or reach a terminal: ids and digests. */
static const char *const name_fields[] = {
	"id", "task.suite", "task.name", "code_sha", "eval.code_sha", "best[].code_sha",
	NULL,
};

static int
check_range(json_t *v, const char *path, const struct range *r, char *msg, size_t msglen)
{
	json_int_t n;

	if (!json_is_integer(v))
		return 0; /* absent, or the type check's to report */
	n = json_integer_value(v);
	if (n >= r->min && n <= r->max)
		return 0;
	snprintf(msg, msglen, "field '%s': %" JSON_INTEGER_FORMAT " is out of range (%"
	    JSON_INTEGER_FORMAT " to %" JSON_INTEGER_FORMAT ")", path, n, r->min, r->max);
	return -1;
}

static int
check_name(json_t *v, const char *path, char *msg, size_t msglen)
{
	const unsigned char *s = (const unsigned char *)json_string_value(v);
	size_t n = json_string_length(v);

	if (!s)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(msg, msglen, "field '%s': control character 0x%02x at byte %zu "
			    "(not allowed in a name)", path, s[i], i);
			return -1;
		}
	return 0;
}

/* Apply check to the field at path, or, for "array[].field", to that
 * field of every element of the array. */
static int
each_field(json_t *rec, const char *path, const struct range *r, char *msg, size_t msglen)
{
	const char *brackets = strstr(path, "[].");
	char arr[64], where[128];
	json_t *e;
	size_t i;

	if (!brackets)
		return r ? check_range(geak_get(rec, path), path, r, msg, msglen) :
		    check_name(geak_get(rec, path), path, msg, msglen);
	snprintf(arr, sizeof arr, "%.*s", (int)(brackets - path), path);
	json_array_foreach(geak_get(rec, arr), i, e) {
		snprintf(where, sizeof where, "%s[%zu].%s", arr, i, brackets + 3);
		if (r ? check_range(geak_get(e, brackets + 3), where, r, msg, msglen) :
		    check_name(geak_get(e, brackets + 3), where, msg, msglen))
			return -1;
	}
	return 0;
}

int
geak_check_record(json_t *rec, char *msg, size_t msglen)
{
	if (geak_check_fields(rec, record_fields, msg, msglen) < 0)
		return -1;
	for (const struct range *r = record_ranges; r->path; r++)
		if (each_field(rec, r->path, r, msg, msglen) < 0)
			return -1;
	for (const char *const *p = name_fields; *p; p++)
		if (each_field(rec, *p, NULL, msg, msglen) < 0)
			return -1;
	return 0;
}
