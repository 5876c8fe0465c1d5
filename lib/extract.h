/* extract.h: the code (and the model's thought/strategy) out of a reply.
 *
 * Tried in order: GEAK's JSON contract {"thought"|"strategy": ..., "code":
 * ...} (bare, inside a ```json fence, followed by prose, or with raw
 * newlines inside its strings); then the longest fenced code block
 * (```python, ```py or a bare fence); then the whole reply when it looks
 * like Python code.  Chat-template debris such as <|im_end|> is removed. */
#ifndef GEAK_EXTRACT_H
#define GEAK_EXTRACT_H

struct geak_extract {
	char *code;     /* NULL when no code was found */
	char *thought;  /* the JSON's "thought" or "strategy", or NULL */
	const char *how; /* "json", "fence", "raw" or NULL */
	const char *why; /* when code is NULL: what was wrong, in words */
};

/* Fill *ex from reply; free with geak_extract_free.  Returns 0 when code
 * was found, -1 otherwise. */
int geak_extract_code(const char *reply, struct geak_extract *ex);
void geak_extract_free(struct geak_extract *ex);

#endif
