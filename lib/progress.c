/* progress.c: where the progress line goes, and how numbers read in it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "progress.h"

#define EVERY_TTY 0.25   /* a terminal line follows the work closely */
#define EVERY_FILE 1.0   /* a loop redraws its line about twice a second */
#define FIRST_AFTER 1.0  /* seconds before the first line */

void
geak_progress_init(struct geak_progress *p)
{
	const char *dir = getenv("GEAK_STATUS_DIR");

	memset(p, 0, sizeof *p);
	if (dir && *dir) {
		p->mode = GEAK_PROGRESS_FILE;
		p->path = geak_xasprintf("%s/%s", dir, geak_prog);
		p->tmp = geak_xasprintf("%s/.%s.%ld", dir, geak_prog, (long)getpid());
		p->every = EVERY_FILE;
	} else if (isatty(STDERR_FILENO)) {
		p->mode = GEAK_PROGRESS_TTY;
		p->every = EVERY_TTY;
	}
	/* Work of a second or less shows only its summary. */
	p->last = geak_now() + FIRST_AFTER - p->every;
}

/* A line longer than the terminal wraps, and the next redraw would
 * clear only its last row: cut it to the width, at a character. */
static char *
fit(const char *line)
{
	struct winsize ws;
	size_t width = 80, n = strlen(line);

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		width = ws.ws_col;
	if (n >= width) {
		n = width - 1;
		while (n > 0 && ((unsigned char)line[n] & 0xc0) == 0x80)
			n--;
	}
	return geak_xstrndup(line, n);
}

/* The loop reads the file at any moment: it is replaced whole. */
static void
write_file(struct geak_progress *p, const char *line)
{
	int fd = open(p->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return; /* the folder went away: the loop has ended */
	if (geak_write_all(fd, line, strlen(line)) < 0 || geak_write_all(fd, "\n", 1) < 0 ||
	    close(fd) < 0 || rename(p->tmp, p->path) < 0)
		unlink(p->tmp);
}

void
geak_progress_show(struct geak_progress *p, const char *line, int force)
{
	double now = geak_now();
	char *shown;

	if (p->mode == GEAK_PROGRESS_OFF || (!force && now - p->last < p->every))
		return;
	p->last = now;
	if (p->shown && !strcmp(p->shown, line))
		return;
	free(p->shown);
	p->shown = geak_xstrdup(line);
	if (p->mode == GEAK_PROGRESS_FILE) {
		write_file(p, line);
		return;
	}
	shown = fit(line);
	geak_status_draw(shown);
	free(shown);
}

void
geak_progress_end(struct geak_progress *p)
{
	if (p->mode == GEAK_PROGRESS_TTY)
		geak_status_draw(NULL);
	if (p->mode == GEAK_PROGRESS_FILE && unlink(p->path) < 0 && errno != ENOENT)
		geak_warn("%s:", p->path);
	free(p->path);
	free(p->tmp);
	free(p->shown);
	memset(p, 0, sizeof *p);
}

void
geak_fmt_duration(struct geak_buf *b, double s)
{
	long t = (long)(s + 0.5);

	if (t < 60)
		geak_buf_printf(b, "%lds", t);
	else if (t < 3600)
		geak_buf_printf(b, "%ldm%02lds", t / 60, t % 60);
	else
		geak_buf_printf(b, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

void
geak_fmt_count(struct geak_buf *b, double n)
{
	if (n < 10000)
		geak_buf_printf(b, "%.0f", n);
	else if (n < 1e6)
		geak_buf_printf(b, "%.1fk", n / 1e3);
	else
		geak_buf_printf(b, "%.2fM", n / 1e6);
}

void
geak_fmt_cost(struct geak_buf *b, double usd)
{
	if (usd > 0 && usd < 0.01)
		geak_buf_printf(b, "$%.4f", usd);
	else if (usd < 1000)
		geak_buf_printf(b, "$%.2f", usd);
	else
		geak_buf_printf(b, "$%.0f", usd);
}
