#!/bin/sh
# GEAK's method in the loop, with real evaluation (the CPU interpreter)
# and a scripted model over the chat API:
#  - the debug prompt shows the trimmed traceback of a candidate that did
#    not run (its own frame, the exception) and the judge's account of a
#    wrong one, and so does the reflection's;
#  - the 1-shot example of a debug attempt is retrieved again, by the code;
#  - --max-debug 2 gives a failing lineage two debug rounds, then a fresh
#    start;
#  - every request carries the temperature, 1.0;
#  - without a measured speed no optimize-mode request is made.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
export top

# Task B: double every element; the model always multiplies by 3.
python3 - <<'EOPY'
import json, os
kernel = '''import torch
import triton
import triton.language as tl
# triple attempt


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 3.0, mask=mask)


def double_it(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    double_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out
'''
task = {"id": "plain/double_it", "task": {"suite": "plain", "name": "double_it",
    "instruction": "Write a Triton kernel and a wrapper double_it(x) that doubles every element of a 1-D tensor.",
    "reference": "import torch\n\n\ndef double_it(x):\n    return x * 2\n",
    "test": "import torch\n\n\ndef inputs():\n    return [(torch.randn(300, device='cuda'),)]\n",
    "cpu_ok": True, "signatures": ["def double_it(x)"]}}
top = os.environ["top"]
with open("tasks.jsonl", "w") as f:
    f.write(open(top + "/examples/demo/task.jsonl").read())
    f.write(json.dumps(task) + "\n")
with open("script.jsonl", "w") as f:
    f.write(json.dumps({"match": "The runnable test checks",
        "text": "```reflection\nThe kernel multiplies by 3, not 2.\n```"}) + "\n")
    f.write(json.dumps({"match": "doubles every element",
        "text": json.dumps({"thought": "scale", "code": kernel})}) + "\n")
    f.write(open(top + "/examples/demo/script.jsonl").read())
EOPY
start_llm script.jsonl
plan 14
GEAK_OPT_FLAGS="--max-debug 2"
export GEAK_OPT_FLAGS
A='select(.id == "plain/scaled_softmax")'
B='select(.id == "plain/double_it")'

"$top/bin/geak-loop.sh" -i 4 -o out tasks.jsonl 2> loop.err
check_same "the loop finishes" 0 $?

# The traceback: A's first attempt does not compile on the interpreter.
tb=$(jq -r "$A | .eval.traceback" out/evaluated-0.jsonl)
check_match "the evaluator gives A's trimmed traceback" 'scaled_softmax.py", line [0-9]+, in scaled_softmax' "$tb"
prompt_a=$(jq -r '.body.messages[0].content | select(contains("**Previous attempt:**") and contains("scaled_softmax"))' llm.log)
check_match "A's debug prompt: its own frame" 'scaled_softmax.py", line [0-9]+, in scaled_softmax' "$prompt_a"
check_match "A's debug prompt: the exception" "has no attribute 'libdevice'" "$prompt_a"
check_match "A's reflection prompt: the same traceback" 'scaled_softmax.py", line [0-9]+, in scaled_softmax' \
	"$(llm_prompt_with 'the run failed')"
jq -r "$B | .eval.message" out/evaluated-0.jsonl | head -n 1 > msg_b
jq -r '.body.messages[0].content | select(contains("**Previous attempt:**") and contains("double_it"))' \
	llm.log > prompt_b
shows() { ! grep -qx null "$1" && grep -qF -f "$1" "$2"; }
check "B's debug prompt: the judge's account of the mismatch" shows msg_b prompt_b

# The example: by the instruction first, by the code for a debug attempt.
check_same "A's example: by instruction, then by code" 'instruction code' \
	"$(jq -r "$A | .oneshot.mode" out/iter-0.jsonl out/iter-1.jsonl | tr '\n' ' ' | sed 's/ $//')"
jq -r "$A | .oneshot.code" out/iter-1.jsonl | grep -m 1 '^def ' > example_a
printf '%s\n' "$prompt_a" > prompt_a
check "A's debug prompt shows the example found by its code" grep -qF -f example_a prompt_a

# The cap: two debug rounds, then a fresh start.
check_same "B: first, two debug rounds, a fresh start" 'first debug debug first' \
	"$(jq -r "$B | .mode" out/iter-0.jsonl out/iter-1.jsonl out/iter-2.jsonl out/iter-3.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "B: the failures counted" '1 2 0' \
	"$(jq -r "$B | .perf_debug" out/iter-1.jsonl out/iter-2.jsonl out/iter-3.jsonl | tr '\n' ' ' | sed 's/ $//')"

# Temperature, and no optimisation without a speed.
check_same "every request body carries temperature 1.0" 'true' \
	"$(jq -s 'all(.[]; .body.temperature == 1)' llm.log)"
check_same "every request body names it" "$(wc -l < llm.log | tr -d ' ')" \
	"$(jq -r 'select(.body | has("temperature")) | .n' llm.log | wc -l | tr -d ' ')"
check_same "no optimize-mode request: no speed was measured" 0 \
	"$(jq -r '.body.messages[0].content | select(contains("correct implementations of this task found so far")) | "x"' llm.log | wc -l | tr -d ' ')"
check_same "A rests on its correct kernel" 'true true true' \
	"$(jq -r "$A | .eval.exec" out/evaluated-1.jsonl out/evaluated-2.jsonl out/evaluated-3.jsonl | tr '\n' ' ' | sed 's/ $//')"
done_testing
