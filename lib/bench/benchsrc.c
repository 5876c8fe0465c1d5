/* benchsrc.c: read benchmark files from a directory, an archive or a
 * loose file (see benchsrc.h). */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/benchsrc.h"
#include "util.h"

struct walk {
	geak_benchsrc_want_fn *want;
	geak_benchsrc_take_fn *take;
	void *ctx;
};

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int
read_loose(const char *path, const char *name, const struct walk *w)
{
	size_t len;
	char *data;

	if (!w->want(name, w->ctx))
		return 0;
	if (!(data = geak_read_file(path, &len))) {
		geak_warn("%s:", path);
		return -1;
	}
	w->take(name, data, len, w->ctx);
	return 0;
}

/* Walk dir/rel (rel "" at the top), offering paths relative to dir. */
static int
walk_dir(const char *dir, const char *rel, const struct walk *w)
{
	char *full = *rel ? geak_xasprintf("%s/%s", dir, rel) : geak_xstrdup(dir);
	DIR *d = opendir(full);
	struct dirent *de;
	int r = 0;

	if (!d) {
		geak_warn("%s:", full);
		free(full);
		return -1;
	}
	while (r == 0 && (errno = 0, de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		char *sub = *rel ? geak_xasprintf("%s/%s", rel, de->d_name) : geak_xstrdup(de->d_name);
		char *path = geak_xasprintf("%s/%s", dir, sub);
		/* A link to a file is read; a link to a directory is not
		 * followed, so a loop of links cannot trap the walk. */
		if (lstat(path, &st) < 0) {
			geak_warn("%s:", path);
			r = -1;
		} else if (S_ISDIR(st.st_mode)) {
			r = walk_dir(dir, sub, w);
		} else if (S_ISREG(st.st_mode) || (S_ISLNK(st.st_mode) &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode))) {
			r = read_loose(path, sub, w);
		}
		free(sub);
		free(path);
	}
	if (r == 0 && errno) {
		geak_warn("%s:", full);
		r = -1;
	}
	closedir(d);
	free(full);
	return r;
}

static int
archive_fail(struct archive *a, const char *src, const char *entry)
{
	const char *why = archive_error_string(a);

	if (!why)
		why = "unreadable archive";
	if (entry)
		geak_warn("%s: %s: %s", src, entry, why);
	else
		geak_warn("%s: %s", src, why);
	return -1;
}

/* Read the current entry's data, which the header says is size bytes. */
static int
read_entry(struct archive *a, const char *src, const char *path, int64_t size,
	const struct walk *w)
{
	struct geak_buf b = {0};
	char chunk[65536];
	la_ssize_t n;

	if (size > (int64_t)GEAK_BENCHSRC_MAX_FILE) {
		geak_warn("%s: %s: larger than %u bytes", src, path, GEAK_BENCHSRC_MAX_FILE);
		return -1;
	}
	geak_buf_reserve(&b, size > 0 ? (size_t)size : 0);
	while ((n = archive_read_data(a, chunk, sizeof chunk)) > 0) {
		if (b.len + (size_t)n > GEAK_BENCHSRC_MAX_FILE) {
			geak_buf_free(&b);
			geak_warn("%s: %s: larger than %u bytes", src, path, GEAK_BENCHSRC_MAX_FILE);
			return -1;
		}
		geak_buf_append(&b, chunk, (size_t)n);
	}
	if (n < 0) {
		geak_buf_free(&b);
		return archive_fail(a, src, path);
	}
	b.data[b.len] = '\0'; /* reserved above, even when nothing came */
	size_t len = b.len;
	w->take(path, geak_buf_steal(&b), len, w->ctx);
	return 0;
}

static int
walk_archive(const char *src, const struct walk *w)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int r = 0, status;

	if (!a)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	/* Only the formats benchmarks ship in: fewer parsers, less to attack. */
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	archive_read_support_format_zip(a);
	status = strcmp(src, "-") == 0 ? archive_read_open_fd(a, 0, 65536)
	                               : archive_read_open_filename(a, src, 65536);
	if (status != ARCHIVE_OK) {
		r = archive_fail(a, src, NULL);
		archive_read_free(a);
		return r;
	}
	while (r == 0 && (status = archive_read_next_header(a, &e)) != ARCHIVE_EOF) {
		if (status == ARCHIVE_WARN) {
			geak_warn("%s: %s", src, archive_error_string(a));
		} else if (status != ARCHIVE_OK) {
			r = archive_fail(a, src, NULL);
			break;
		}
		const char *path = archive_entry_pathname(e);
		if (!path || archive_entry_filetype(e) != AE_IFREG)
			continue;
		while (path[0] == '.' && path[1] == '/')
			path += 2;
		if (w->want(path, w->ctx))
			r = read_entry(a, src, path, archive_entry_size(e), w);
	}
	archive_read_free(a);
	return r;
}

int
geak_benchsrc_read(const char *src, geak_benchsrc_want_fn *want,
	geak_benchsrc_take_fn *take, void *ctx)
{
	struct walk w = {want, take, ctx};
	struct stat st;

	if (strcmp(src, "-") == 0)
		return walk_archive(src, &w);
	if (stat(src, &st) < 0) {
		geak_warn("%s:", src);
		return -1;
	}
	if (S_ISDIR(st.st_mode))
		return walk_dir(src, "", &w);
	if (has_suffix(src, ".json")) {
		const char *base = strrchr(src, '/');
		return read_loose(src, base ? base + 1 : src, &w);
	}
	return walk_archive(src, &w);
}
