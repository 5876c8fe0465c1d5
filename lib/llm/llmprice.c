/* llmprice.c: the price table (share/prices.tsv, user-editable).
 *
 * Lines: provider TAB model-pattern TAB input TAB cached-input TAB output,
 * prices per million tokens; '#' starts a comment; provider "*" matches
 * any; the pattern is an fnmatch(3) glob; the first matching line wins. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llmint.h"

static int
parse_price(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return (errno || end == s || *end || *out < 0) ? -1 : 0;
}

/* Split line at tabs into at most n fields; returns the count. */
static int
split(char *line, char **f, int n)
{
	int i = 0;
	char *save = NULL, *tok;

	for (tok = strtok_r(line, "\t", &save); tok && i < n; tok = strtok_r(NULL, "\t", &save))
		f[i++] = tok;
	return i;
}

int
geak_llm_price_load(const char *path, const char *provider, const char *model,
	struct geak_llm_price *price)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL, *f[5];
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;
	int rc = 0;

	memset(price, 0, sizeof *price);
	if (!fp) {
		geak_warn("%s:", path);
		return -1;
	}
	while (!price->known && (len = getline(&line, &cap, fp)) != -1) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!*line || *line == '#')
			continue;
		if (split(line, f, 5) != 5 || parse_price(f[2], &price->input) ||
		    parse_price(f[3], &price->cached_input) || parse_price(f[4], &price->output)) {
			geak_warn("%s:%ld: want provider, model, input, cached input, output "
			    "(tab-separated)", path, lineno);
			rc = -1;
			break;
		}
		if ((!strcmp(f[0], "*") || !strcmp(f[0], provider)) &&
		    fnmatch(f[1], model, 0) == 0)
			price->known = 1;
	}
	if (ferror(fp)) {
		geak_warn("%s:", path);
		rc = -1;
	}
	free(line);
	fclose(fp);
	if (!price->known)
		memset(price, 0, sizeof *price);
	return rc;
}

double
geak_llm_cost(const struct geak_llm_price *p, const struct geak_llm_usage *u)
{
	long cached = u->cached_input_tokens, fresh = u->input_tokens - cached;

	if (!p->known)
		return 0;
	if (fresh < 0)
		fresh = 0;
	return (fresh * p->input + cached * p->cached_input + u->output_tokens * p->output) / 1e6;
}
