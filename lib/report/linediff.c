/* linediff.c: Myers' greedy diff with its trace kept, after the common
 * head and tail are taken off (most kernels change a few places). */
#include <stdlib.h>
#include <string.h>

#include "report/linediff.h"
#include "util.h"

char **
geak_split_lines(char *text, size_t *n)
{
	char **lines = NULL;
	size_t count = 0, cap = 0;

	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		if (count == cap) {
			cap = cap ? 2 * cap : 64;
			lines = geak_xrealloc(lines, cap * sizeof *lines);
		}
		lines[count++] = p;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl + 1;
	}
	*n = count;
	return lines;
}

/* The diff of the middle parts, a[0..n) and b[0..m): their hashes
 * compared first, the lines only when those agree. */
struct sides {
	const char *const *a, *const *b;
	const unsigned long long *ha, *hb;
	size_t n, m;
};

static int
same(const struct sides *s, size_t x, size_t y)
{
	return s->ha[x] == s->hb[y] && strcmp(s->a[x], s->b[y]) == 0;
}

struct script {
	struct geak_diff_op *v;
	size_t n, cap;
};

static void
push(struct script *sc, char op, size_t ia, size_t ib)
{
	if (sc->n == sc->cap) {
		sc->cap = sc->cap ? 2 * sc->cap : 64;
		sc->v = geak_xrealloc(sc->v, sc->cap * sizeof *sc->v);
	}
	sc->v[sc->n++] = (struct geak_diff_op){ op, ia, ib };
}

/* trace[d][k + d] is the furthest x on diagonal k (x - y) after d
 * edits.  Whether step d came down (an addition) or right (a removal)
 * from step d - 1 is the rule both the search and the walk back use. */
static int
came_down(long *const *trace, long d, long k)
{
	return k == -d || (k != d && trace[d - 1][k - 1 + d - 1] < trace[d - 1][k + 1 + d - 1]);
}

/* Walks back from the end at step d, pushing the script in reverse
 * with indices offset by off. */
static void
walk_back(const struct sides *s, long *const *trace, long d, long k, size_t off,
    struct script *sc)
{
	long x = (long)s->n, y = (long)s->m;

	for (; d > 0; d--) {
		int down = came_down(trace, d, k);
		long pk = down ? k + 1 : k - 1;
		long px = trace[d - 1][pk + d - 1], py = px - pk;
		long sx = down ? px : px + 1, sy = down ? py + 1 : py;
		while (x > sx && y > sy)
			x--, y--, push(sc, ' ', off + (size_t)x, off + (size_t)y);
		if (down)
			push(sc, '+', off + (size_t)px, off + (size_t)py);
		else
			push(sc, '-', off + (size_t)px, off + (size_t)py);
		x = px, y = py, k = pk;
	}
	while (x > 0 && y > 0)
		x--, y--, push(sc, ' ', off + (size_t)x, off + (size_t)y);
}

static long
middle(const struct sides *s, size_t max_d, size_t off, struct script *sc)
{
	long n = (long)s->n, m = (long)s->m, limit = n + m, found = -1, fk = 0;
	long **trace;

	if ((size_t)limit > max_d)
		limit = (long)max_d;
	trace = geak_xcalloc((size_t)limit + 1, sizeof *trace);
	for (long d = 0; d <= limit && found < 0; d++) {
		trace[d] = geak_xmalloc((2 * (size_t)d + 1) * sizeof **trace);
		for (long k = -d; k <= d; k += 2) {
			long x = d == 0 ? 0 : came_down(trace, d, k) ? trace[d - 1][k + 1 + d - 1] :
			    trace[d - 1][k - 1 + d - 1] + 1, y = x - k;
			while (x < n && y < m && same(s, (size_t)x, (size_t)y))
				x++, y++;
			trace[d][k + d] = x;
			if (x >= n && y >= m) {
				found = d, fk = k;
				break;
			}
		}
	}
	if (found >= 0)
		walk_back(s, trace, found, fk, off, sc);
	for (long d = 0; d <= limit; d++)
		free(trace[d]);
	free(trace);
	return found;
}

static unsigned long long *
hashes(const char *const *v, size_t n)
{
	unsigned long long *h = geak_xcalloc(n ? n : 1, sizeof *h);

	for (size_t i = 0; i < n; i++)
		h[i] = geak_fnv1a(v[i], strlen(v[i]));
	return h;
}

static void
reverse(struct geak_diff_op *v, size_t from, size_t to)
{
	while (from + 1 < to) {
		struct geak_diff_op t = v[from];
		v[from++] = v[--to];
		v[to] = t;
	}
}

/* In each run of changes, the removals before the additions: the
 * script is as short, and reads as "this became that". */
static void
removals_first(struct geak_diff_op *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i, w = i;
		struct geak_diff_op *tmp;

		if (v[i].op == ' ') {
			i++;
			continue;
		}
		while (j < n && v[j].op != ' ')
			j++;
		tmp = geak_xmalloc((j - i) * sizeof *tmp);
		for (size_t r = i; r < j; r++)
			if (v[r].op == '-')
				tmp[w++ - i] = v[r];
		for (size_t r = i; r < j; r++)
			if (v[r].op == '+')
				tmp[w++ - i] = v[r];
		memcpy(v + i, tmp, (j - i) * sizeof *tmp);
		free(tmp);
		i = j;
	}
}

long
geak_diff(const char *const *a, size_t na, const char *const *b, size_t nb, size_t max_d,
    struct geak_diff_op **ops, size_t *nops)
{
	size_t head = 0, tail = 0;
	struct script sc = { 0 };
	long d;

	while (head < na && head < nb && strcmp(a[head], b[head]) == 0)
		head++;
	while (tail < na - head && tail < nb - head &&
	    strcmp(a[na - 1 - tail], b[nb - 1 - tail]) == 0)
		tail++;
	for (size_t i = 0; i < head; i++)
		push(&sc, ' ', i, i);
	struct sides s = { a + head, b + head, NULL, NULL, na - head - tail, nb - head - tail };
	s.ha = hashes(s.a, s.n);
	s.hb = hashes(s.b, s.m);
	size_t start = sc.n;
	d = middle(&s, max_d, head, &sc);
	free((void *)s.ha);
	free((void *)s.hb);
	if (d < 0) {
		free(sc.v);
		*ops = NULL;
		*nops = 0;
		return -1;
	}
	reverse(sc.v, start, sc.n);
	removals_first(sc.v + start, sc.n - start);
	for (size_t i = 0; i < tail; i++)
		push(&sc, ' ', na - tail + i, nb - tail + i);
	*ops = sc.v;
	*nops = sc.n;
	return d;
}
