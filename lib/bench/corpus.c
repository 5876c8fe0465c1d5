/* corpus.c: read retrieval corpora into an index builder (see corpus.h). */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/corpus.h"
#include "bench/pysrc.h"
#include "util.h"

static long
fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static long
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int
is_archive_name(const char *path)
{
	static const char *const ext[] = {
		".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2",
		".tar.zst", ".tzst", ".zip", NULL,
	};

	for (int i = 0; ext[i]; i++)
		if (ends_with(path, ext[i]))
			return 1;
	return 0;
}

/* ---- Python sources ---- */

/* How many kernels before k in the file share its name. */
static int
earlier_same_name(const struct geak_pyfile *f, size_t k)
{
	int n = 0;

	for (size_t i = 0; i < k; i++)
		n += f->func[i].is_kernel && strcmp(f->func[i].name, f->func[k].name) == 0;
	return n;
}

size_t
geak_corpus_add_python(struct geak_index_builder *b, const char *source,
	const char *name, const char *text, size_t len)
{
	struct geak_pyfile *f = geak_pyfile_scan(text, len);
	size_t added = 0;

	for (size_t k = 0; k < f->nfunc; k++) {
		const struct geak_pyfunc *kern = &f->func[k];
		long w;
		char *code, *id;
		const char *desc;
		int dup;

		if (!kern->is_kernel)
			continue;
		w = geak_pyfunc_wrapper(f, k);
		code = geak_pyfunc_text(f, kern);
		if (w >= 0) {
			char *wrapper = geak_pyfunc_text(f, &f->func[w]);
			char *both = geak_xasprintf("%s\n\n%s", code, wrapper);
			free(code);
			free(wrapper);
			code = both;
		}
		desc = kern->docstring ? kern->docstring : kern->comment ? kern->comment
			: w >= 0 ? f->func[w].docstring : NULL;
		dup = earlier_same_name(f, k);
		id = dup ? geak_xasprintf("%s:%s#%d", name, kern->name, dup + 1)
			: geak_xasprintf("%s:%s", name, kern->name);
		geak_index_add(b, id, source, desc, code);
		free(id);
		free(code);
		added++;
	}
	geak_pyfile_free(f);
	return added;
}

static long
add_python_file(struct geak_index_builder *b, const char *source, const char *path,
	const char *name, char *err, size_t errlen)
{
	size_t len;
	char *text;
	long n;
	struct stat st;

	if (stat(path, &st) == 0 && st.st_size > (off_t)GEAK_CORPUS_MAX_FILE) {
		geak_warn("%s: skipped: larger than %u bytes", path, GEAK_CORPUS_MAX_FILE);
		return 0;
	}
	if (!(text = geak_read_file(path, &len)))
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	n = (long)geak_corpus_add_python(b, source, name, text, len);
	free(text);
	return n;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .py file under dir, in sorted order so ids and the index come
 * out the same on every machine; hidden entries and caches are skipped,
 * symbolic links to directories are not followed. */
static long
add_directory(struct geak_index_builder *b, const char *source, const char *dir,
	const char *rel, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	long total = 0;

	if (!d)
		return fail(err, errlen, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "__pycache__") == 0)
			continue;
		if (n == cap)
			names = geak_xrealloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
		names[n++] = geak_xstrdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n && total >= 0; i++) {
		char *path = geak_xasprintf("%s/%s", dir, names[i]);
		char *name = *rel ? geak_xasprintf("%s/%s", rel, names[i]) : geak_xstrdup(names[i]);
		struct stat st, lst;
		long got = 0;
		if (stat(path, &st) == 0 && lstat(path, &lst) == 0) {
			if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode))
				got = add_directory(b, source, path, name, err, errlen);
			else if (S_ISREG(st.st_mode) && ends_with(names[i], ".py"))
				got = add_python_file(b, source, path, name, err, errlen);
		}
		total = got < 0 ? -1 : total + got;
		free(path);
		free(name);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return total;
}

/* ---- archives ---- */

static long
add_archive(struct geak_index_builder *b, const char *path, char *err, size_t errlen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	struct geak_buf data = { 0 };
	long total = 0;
	int r;

	if (!a)
		return fail(err, errlen, "%s: libarchive: out of memory", path);
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	archive_read_support_format_zip(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		fail(err, errlen, "%s: %s", path, archive_error_string(a));
		archive_read_free(a);
		return -1;
	}
	while ((r = archive_read_next_header(a, &ae)) != ARCHIVE_EOF) {
		const char *name;
		la_ssize_t got;
		char chunk[65536];
		if (r == ARCHIVE_WARN) {
			geak_warn("%s: %s", path, archive_error_string(a));
		} else if (r != ARCHIVE_OK) {
			total = fail(err, errlen, "%s: %s", path, archive_error_string(a));
			break;
		}
		name = archive_entry_pathname(ae);
		if (archive_entry_filetype(ae) != AE_IFREG || !name || !ends_with(name, ".py"))
			continue;
		if (archive_entry_size_is_set(ae) && archive_entry_size(ae) > (la_int64_t)GEAK_CORPUS_MAX_FILE) {
			geak_warn("%s: %s: skipped: larger than %u bytes", path, name, GEAK_CORPUS_MAX_FILE);
			continue;
		}
		geak_buf_reset(&data);
		while ((got = archive_read_data(a, chunk, sizeof chunk)) > 0 &&
		       data.len + (size_t)got <= GEAK_CORPUS_MAX_FILE)
			geak_buf_append(&data, chunk, (size_t)got);
		if (got < 0) {
			total = fail(err, errlen, "%s: %s: %s", path, name, archive_error_string(a));
			break;
		}
		if (got > 0) {
			geak_warn("%s: %s: skipped: larger than %u bytes", path, name, GEAK_CORPUS_MAX_FILE);
			continue;
		}
		total += (long)geak_corpus_add_python(b, path, name, data.data ? data.data : "", data.len);
	}
	geak_buf_free(&data);
	archive_read_free(a);
	return total;
}

/* ---- JSON and JSON Lines ---- */

static const char *
string_field(json_t *obj, const char *a, const char *b)
{
	const char *s = json_string_value(json_object_get(obj, a));

	return s || !b ? s : json_string_value(json_object_get(obj, b));
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* One object of either form; where names it in messages, n in ids. */
static long
add_object(struct geak_index_builder *b, const char *path, json_t *obj,
	const char *where, size_t n, char *err, size_t errlen)
{
	const char *code, *id;
	char *made = NULL;

	if (!json_is_object(obj))
		return fail(err, errlen, "%s: not a JSON object", where);
	if (!(code = string_field(obj, "code", NULL)))
		return fail(err, errlen, "%s: field 'code': missing or not a string", where);
	if (!(id = string_field(obj, "id", NULL)))
		id = made = geak_xasprintf("%s:%zu", base_name(path), n);
	geak_index_add(b, id, path, string_field(obj, "description", "description_1"), code);
	free(made);
	return 1;
}

static long
add_json_array(struct geak_index_builder *b, const char *path, const char *text,
	size_t len, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *arr = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr), *obj;
	size_t i;
	long total = 0;

	if (!arr)
		return fail(err, errlen, "%s:%d: %s", path, jerr.line, jerr.text);
	if (!json_is_array(arr)) {
		json_decref(arr);
		return fail(err, errlen, "%s: not a JSON array", path);
	}
	json_array_foreach(arr, i, obj) {
		char *where = geak_xasprintf("%s: element %zu", path, i);
		long got = add_object(b, path, obj, where, i, err, errlen);
		free(where);
		if (got < 0) {
			total = -1;
			break;
		}
		total += got;
	}
	json_decref(arr);
	return total;
}

static long
add_json_lines(struct geak_index_builder *b, const char *path, const char *text,
	size_t len, char *err, size_t errlen)
{
	long total = 0;
	size_t lineno = 0;

	for (size_t p = 0; p < len; ) {
		const char *nl = memchr(text + p, '\n', len - p);
		size_t e = nl ? (size_t)(nl - text) : len, i = p;
		json_error_t jerr;
		json_t *obj;
		char *where;
		long got;

		lineno++;
		while (i < e && strchr(" \t\r", text[i]))
			i++;
		if (i == e) {
			p = e + 1;
			continue;
		}
		where = geak_xasprintf("%s:%zu", path, lineno);
		if (!(obj = json_loadb(text + p, e - p, JSON_REJECT_DUPLICATES, &jerr)))
			got = fail(err, errlen, "%s: %s", where, jerr.text);
		else
			got = add_object(b, path, obj, where, lineno, err, errlen);
		json_decref(obj);
		free(where);
		if (got < 0)
			return -1;
		total += got;
		p = e + 1;
	}
	return total;
}

long
geak_corpus_add(struct geak_index_builder *b, const char *path, char *err, size_t errlen)
{
	struct stat st;
	size_t len, i = 0;
	char *text;
	long n;

	if (stat(path, &st) < 0)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return add_directory(b, path, path, "", err, errlen);
	if (ends_with(path, ".py"))
		return add_python_file(b, path, path, path, err, errlen);
	if (is_archive_name(path))
		return add_archive(b, path, err, errlen);
	if (!(text = geak_read_file(path, &len)))
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	while (i < len && strchr(" \t\r\n", text[i]))
		i++;
	if (i < len && text[i] == '[')
		n = add_json_array(b, path, text, len, err, errlen);
	else if (i < len && text[i] == '{')
		n = add_json_lines(b, path, text, len, err, errlen);
	else
		n = fail(err, errlen, "%s: not a corpus: expected a JSON array, JSON Lines, "
			"Python source, a directory or an archive", path);
	free(text);
	return n;
}
