/* bench.c: conventions of the TritonBench-G and ROCm benchmark files. */
#include <string.h>

#include "bench/bench.h"
#include "util.h"

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* The first run of GEAK_BENCH_SEP_LEN '#' at or after p, or NULL. */
static const char *
find_run(const char *p)
{
	static char run[GEAK_BENCH_SEP_LEN + 1];

	if (!run[0])
		memset(run, '#', GEAK_BENCH_SEP_LEN);
	return strstr(p, run);
}

int
geak_bench_split(const char *text, char **code, char **test, const char **why)
{
	const char *sep = find_run(text), *end, *start;

	*code = *test = NULL;
	if (!sep) {
		*why = "no separator line of 146 '#'";
		return -1;
	}
	end = sep + GEAK_BENCH_SEP_LEN;
	while (is_blank(*end))
		end++;
	if ((sep != text && sep[-1] != '\n') || (*end != '\n' && *end != '\0')) {
		*why = "the run of 146 '#' does not fill its line";
		return -1;
	}
	if (find_run(end)) {
		*why = "more than one separator line of 146 '#'";
		return -1;
	}
	/* Code: up to the separator, trailing blank lines dropped. */
	start = sep;
	while (start > text && (is_blank(start[-1]) || start[-1] == '\n'))
		start--;
	*code = geak_xasprintf("%.*s\n", (int)(start - text), text);
	/* Test: after the separator line, leading blank lines dropped. */
	start = end;
	for (const char *p = end; *p == '\n' || is_blank(*p); p++)
		if (*p == '\n')
			start = p + 1;
	*test = geak_xstrdup(start);
	return 0;
}

int
geak_bench_uses_hip_libdevice(const char *code)
{
	/* Both spellings: tl.extra.hip.libdevice.pow(...) and
	 * from triton.language.extra.hip.libdevice import pow. */
	return strstr(code, "extra.hip.libdevice") != NULL ||
	    strstr(code, "extra.hip import libdevice") != NULL;
}

int
geak_bench_assigns(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *line = text, *p;

	for (;;) {
		for (p = line; is_blank(*p); p++)
			;
		if (strncmp(p, name, n) == 0) {
			for (p += n; is_blank(*p); p++)
				;
			if (p[0] == '=' && p[1] != '=')
				return 1;
		}
		if (!(line = strchr(line, '\n')))
			return 0;
		line++;
	}
}
