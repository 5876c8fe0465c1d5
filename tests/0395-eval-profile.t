#!/bin/sh
# geak-eval --profile: a kernel profile of a correct candidate's largest
# performance case.  On the CPU there is no device timeline, and the
# record and the reflection prompt say so; the harness's breakdown of a
# profiler trace (launches, time, share and launch figures per kernel)
# is checked on a trace made here, and its message where torch's
# profiler sees no GPU.  tests/gpu/roofline-check.sh profiles on a GPU.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
plan 11

kernel='import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * FACTOR, mask=mask)


def double_it(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    double_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
    return out
'
cand() { # cand FACTOR
	code="FACTOR = $1
$kernel"
	jq -nc --arg code "$code" --arg sha "$(printf '%s' "$code" | sha256sum | cut -d' ' -f1)" \
		'{id: "plain/double_it", code: $code, code_sha: $sha, task: {suite: "plain", name: "double_it",
	instruction: "Double every element.",
	reference: "import torch\n\n\ndef double_it(x):\n    return x * 2\n",
	test: "import torch\n\n\ndef inputs():\n    return [(torch.randn(300, device=\"cuda\"),)]\n",
	perf: "import torch\n\n\ndef perf_inputs():\n    return [(torch.randn(1 << 12, device=\"cuda\"),), (torch.randn(1 << 14, device=\"cuda\"),)]\n",
	cpu_ok: true}}'
}
{ cand 2; cand 3; } > in.jsonl
geak-eval --cpu --no-cache --profile in.jsonl > out.jsonl 2> eval.err
check_same "geak-eval --profile on the CPU: exit 0" 0 $?
check_same "the right one passes, the wrong one does not" 'true false' \
	"$(jq -r .eval.exec out.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "the correct one's record says why there is no profile" \
	'{"available":false,"message":"no profiler: the CPU mode (Triton'"'"'s interpreter) has no device timeline to profile"}' \
	"$(jq -c 'select(.eval.exec) | .eval.profile' out.jsonl)"
check_same "a wrong candidate is not profiled" null "$(jq -c 'select(.eval.exec | not) | .eval.profile' out.jsonl)"
geak-eval --cpu --no-cache in.jsonl > plain.jsonl 2> plain.err
check_same "without --profile: no profile" 'false false' \
	"$(jq -r '.eval | has("profile")' plain.jsonl | tr '\n' ' ' | sed 's/ $//')"

cat > script.jsonl <<'EOS'
{"match": "its speed was not measured", "text": "```reflection\nfine\n```"}
EOS
start_llm script.jsonl
jq -c 'select(.eval.exec)' out.jsonl | geak-reflect > refl.jsonl 2> refl.err
check_same "geak-reflect: exit 0" 0 $?
check_match "the reflection prompt carries the absence message" \
	"Kernel profile: none \\(no profiler: the CPU mode \\(Triton's interpreter\\) has no device timeline to profile\\)\\." \
	"$(llm_prompt 1)"

# The harness's side: no GPU activity in this torch, and a trace's breakdown.
cat > kp.py <<'EOPY'
import json, os, sys, tempfile
sys.path.insert(0, os.path.join(os.environ["top"], "share", "harness"))
import torch, torch.profiler
from geakh import kprofile
print(kprofile.unavailable("cuda"))
trace = {"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "matmul_kernel", "dur": 90.0,
     "args": {"grid": [64, 1, 1], "block": [128, 1, 1], "registers per thread": 96,
              "shared memory": 32768, "est. achieved occupancy %": 12}},
    {"ph": "X", "cat": "kernel", "name": "add_kernel", "dur": 5.0, "args": {}},
    {"ph": "X", "cat": "kernel", "name": "add_kernel", "dur": 5.0, "args": {}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "dur": 400.0},
]}
class Fake:
    def __init__(self, **kw): pass
    def __enter__(self): return self
    def __exit__(self, *a): return False
    def export_chrome_trace(self, path):
        with open(path, "w") as fp: json.dump(trace, fp)
torch.profiler.profile = Fake
kprofile.unavailable = lambda device: None
class Job: dir = tempfile.mkdtemp(); device = "cuda"
calls = []
out = kprofile.run(Job, "7", lambda: calls.append("make") or 1, lambda x: calls.append("call"), lambda: None, calls=2)
print(json.dumps(out, sort_keys=True))
print(" ".join(calls), os.listdir(Job.dir))
EOPY
top=$top "$GEAK_PYTHON" kp.py > kp.out 2> kp.err
check_same "kprofile: ran" 0 $?
check_same "kprofile: a torch whose profiler sees no GPU says so" \
	"this torch's profiler sees no GPU activity (built without kineto's device support)" "$(sed -n 1p kp.out)"
check_same "kprofile: per kernel, per call, the longest first; CPU events left out" \
	'{"available":true,"calls":2,"case":"7","device_us":100,"kernels":[{"block":[128,1,1],"grid":[64,1,1],"launches":1,"name":"matmul_kernel","occupancy_pct":12,"registers":96,"share":0.9,"shared_bytes":32768,"us":90},{"launches":2,"name":"add_kernel","share":0.1,"us":10}],"launches":3,"others":{"kernels":0,"share":0},"tool":"torch.profiler"}' \
	"$(sed -n 2p kp.out | jq -cS .)"
check_same "kprofile: fresh inputs for each profiled call; the trace file removed" 'make call make call []' \
	"$(sed -n 3p kp.out)"
done_testing
