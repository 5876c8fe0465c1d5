/* util.c: messages, dying allocators, buffers, small file helpers. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

#include "util.h"

const char *geak_prog = "geak";

/* The status line (geak_status_draw): the text shown, whether it is on
 * the terminal now, and whether another program's may be there (a loop
 * that draws one line for all its stages, GEAK_STATUS_DIR).  Guarded by
 * stderr's own lock. */
static char *status_text;
static int status_shown;
static int foreign_status;

void
geak_setprog(const char *argv0)
{
	const char *slash, *dir = getenv("GEAK_STATUS_DIR");

	foreign_status = dir && *dir && isatty(STDERR_FILENO);
	if (!argv0 || !*argv0)
		return;
	slash = strrchr(argv0, '/');
	geak_prog = slash ? slash + 1 : argv0;
}

void
geak_status_draw(const char *line)
{
	flockfile(stderr);
	free(status_text);
	status_text = line && *line ? strdup(line) : NULL;
	if (status_shown || status_text)
		fputs("\r\033[K", stderr);
	status_shown = status_text != NULL;
	if (status_text)
		fputs(status_text, stderr);
	fflush(stderr);
	funlockfile(stderr);
}

void
geak_buf_put_printable(struct geak_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	geak_buf_reserve(b, n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i], c1 = i + 1 < n ? (unsigned char)s[i + 1] : 0;
		char esc[7] = { '\\', 'x', 0, 0, 0, 0, 0 };
		size_t skip = 1;
		/* C0 and DEL, and C1 (U+0080 to U+009F, 0xc2 0x80-0x9f). */
		if ((c >= 0x20 && c != 0x7f && c != 0xc2) || c == '\t' ||
		    (c == 0xc2 && (c1 < 0x80 || c1 > 0x9f)))
			continue;
		geak_buf_append(b, s + run, i - run);
		if (c == 0xc2) {
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c1 >> 4], esc[5] = hex[c1 & 15];
			skip = 2;
		} else {
			esc[2] = hex[c >> 4], esc[3] = hex[c & 15];
		}
		geak_buf_puts(b, esc);
		run = i + skip;
		i += skip - 1;
	}
	geak_buf_append(b, s + run, n - run);
}

char *
geak_printable(const char *s)
{
	struct geak_buf b = { 0 };

	geak_buf_put_printable(&b, s ? s : "", s ? strlen(s) : 0);
	return geak_buf_steal(&b);
}

static size_t (*message_filter)(char **s);

void
geak_warn_filter(size_t (*filter)(char **s))
{
	message_filter = filter;
}

/* "prog: message[: strerror]" as one line that a terminal shows as
 * text: the message's control characters escaped, and what the filter
 * (geak_warn_filter) takes out taken out.  NULL when out of memory. */
static char *
warn_line(const char *fmt, va_list ap, int saved)
{
	char *msg = NULL, *line;
	size_t n = strlen(fmt);
	struct geak_buf b = { 0 };

	if (vasprintf(&msg, fmt, ap) < 0)
		return NULL;
	if (n && fmt[n - 1] == ':') {
		char *with = NULL;
		if (asprintf(&with, "%s %s", msg, strerror(saved)) < 0) {
			free(msg);
			return NULL;
		}
		free(msg);
		msg = with;
	}
	if (message_filter)
		message_filter(&msg);
	geak_buf_printf(&b, "%s: ", geak_prog);
	geak_buf_put_printable(&b, msg, strlen(msg));
	free(msg);
	line = geak_buf_steal(&b);
	return line;
}

void
geak_vwarn(const char *fmt, va_list ap)
{
	int saved = errno;
	char *line = warn_line(fmt, ap, saved);

	/* Threads of one tool warn at once: each message is one line, above
	 * the status line when one is shown. */
	flockfile(stderr);
	if (status_shown || foreign_status)
		fputs("\r\033[K", stderr);
	fprintf(stderr, "%s\n", line ? line : fmt);
	free(line);
	if (status_shown)
		fputs(status_text, stderr);
	fflush(stderr);
	funlockfile(stderr);
	errno = saved;
}

void
geak_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	geak_vwarn(fmt, ap);
	va_end(ap);
}

static atomic_int stop_signal;

void
geak_stop(int sig)
{
	int none = 0;

	atomic_compare_exchange_strong(&stop_signal, &none, sig);
}

int
geak_stopping(void)
{
	return atomic_load(&stop_signal);
}

static atomic_int abandoned;

void
geak_abandon(void)
{
	atomic_store(&abandoned, 1);
}

int
geak_abandoned(void)
{
	return atomic_load(&abandoned);
}

noreturn void
geak_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	geak_vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

void *
geak_xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		geak_die(GEAK_EXIT_FATAL, "out of memory (%zu bytes)", size);
	return p;
}

void *
geak_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		geak_die(GEAK_EXIT_FATAL, "out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *
geak_xrealloc(void *old, size_t size)
{
	void *p = realloc(old, size ? size : 1);

	if (!p)
		geak_die(GEAK_EXIT_FATAL, "out of memory (%zu bytes)", size);
	return p;
}

char *
geak_xstrdup(const char *s)
{
	return geak_xstrndup(s, strlen(s));
}

char *
geak_xstrndup(const char *s, size_t n)
{
	char *p = geak_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
geak_xasprintf(const char *fmt, ...)
{
	struct geak_buf b = {0};
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		geak_die(GEAK_EXIT_FATAL, "format failed");
	geak_buf_reserve(&b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b.data, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return b.data;
}

void
geak_buf_reserve(struct geak_buf *b, size_t extra)
{
	size_t need;

	if (extra > SIZE_MAX - b->len - 1)
		geak_die(GEAK_EXIT_FATAL, "buffer size overflow");
	need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	if (b->cap < 64)
		b->cap = 64;
	while (b->cap < need)
		b->cap = b->cap > SIZE_MAX / 2 ? need : b->cap * 2;
	b->data = geak_xrealloc(b->data, b->cap);
}

void
geak_buf_append(struct geak_buf *b, const void *p, size_t n)
{
	geak_buf_reserve(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
geak_buf_puts(struct geak_buf *b, const char *s)
{
	geak_buf_append(b, s, strlen(s));
}

void
geak_buf_printf(struct geak_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		geak_die(GEAK_EXIT_FATAL, "format failed");
	geak_buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
geak_buf_reset(struct geak_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void
geak_buf_free(struct geak_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *
geak_buf_steal(struct geak_buf *b)
{
	char *p;

	if (!b->data)
		geak_buf_reserve(b, 0), b->data[0] = '\0';
	p = b->data;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}

char *
geak_which(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL, *found = NULL;

	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? geak_xstrdup(name) : NULL;
	copy = geak_xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *p = geak_xasprintf("%s/%s", *d ? d : ".", name);
		struct stat st;
		if (access(p, X_OK) == 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode))
			found = p;
		else
			free(p);
	}
	free(copy);
	return found;
}

char *
geak_read_file(const char *path, size_t *lenp)
{
	struct geak_buf b = {0};
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	geak_buf_reserve(&b, 0);
	b.data[0] = '\0';
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int saved = errno;
			close(fd);
			geak_buf_free(&b);
			errno = saved;
			return NULL;
		}
		geak_buf_append(&b, chunk, (size_t)n);
	}
	close(fd);
	if (lenp)
		*lenp = b.len;
	return b.data;
}

int
geak_write_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int
geak_fshut(FILE *fp, const char *name)
{
	int bad = fflush(fp) != 0 || ferror(fp);

	if (bad) {
		geak_warn("%s: write failed:", name);
		return -1;
	}
	return 0;
}

long
geak_parse_long(const char *arg, const char *opt, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		geak_die(GEAK_EXIT_USAGE, "%s: '%s' is not a whole number from %ld to %ld",
		    opt, arg, min, max);
	return v;
}

double
geak_parse_double(const char *arg, const char *opt, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < min || v > max)
		geak_die(GEAK_EXIT_USAGE, "%s: '%s' is not a number from %g to %g",
		    opt, arg, min, max);
	return v;
}

uint64_t
geak_fnv1a(const void *data, size_t len)
{
	const unsigned char *s = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return h;
}

double
geak_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *sharedir;

static void
find_sharedir(void)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;
	const char *env = getenv("GEAK_SHAREDIR");

	if (env && *env) {
		sharedir = geak_xstrdup(env);
		return;
	}
	/* A tool run from the build tree finds bin/../share. */
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/'))) {
			*slash = '\0';
			char *cand = geak_xasprintf("%s/../share/harness", exe);
			int ok = is_dir(cand);
			free(cand);
			if (ok) {
				sharedir = geak_xasprintf("%s/../share", exe);
				return;
			}
		}
	}
	sharedir = geak_xstrdup(GEAK_SHAREDIR);
}

const char *
geak_sharedir(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, find_sharedir);
	return sharedir;
}

char *
geak_share_path(const char *override_dir, const char *subdir, const char *name)
{
	if (override_dir && *override_dir) {
		char *p = geak_xasprintf("%s/%s", override_dir, name);
		if (access(p, R_OK) == 0)
			return p;
		free(p);
	}
	return geak_xasprintf("%s/%s/%s", geak_sharedir(), subdir, name);
}

void
geak_print_version(void)
{
	printf("%s (geak) %s\n", geak_prog, GEAK_VERSION);
}

int
geak_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/* ---- files a sandboxed process could have made ---- */

/* The next component of *name (up to '/'), into buf; 0 at the end, -1
 * for one that is empty, too long or "..". */
static int
next_component(const char **name, char *buf, size_t n)
{
	const char *s = *name, *end = strchr(s, '/');
	size_t len = end ? (size_t)(end - s) : strlen(s);

	if (!*s)
		return 0;
	if (len == 0 || len >= n || (len == 2 && s[0] == '.' && s[1] == '.'))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*name = end ? end + 1 : s + len;
	return 1;
}

int
geak_open_untrusted(const char *dir, const char *name, struct stat *st)
{
	char part[NAME_MAX + 1];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), r, saved;

	while (fd >= 0 && (r = next_component(&name, part, sizeof part)) != 0) {
		int next = -1;
		if (r < 0)
			errno = EINVAL;
		else if (*name) /* a folder on the way: never through a link */
			next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		else /* the file: a FIFO must not hold us in open() */
			next = openat(fd, part, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		saved = errno;
		close(fd);
		errno = saved;
		fd = next;
		if (fd >= 0 && !*name)
			break;
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

char *
geak_read_untrusted(const char *dir, const char *name, size_t cap, size_t *lenp)
{
	struct stat st;
	int fd = geak_open_untrusted(dir, name, &st);
	size_t got = 0, size;
	ssize_t n;
	char *buf;

	if (fd < 0)
		return NULL;
	if ((unsigned long long)st.st_size > cap) {
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	/* Sized by the file, grown while it grows, never past one byte more
	 * than the cap: that byte shows a file that grew beyond it. */
	size = (size_t)st.st_size + 2;
	buf = geak_xmalloc(size);
	for (;;) {
		if (got == size - 1) {
			if (got > cap)
				break;
			size = size - 1 > cap / 2 ? cap + 2 : 2 * size;
			buf = geak_xrealloc(buf, size);
		}
		if ((n = read(fd, buf + got, size - 1 - got)) == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;
			close(fd);
			free(buf);
			errno = saved;
			return NULL;
		}
		got += (size_t)n;
	}
	close(fd);
	if (got > cap) {
		free(buf);
		errno = EFBIG;
		return NULL;
	}
	buf[got] = '\0';
	if (lenp)
		*lenp = got;
	return buf;
}

const char *
geak_untrusted_why(int err)
{
	switch (err) {
	case ELOOP: return "it is a symbolic link, or lies behind one";
	case ENOTDIR: return "a folder on its way is not one";
	case EINVAL: return "it is not a regular file (a FIFO, a device, a folder)";
	case EFBIG: return "it is larger than geak-eval reads";
	default: return strerror(err);
	}
}

/* ---- private directories ---- */

static const char *
tmp_parent(const char *parent)
{
	const char *tmp = parent;

	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	return tmp;
}

char *
geak_mkworkdir(const char *parent, const char *prefix)
{
	const char *tmp = tmp_parent(parent);
	char *path;

	path = geak_xasprintf("%s/%sXXXXXX", tmp, prefix ? prefix : "geak-");
	if (!mkdtemp(path)) {
		int saved = errno;
		free(path);
		errno = saved;
		return NULL;
	}
	return path;
}

static int
unlock_dir(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type == FTW_D || type == FTW_DNR)
		chmod(path, 0700);
	return 0;
}

static int
remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	if (remove(path) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int
geak_rmtree(const char *path)
{
	/* Untrusted code may have left directories unreadable: open them up
	 * first, then delete depth-first, never following links. */
	nftw(path, unlock_dir, 32, FTW_PHYS);
	return nftw(path, remove_one, 32, FTW_PHYS | FTW_DEPTH);
}

/* ---- what a killed run leaves ---- */

/* The start time of process pid (clock ticks since boot), from
 * /proc/PID/stat; 0, -1 (errno ENOENT: no such process). */
static int
start_time(long pid, unsigned long long *start)
{
	char path[64], *s, *p, *save = NULL;
	int r = -1, field = 3;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (!(s = geak_read_file(path, NULL)))
		return -1;
	/* Field 22; the name in field 2 may hold spaces and parentheses. */
	p = strrchr(s, ')');
	for (char *t = p ? strtok_r(p + 1, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save))
		if (field++ == 22) {
			r = sscanf(t, "%llu", start) == 1 ? 0 : -1;
			break;
		}
	free(s);
	if (r < 0)
		errno = EINVAL;
	return r;
}

static int
pid_ns(unsigned long long *ns)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) < 0)
		return -1;
	*ns = (unsigned long long)st.st_ino;
	return 0;
}

int
geak_proc_ident(char out[GEAK_IDENT_MAX])
{
	unsigned long long start, ns;

	if (start_time((long)getpid(), &start) < 0 || pid_ns(&ns) < 0)
		return -1;
	snprintf(out, GEAK_IDENT_MAX, "%ld-%llu-%llu", (long)getpid(), start, ns);
	return 0;
}

int
geak_proc_ident_gone(const char *ident)
{
	long pid;
	unsigned long long start, ns, now, our_ns;
	int used = 0;

	if (sscanf(ident, "%ld-%llu-%llu%n", &pid, &start, &ns, &used) != 3 || pid <= 0 ||
	    (ident[used] && ident[used] != '\n' && ident[used] != '.'))
		return 0;
	if (pid_ns(&our_ns) < 0 || ns != our_ns)
		return 0;
	if (start_time(pid, &now) < 0)
		return errno == ENOENT;
	return now != start;
}

int
geak_workdir_claim(const char *dir)
{
	char ident[GEAK_IDENT_MAX], *path, *line;
	int fd, r;

	if (geak_proc_ident(ident) < 0)
		return -1;
	path = geak_xasprintf("%s/%s", dir, GEAK_OWNER_FILE);
	line = geak_xasprintf("%s\n", ident);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	r = fd >= 0 && geak_write_all(fd, line, strlen(line)) == 0 ? 0 : -1;
	if (fd >= 0 && close(fd) < 0)
		r = -1;
	free(path), free(line);
	return r;
}

/* 1 when name under parent is a folder of ours whose owner has ended. */
static int
dead_workdir(const char *parent, const char *name)
{
	char *owner = geak_xasprintf("%s/%s", name, GEAK_OWNER_FILE);
	char *ident = geak_read_untrusted(parent, owner, GEAK_IDENT_MAX, NULL);
	struct stat st;
	int dead = 0;

	if (ident) {
		char *path = geak_xasprintf("%s/%s", parent, name);
		dead = lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		    geak_proc_ident_gone(ident);
		free(path);
	}
	free(owner), free(ident);
	return dead;
}

void
geak_workdir_sweep(const char *parent, const char *prefix)
{
	const char *tmp = tmp_parent(parent);
	DIR *d = opendir(tmp);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) || !dead_workdir(tmp, e->d_name))
			continue;
		char *path = geak_xasprintf("%s/%s", tmp, e->d_name);
		geak_rmtree(path);
		free(path);
	}
	closedir(d);
}

int
geak_copy_capped(int in, int out, unsigned long long cap)
{
	unsigned long long done = 0;
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if ((done += (unsigned long long)n) > cap)
			return EFBIG;
		if (geak_write_all(out, buf, (size_t)n) < 0)
			return errno;
	}
	return 0;
}
