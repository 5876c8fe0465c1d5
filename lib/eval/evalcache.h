/* evalcache.h: a content-addressed store of JSON values on disk. */
#ifndef GEAK_EVALCACHE_H
#define GEAK_EVALCACHE_H

#include <jansson.h>

/* ${XDG_CACHE_HOME:-$HOME/.cache}/geak; caller frees. */
char *geak_cache_default_dir(void);
/* mkdir -p with the given mode; 0 or -1 with errno. */
int geak_mkdirs(const char *path, unsigned mode);
/* The hex SHA-256 of a JSON value in canonical form (sorted keys,
 * compact), into out[65]. */
void geak_cache_key(json_t *v, char out[65]);
/* dir/ns/<key[0..1]>/<key>.json: the stored value (new reference), or
 * NULL when absent or unreadable. */
json_t *geak_cache_get(const char *dir, const char *ns, const char *key);
/* Store atomically (write a temporary file, rename); 0 or -1 with errno. */
int geak_cache_put(const char *dir, const char *ns, const char *key, json_t *v);

#endif
