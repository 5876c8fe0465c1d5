/* kbprob.h: what a KernelBench problem file says without running it: the
 * docstring of its Model, the torch operators Model uses, the tensors that
 * get_inputs() makes with their shapes and dtypes, and the values that
 * get_init_inputs() passes to the constructor.
 *
 * The files follow one pattern: module-level constants (integer and
 * float arithmetic, tuples), class Model(nn.Module), and the two
 * functions returning lists.  Reading that pattern statically is enough
 * to write an instruction from it; what does not fit (a shape computed by
 * a call, a value from another module) comes out as written, marked as
 * not read. */
#ifndef GEAK_KBPROB_H
#define GEAK_KBPROB_H

#include <jansson.h>

/* The problem read from src, as a JSON object:
 *   "description": Model's docstring, white space folded (or absent)
 *   "operators":   ["nn.Linear", "torch.matmul", "F.softmax", ...], in
 *                  source order, each once
 *   "inputs":      [{"name", "dtype", "shape": [int...] or null,
 *                    "text": the expression that makes it (the right
 *                    side of its assignment, for a named one)}], in the
 *                  order get_inputs() returns them; a non-tensor item
 *                  has "value" instead of "dtype" and "shape"
 *   "init":        [{"text", "value" (number, list, or null when not
 *                    read)}], in the order get_init_inputs() returns them
 *   "input_elements": the inputs' total element count, or null when some
 *                  shape was not read
 *   "init_signature", "forward_signature": Model's "def __init__(...)"
 *                  and "def forward(...)" lines (absent when not found)
 * Never NULL; a part that is missing is an empty list. */
json_t *geak_kbprob_read(const char *src);

#endif
