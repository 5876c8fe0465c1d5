/* util.h: errors, allocation, buffers and files shared by every tool. */
#ifndef GEAK_UTIL_H
#define GEAK_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdnoreturn.h>

/* Exit statuses common to every tool; each man page lists them. */
enum {
	GEAK_EXIT_OK = 0,      /* every record came out without an error */
	GEAK_EXIT_RECORDS = 1, /* some records came out with an error object */
	GEAK_EXIT_USAGE = 2,   /* bad command line */
	GEAK_EXIT_FATAL = 3,   /* could not run or write output: records lost */
	GEAK_EXIT_RUN = 4,     /* every record came out, but some failed for a
	                        * reason that is not theirs (the key, the
	                        * network, the provider, the budget): the output
	                        * is not a result to keep */
};

extern const char *geak_prog; /* name used as the prefix of every message */

void geak_setprog(const char *argv0);
/* Print "prog: message" on stderr.  A format ending in ':' appends
 * strerror(errno), as sbase's eprintf does. */
void geak_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
noreturn void geak_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void geak_vwarn(const char *fmt, va_list ap);
/* Filter every message passes through before it is printed (a
 * redaction: it may replace *s by a new heap string). */
void geak_warn_filter(size_t (*filter)(char **s));
/* Show line as the status line at the foot of stderr (a terminal), in
 * place of the last; NULL or "" takes it away.  Messages printed while
 * it is shown go above it, and it is drawn again below them. */
void geak_status_draw(const char *line);

/* A stop was asked for (a signal, see recpool.h): work in progress
 * finishes, nothing new starts.  Safe from any thread. */
void geak_stop(int sig);
/* The signal that asked for the stop, or 0. */
int geak_stopping(void);
/* The run is being torn down (its jobs killed): what ends from now on is
 * no result and is not written.  Safe from any thread. */
void geak_abandon(void);
int geak_abandoned(void);

/* Allocators that end the tool on failure: the tools are short-lived
 * filters, and a half-written record is worse than a clean exit. */
void *geak_xmalloc(size_t size);
void *geak_xcalloc(size_t n, size_t size);
void *geak_xrealloc(void *p, size_t size);
char *geak_xstrdup(const char *s);
char *geak_xstrndup(const char *s, size_t n);
char *geak_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable byte buffer, always NUL-terminated. */
struct geak_buf {
	char *data;
	size_t len, cap;
};
void geak_buf_reserve(struct geak_buf *b, size_t extra);
void geak_buf_append(struct geak_buf *b, const void *p, size_t n);
void geak_buf_puts(struct geak_buf *b, const char *s);
void geak_buf_printf(struct geak_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void geak_buf_reset(struct geak_buf *b);
void geak_buf_free(struct geak_buf *b);
char *geak_buf_steal(struct geak_buf *b);
/* Append s (n bytes) to b with its control characters (C0 but tab, DEL,
 * C1 in UTF-8) written as \xHH or \u00HH, so that text from a record, a
 * candidate or a server shows as text on a terminal and cannot move its
 * cursor or change its state. */
void geak_buf_put_printable(struct geak_buf *b, const char *s, size_t n);
/* The same into a new string (NULL: ""); caller frees. */
char *geak_printable(const char *s);

/* The program name would run as: a name with a slash as it is, else the
 * first executable of that name in PATH; NULL when there is none.
 * Caller frees. */
char *geak_which(const char *name);

/* Read a whole file; NULL with errno set on failure.  *len may be NULL. */
char *geak_read_file(const char *path, size_t *len);
/* Files a sandboxed process could have made or replaced, read from
 * outside the sandbox: name (relative; '/' separates folders, ".." is
 * refused) under dir (a folder of ours, its last component not a link),
 * opened through no symbolic link at any step, without waiting on a FIFO,
 * and only when it is a regular file.  Every such read goes through
 * these.  geak_open_untrusted: the descriptor, st its fstat; -1 with
 * errno set (ELOOP a link, EINVAL not a regular file).
 * geak_read_untrusted: its content NUL-terminated, at most cap bytes
 * (else NULL, errno EFBIG); *len may be NULL. */
struct stat;
int geak_open_untrusted(const char *dir, const char *name, struct stat *st);
char *geak_read_untrusted(const char *dir, const char *name, size_t cap, size_t *len);
/* Why one of those two failed, from its errno, in words. */
const char *geak_untrusted_why(int err);
/* Write all of s to the existing file at path, in one write(2), with
 * nothing but system calls (it runs in forked children too); 0 or -1. */
int geak_write_str(const char *path, const char *s);
/* Write all of p to fd, retrying short writes; -1 with errno on failure. */
int geak_write_all(int fd, const void *p, size_t n);
/* What is left to read of in written to out, at most cap bytes: 0, or
 * the errno that stopped it (EFBIG past cap). */
int geak_copy_capped(int in, int out, unsigned long long cap);
/* Flush and check a stream; report "prog: name: why" once.  0 or -1. */
int geak_fshut(FILE *fp, const char *name);

/* Parse a number from an option argument; die with a usage error naming
 * the option when it is not one. */
long geak_parse_long(const char *arg, const char *opt, long min, long max);
double geak_parse_double(const char *arg, const char *opt, double min, double max);

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double geak_now(void);

/* Where installed data lives: $GEAK_SHAREDIR, else the share/ folder next
 * to the tool's bin/ folder (a build tree), else the compiled-in path. */
const char *geak_sharedir(void);
/* Path of a data file: override_dir/name when that is readable (the
 * user's own copy), else geak_sharedir()/subdir/name.  Caller frees. */
char *geak_share_path(const char *override_dir, const char *subdir, const char *name);

void geak_print_version(void);

/* FNV-1a, 64 bits: a fast hash for in-memory tables and shingles. */
uint64_t geak_fnv1a(const void *data, size_t len);

/* Lowercase hex SHA-256 of data, into out[65]. */
void geak_sha256_hex(const void *data, size_t len, char out[65]);

/* A fresh private directory (mode 0700) under parent (NULL: $TMPDIR or
 * /tmp); caller frees the path.  geak_rmtree removes it and everything in
 * it without following symbolic links. */
char *geak_mkworkdir(const char *parent, const char *prefix);
int geak_rmtree(const char *path);

/* ---- what a killed run leaves ----
 *
 * A process is named by its pid, its start time and its PID namespace
 * ("PID-START-NS"), so that a later process given the same pid is not
 * taken for it. */
#define GEAK_IDENT_MAX 64
/* This process's name; 0, or -1 where /proc cannot say. */
int geak_proc_ident(char out[GEAK_IDENT_MAX]);
/* 1 when the process so named has ended; 0 when it lives, or where that
 * cannot be told (another PID namespace's, a name not of that form). */
int geak_proc_ident_gone(const char *ident);
/* dir (made by geak_mkworkdir) marked as this process's: its file
 * GEAK_OWNER_FILE names it.  0 or -1. */
#define GEAK_OWNER_FILE "owner"
int geak_workdir_claim(const char *dir);
/* The folders named PREFIX... under parent (NULL: $TMPDIR or /tmp) of
 * ours whose owner has ended, removed; one without an owner file (made
 * a moment ago, or by an older version) stays. */
void geak_workdir_sweep(const char *parent, const char *prefix);

#endif
