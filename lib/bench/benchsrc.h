/* benchsrc.h: the files of a benchmark as the user has it: a checkout
 * (a directory), a downloaded archive (tar, compressed or not, or zip),
 * read in place and never extracted, or one loose JSON file. */
#ifndef GEAK_BENCHSRC_H
#define GEAK_BENCHSRC_H

#include <stddef.h>

/* Largest single file read, in bytes. */
#define GEAK_BENCHSRC_MAX_FILE (64u << 20)

/* want: 1 when the file at path (relative to the directory, as stored in
 * the archive, or the base name of a loose file) is to be read.
 * take: receives the contents, NUL-terminated; it owns data. */
typedef int geak_benchsrc_want_fn(const char *path, void *ctx);
typedef void geak_benchsrc_take_fn(const char *path, char *data, size_t len, void *ctx);

/* Read every wanted regular file of src ("-": an archive on stdin).
 * Directories are walked without following symbolic links to
 * directories; names starting with '.' are skipped.  Returns 0, or -1
 * after reporting "src: entry: why" (an unreadable or corrupt source:
 * files already taken stay taken). */
int geak_benchsrc_read(const char *src, geak_benchsrc_want_fn *want,
	geak_benchsrc_take_fn *take, void *ctx);

#endif
