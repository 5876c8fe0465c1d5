/* knowledge.c: find and read knowledge packs (see knowledge.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "knowledge.h"
#include "util.h"

#define GENERAL_PACK "triton"
#define FALLBACK_PACK "generic"

static void
set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Pack names become file names: keep them to one plain path component. */
static int
valid_name(const char *name)
{
	if (!*name || *name == '.' || strlen(name) > 64)
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

static int
contains(const char *haystack, const char *needle)
{
	return haystack && strstr(haystack, needle) != NULL;
}

const char *
geak_knowledge_pack_for(const json_t *gpu)
{
	const char *arch = json_string_value(json_object_get(gpu, "arch"));
	const char *name = json_string_value(json_object_get(gpu, "name"));

	if (!arch)
		return FALLBACK_PACK;
	/* MI300X, MI300A and MI325X are all gfx942; the pack's facts are
	 * the MI300X's. */
	if (strcmp(arch, "gfx942") == 0)
		return "mi300x";
	/* Each MI250/MI250X graphics die (GCD) is one device; MI210 is the
	 * same architecture. */
	if (strcmp(arch, "gfx90a") == 0)
		return "mi250";
	if (strcmp(arch, "sm_90") == 0 || strcmp(arch, "sm_90a") == 0)
		return contains(name, "H200") ? "h200" : "h100";
	return FALLBACK_PACK;
}

static const char *
detect_pack(void)
{
	json_t *gpus;
	char err[256];
	const char *pack = FALLBACK_PACK;

	/* A machine whose runtime fails gets the generic advice: the
	 * prompt is still useful, and geak-eval reports the runtime. */
	if (geak_gpu_list(&gpus, err, sizeof err) < 0)
		return pack;
	if (json_array_size(gpus) > 0)
		pack = geak_knowledge_pack_for(json_array_get(gpus, 0));
	json_decref(gpus);
	return pack;
}

/* The readable file for a pack: the override directory's own copy, else
 * the shipped one.  NULL when neither exists. */
static char *
pack_path(const char *dir, const char *pack)
{
	char *file = geak_xasprintf("%s.md", pack);
	char *path = geak_share_path(dir, "knowledge", file);

	free(file);
	if (access(path, R_OK) == 0)
		return path;
	free(path);
	return NULL;
}

static int
append_pack(struct geak_buf *text, const char *dir, const char *pack,
	char *err, size_t errlen)
{
	char *path = pack_path(dir, pack), *body;
	size_t len;

	if (!path) {
		set_err(err, errlen, "knowledge pack '%s': no %s.md in %s%s%s/knowledge",
			pack, pack, dir ? dir : "", dir ? " or " : "", geak_sharedir());
		return -1;
	}
	if (!(body = geak_read_file(path, &len))) {
		set_err(err, errlen, "%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	if (text->len > 0)
		geak_buf_puts(text, "\n");
	geak_buf_append(text, body, len);
	if (len > 0 && body[len - 1] != '\n')
		geak_buf_puts(text, "\n");
	free(body);
	free(path);
	return 0;
}

char *
geak_knowledge_load(const char *pack_or_null, const char *dir_override,
	char **pack_used, char *err, size_t errlen)
{
	struct geak_buf text = { 0 };
	const char *pack = pack_or_null, *dir = dir_override;

	if (pack_used)
		*pack_used = NULL;
	if (!dir || !*dir)
		dir = getenv("GEAK_KNOWLEDGE");
	if (dir && !*dir)
		dir = NULL;
	if (!pack || !*pack || strcmp(pack, "auto") == 0)
		pack = detect_pack();
	if (!valid_name(pack)) {
		set_err(err, errlen, "knowledge pack '%s': a name is letters a-z, digits, '-', '_' and '.'",
			pack);
		return NULL;
	}
	if (append_pack(&text, dir, GENERAL_PACK, err, errlen) < 0 ||
	    (strcmp(pack, GENERAL_PACK) != 0 &&
	     append_pack(&text, dir, pack, err, errlen) < 0)) {
		geak_buf_free(&text);
		return NULL;
	}
	if (pack_used)
		*pack_used = geak_xstrdup(pack);
	return geak_buf_steal(&text);
}
