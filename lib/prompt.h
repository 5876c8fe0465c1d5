/* prompt.h: prompt templates from files, filled from a JSON object.
 *
 * Template syntax (documented for users in geak-gen(1)):
 *	{{name}}            the value of name (a string, number or boolean;
 *	                    nothing when absent or null); dotted paths reach
 *	                    into objects: {{eval.message}}
 *	{{#name}}...{{/name}}  the part inside, only when name is "truthy"
 *	                    (not absent, null, false, "", 0 or []); over an
 *	                    array it repeats once per element, and inside it
 *	                    {{.}} is the element, {{field}} a field of an
 *	                    object element, {{@index}} the index from 0 and
 *	                    {{@number}} from 1
 *	{{^name}}...{{/name}}  the part inside, only when name is not truthy
 *	{{> file}}          another template file from the same search path
 *	{{! comment }}      nothing
 * Values are inserted as they are: no escaping.  Unknown names are empty,
 * so a template can use fields a tool does not fill; an unclosed section
 * or a missing included file is an error.
 *
 * Search path for a template name: the directory given by the tool's
 * --prompts flag, else $GEAK_PROMPTS, else geak_sharedir()/prompts. */
#ifndef GEAK_PROMPT_H
#define GEAK_PROMPT_H

#include <jansson.h>

/* Path of template name (caller frees). */
char *geak_prompt_path(const char *dir, const char *name);

/* Render tmpl with vars (a JSON object; borrowed).  dir is the --prompts
 * directory for {{> file}} (may be NULL).  NULL on error, with a message
 * in *err (caller frees). */
char *geak_prompt_render(const char *tmpl, json_t *vars, const char *dir, char **err);

/* Load template name along the search path and render it. */
char *geak_prompt_render_file(const char *dir, const char *name, json_t *vars, char **err);

#endif
