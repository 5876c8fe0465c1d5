/* knowledge.h: knowledge packs, the hardware and Triton advice that
 * geak-gen puts into its prompts.
 *
 * A pack is a text file <name>.md in the knowledge directory: "triton"
 * holds the rules that hold on every GPU, and one pack per target holds
 * that hardware's facts and vendor advice ("mi300x", "mi250", "h100",
 * "h200", ..., and "generic" for an unknown GPU). */
#ifndef GEAK_KNOWLEDGE_H
#define GEAK_KNOWLEDGE_H

#include <stddef.h>
#include <jansson.h>

/* The text to inject for a target: triton.md, a blank line, then
 * <pack>.md.  pack_or_null names the pack; NULL, "" or "auto" picks it
 * from the first GPU geak_gpu_list reports (see geak_knowledge_pack_for),
 * else "generic".  Each file is looked up in dir_override, else in
 * $GEAK_KNOWLEDGE, else in geak_sharedir()/knowledge (a file missing from
 * the override directory falls back to the shipped one).  A pack name may
 * hold only [a-z0-9_.-] and must not start with '.'.
 *
 * Returns the text (caller frees) and sets *pack_used (caller frees; may
 * be NULL to ignore) to the pack's name.  On failure (bad name, pack not
 * found, unreadable file) returns NULL with "what: why" in err. */
char *geak_knowledge_load(const char *pack_or_null, const char *dir_override,
	char **pack_used, char *err, size_t errlen);

/* The pack name for one GPU object from geak_gpu_list: by arch
 * (gfx942 -> "mi300x", gfx90a -> "mi250", sm_90 -> "h100" or "h200" by
 * name, ...), else "generic".  Returns a static string. */
const char *geak_knowledge_pack_for(const json_t *gpu);

#endif
