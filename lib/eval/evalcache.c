/* evalcache.c: values keyed by the digest of everything that determines
 * them, so that an identical question is never answered twice, and two
 * writers of one key at once both leave a whole file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "eval/evalcache.h"
#include "util.h"

char *
geak_cache_default_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (xdg && *xdg)
		return geak_xasprintf("%s/geak", xdg);
	return geak_xasprintf("%s/.cache/geak", home && *home ? home : "/tmp");
}

int
geak_mkdirs(const char *path, unsigned mode)
{
	char *p = geak_xstrdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			int saved = errno;
			free(p);
			errno = saved;
			return -1;
		}
		*s = '/';
	}
	free(p);
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

void
geak_cache_key(json_t *v, char out[65])
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	if (!s)
		geak_die(GEAK_EXIT_FATAL, "cannot encode a cache key");
	geak_sha256_hex(s, strlen(s), out);
	free(s);
}

static char *
entry_path(const char *dir, const char *ns, const char *key)
{
	return geak_xasprintf("%s/%s/%.2s/%s.json", dir, ns, key, key);
}

/* The largest entry read: an evaluation's record is kilobytes. */
#define ENTRY_CAP (16u << 20)

/* The harness's workers write in the cache too (the compile caches): an
 * entry is read as a file they could have made. */
json_t *
geak_cache_get(const char *dir, const char *ns, const char *key)
{
	char *name = geak_xasprintf("%s/%.2s/%s.json", ns, key, key);
	size_t len;
	char *s = geak_read_untrusted(dir, name, ENTRY_CAP, &len);
	json_t *v = s ? json_loadb(s, len, JSON_REJECT_DUPLICATES, NULL) : NULL;

	free(name), free(s);
	return v;
}

int
geak_cache_put(const char *dir, const char *ns, const char *key, json_t *v)
{
	char *sub = geak_xasprintf("%s/%s/%.2s", dir, ns, key);
	char *path = entry_path(dir, ns, key);
	char *tmp = geak_xasprintf("%s.%ld.tmp", path, (long)getpid());
	int rc = -1, saved = 0;

	if (geak_mkdirs(sub, 0700) < 0)
		goto out;
	if (json_dump_file(v, tmp, JSON_COMPACT) < 0) {
		saved = errno ? errno : EIO;
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		saved = errno;
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	if (rc < 0 && !saved)
		saved = errno;
	free(sub), free(path), free(tmp);
	errno = saved;
	return rc;
}
