/* corpus.h: retrieval corpora in the forms users have them, read into an
 * index builder (bm25.h):
 *   - a JSON array of objects with `code` and `description_1` (or
 *     `description`), as TritonBench's train_crawl.json;
 *   - JSON Lines, one object per line with `code`, and optionally `id`
 *     and `description` (or `description_1`);
 *   - a Python file, a directory of them (searched recursively), or a tar
 *     or zip archive of them (read in place, never extracted): every
 *     @triton.jit function becomes one entry (see geak_corpus_add_python).
 */
#ifndef GEAK_CORPUS_H
#define GEAK_CORPUS_H

#include <stddef.h>

#include "bench/bm25.h"

/* Largest single source file or member read, in bytes. */
#define GEAK_CORPUS_MAX_FILE (16u << 20)

/* Add every entry of the corpus at path.  Returns the number added, or -1
 * with "path: why" (and a line number for JSON Lines) in err. */
long geak_corpus_add(struct geak_index_builder *b, const char *path, char *err, size_t errlen);

/* Add the kernels of one Python source.  Each @triton.jit function
 * (with the decorators stacked above it) becomes an entry whose code is
 * the function, dedented, followed after two blank lines by the plain
 * function that launches it (`name[grid](...)`, else the first that names
 * it), when there is one.  Its description is the first non-empty of:
 * the kernel's docstring, the block of # comments right above its first
 * decorator (pragma and separator lines dropped), the wrapper's
 * docstring.  Its id is name:function, with #2,
 * #3, ... for a name defined again in the same file. */
size_t geak_corpus_add_python(struct geak_index_builder *b, const char *source,
	const char *name, const char *text, size_t len);

#endif
