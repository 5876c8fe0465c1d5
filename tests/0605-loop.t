#!/bin/sh
# The whole loop, end to end, with real evaluation (Triton; the CPU
# interpreter here) and a scripted model over the real chat API:
#  task A (the demo task): a first attempt that does not compile, a fix
#    after reflection, a correct kernel, then an optimize-mode successor;
#  task B: a model stuck on wrong kernels, whose lineage must hit the
#    debugging-trap cap (--max-debug 1: one debug round) and start over.
# No speed is measured on the CPU: --unmeasured asks the optimiser anyway.
# The loop's decisions, the final selection and the metrics are checked
# against values worked out by hand.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
export top

# Task B: double every element.
python3 - <<'EOPY'
import json
kernel = '''import torch
import triton
import triton.language as tl
# row_scale attempt {n}


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * {factor}, mask=mask)


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
    "perf": "import torch\n\n\ndef perf_inputs():\n    return [(torch.randn(1 << 20, device='cuda'),)]\n",
    "difficulty": 1, "cpu_ok": True, "signatures": ["def double_it(x)"]}}
with open("tasks.jsonl", "w") as f:
    f.write(open("TOP/examples/demo/task.jsonl".replace("TOP", __import__("os").environ["top"])).read())
    f.write(json.dumps(task) + "\n")
wrong = lambda n, factor: json.dumps({"thought": "scale by two",
    "code": kernel.replace("{n}", str(n)).replace("{factor}", factor)})
lines = [
    {"match": "The runnable test checks", "text": "```reflection\nThe kernel multiplies by the wrong factor.\n```"},
    {"match": "# row_scale attempt", "text": wrong(2, "2.5")},
    {"match": "doubles every element", "text": wrong(1, "3.0")},
]
with open("script.jsonl", "w") as f:
    for l in lines:
        f.write(json.dumps(l) + "\n")
    f.write(open(__import__("os").environ["top"] + "/examples/demo/script.jsonl").read())
EOPY
start_llm script.jsonl
plan 26
GEAK_OPT_FLAGS="--max-debug 1 --unmeasured"
GEAK_RETRIEVE_FLAGS=
export GEAK_OPT_FLAGS GEAK_RETRIEVE_FLAGS

"$top/bin/geak-loop.sh" -i 3 -o out tasks.jsonl 2> loop.err
check_same "the loop finishes" 0 $?
A='select(.id == "plain/scaled_softmax")'
B='select(.id == "plain/double_it")'

check_same "iteration 0: A does not run, B runs but is wrong" 'false false|true false' \
	"$(jq -r '"\(.eval.call) \(.eval.exec)"' out/evaluated-0.jsonl | tr '\n' '|' | sed 's/|$//')"
check_same "A's failure is reflected on" 'true' \
	"$(jq -r "$A | .history[0].reflection | test(\"tl.libdevice\")" out/iter-1.jsonl)"
check_same "A is debugged with its reflection in the prompt" 1 \
	"$(llm_prompt_with 'Reflection on the previous attempt' | grep -c 'with `tl.exp(x)`' )"
check_same "iteration 1: both debugged, each failure counted (v2 rule)" 'debug 1|debug 1' \
	"$(jq -r '"\(.mode) \(.perf_debug)"' out/iter-1.jsonl | tr '\n' '|' | sed 's/|$//')"
check_same "iteration 1: A's fix passes, B still wrong" 'true|false' \
	"$(jq -r '.eval.exec' out/evaluated-1.jsonl | tr '\n' '|' | sed 's/|$//')"
v2=$(jq -r "$A | .code_sha" out/evaluated-1.jsonl)
check_same "A: the correct kernel enters best" "[\"$v2\"]" "$(jq -c "$A | [.best[].code_sha]" out/iter-2.jsonl)"
check_same "A: next is an optimize-mode candidate" 'optimize 2' \
	"$(jq -r "$A | \"\(.mode) \(.iter)\"" out/iter-2.jsonl)"
check_match "A: the optimizer saw the kernel and its analysis" 'Implementation 1.*Analysis:.*one program per row' \
	"$(llm_prompt_with 'correct implementations of this task found so far' | tr '\n' ' ')"
check_match "A: told that the order is not by speed" 'in the order they were found. Their speed was not measured' \
	"$(llm_prompt_with 'correct implementations of this task found so far' | tr '\n' ' ')"
check_same "B: the cap of 1 drops the lineage: a fresh first attempt" 'first 0 2' \
	"$(jq -r "$B | \"\(.mode) \(.perf_debug) \(.iter)\"" out/iter-2.jsonl)"
check_same "B: its history keeps both failed attempts" '[false,false]' \
	"$(jq -c "$B | [.history[].exec]" out/iter-2.jsonl)"
check_same "B: two first-attempt prompts were sent" 2 \
	"$(jq -r '.body.messages[0].content | select(contains("doubles every element")
		and (contains("Previous attempt") | not) and contains("**Request:**")) | "x"' llm.log | wc -l | tr -d ' ')"
check_same "iteration 2: A's optimized kernel passes too" 'true' \
	"$(jq -r "$A | .eval.exec" out/evaluated-2.jsonl)"
check_same "the provider was checked first, once" '1 1' \
	"$(jq -r 'select(.body.messages[0].content == "Reply with the single word: ok") | .n' llm.log | tr '\n' ' ')$(
	jq -r 'select(.body.messages[0].content == "Reply with the single word: ok")' llm.log | jq -s length)"
check_same "calls: A 5 (first, reflect, debug, reflect, optimize), B 5" 10 \
	"$(jq -r 'select(.body.messages[0].content != "Reply with the single word: ok") | .n' llm.log | wc -l | tr -d ' ')"

# Selection and metrics: A passes, B never does.
check_same "two picks" 2 "$(wc -l < out/best.jsonl | tr -d ' ')"
sel=$(jq -c "$A | .selected" out/best.jsonl)
if [ "$(printf '%s' "$sel" | jq .speedup)" = null ]; then
	# No timings (CPU): equal candidates, the earlier one is chosen.
	check_same "A: the first correct kernel is selected" "\"$v2\" 1" \
		"$(printf '%s' "$sel" | jq -r '"\(.code_sha | tojson) \(.iter)"')"
else
	check_match "A: a measured correct kernel is selected" '"exec":true' "$sel"
fi
check_same "B: nothing correct to select" 'false true' \
	"$(jq -r "$B | \"\(.selected.exec) \(.selected.call)\"" out/best.jsonl)"
s() { jq -c "$1" out/summary.json; }
check_same "call accuracy 2/2" 1 "$(s .call_accuracy)"
check_same "exec accuracy 1/2" 0.5 "$(s .exec_accuracy)"
check_same "pass@1 over one run: exec 0.5" 0.5 "$(s '.pass_at_k[0].exec')"
check_same "by iteration: call and exec" '[[0,0.5,0],[1,1,0.5],[2,1,0.5]]' \
	"$(s '[.by_iter[] | [.iter, .call_accuracy, .exec_accuracy]]')"
check_same "tokens: every call counted" 10 "$(s .usage.calls)"
check_match "report written" '<svg' "$(cat out/report.html)"
check_same "no temporary files left" '' "$(ls out | grep '\.tmp' || true)"
done_testing
