#!/bin/sh
# geak-eval --profile: a kernel profile of a correct candidate's largest
# performance case.  On the CPU there is no device timeline, and the
# record and the reflection prompt say so; the harness's breakdown of a
# profiler trace (launches, time, share and launch figures per kernel)
# is checked on a trace made here, and its message where torch's
# profiler sees no GPU.  The hardware counters (geakh/counters.py) are
# read through a stand-in for ncu (tests/helpers/fake-ncu.sh) that runs
# the real target in the CPU mode: the figures, their means and units,
# the profiler's failure and an unreached case; the prompts show them.
# tests/gpu/roofline-check.sh profiles and reads the counters on a GPU.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
plan 23

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

# The counters: the target is the job's own code, run again by "ncu".
printf '%s' "FACTOR = 2
$kernel" > kernel.py
cat > ct.py <<'EOPY'
import json, os, sys, tempfile
sys.path.insert(0, os.path.join(os.environ["top"], "share", "harness"))
os.environ["TRITON_INTERPRET"] = "1"
from geakh import counters
spec = {"suite": "plain", "name": "double_it", "cpu": True, "code": open("kernel.py").read(),
        "reference": "def double_it(x):\n    return x * 2\n",
        "test": "import torch\n\n\ndef inputs():\n    return [(torch.randn(300),)]\n",
        "perf": "import torch\n\n\ndef perf_inputs():\n    return [(torch.randn(1 << 10),), (torch.randn(1 << 12),)]\n",
        "seeds": [42]}
class Job: dir = tempfile.mkdtemp(dir="."); device = "cpu"
json.dump(spec, open(os.path.join(Job.dir, "job.json"), "w"))
ncu = os.path.join(os.environ["top"], "tests", "helpers", "fake-ncu.sh")
got = counters.run(Job, "1", ncu, [])
print(json.dumps(got, sort_keys=True))
print(json.dumps(json.load(open(os.path.join(Job.dir, "counters", "target.json"))), sort_keys=True))
print(json.dumps(counters.run(Job, "9", ncu, []), sort_keys=True))
os.environ["FAKE_NCU_FAIL"] = "ERR_NVGPUCTRPERM - no permission to read the counters"
print(json.dumps(counters.run(Job, "1", ncu, []), sort_keys=True))
del os.environ["FAKE_NCU_FAIL"]
import time
os.environ["FAKE_NCU_HANG"] = "31339.5"
t0 = time.monotonic()
hung = counters.run(Job, "1", ncu, [], timeout_s=2)
print(json.dumps(dict(hung, took=round(time.monotonic() - t0)), sort_keys=True))
del os.environ["FAKE_NCU_HANG"]
prof = {"available": True, "case": "1", "tool": "torch.profiler", "calls": 3, "launches": 1,
        "device_us": 4.0, "kernels": [{"name": "double_kernel", "launches": 1, "us": 3.0, "share": 0.75},
                                      {"name": "other", "launches": 1, "us": 1.0, "share": 0.25}]}
print(json.dumps(counters.merge(prof, got), sort_keys=True))
EOPY
top=$top "$GEAK_PYTHON" ct.py > ct.out 2> ct.err
check_same "counters: ran" 0 $?
check_same "counters: per kernel, the mean of its launches, in us, %, GB/s" \
	'{"dram_gbps":3200,"dram_pct":85,"duration_us":1500.5,"l2_hit_pct":40,"launches":2,"memory_pct":88,"name":"double_kernel","occupancy_pct":75,"occupancy_theoretical_pct":100,"registers":32,"sm_pct":12.5}' \
	"$(sed -n 1p ct.out | jq -cS '.kernels[0]')"
check_same "counters: the tool, its version and the case" 'true ncu Version 0.0.0 (stand-in) 1' \
	"$(sed -n 1p ct.out | jq -r '"\(.available) \(.tool) \(.version) \(.case)"')"
check_same "counters: the target reached the case, profiled one call, and says what it launched" \
	'{"case":"1","kernels":["double_kernel"],"launches":1,"profiled":1}' "$(sed -n 2p ct.out | jq -cS .)"
check_same "counters: a case the target never reaches is said so" \
	'false: the profiled run failed: case 9 was not reached' \
	"$(sed -n 3p ct.out | jq -r '"\(.available): \(.message)"')"
check_match "counters: the profiler's own failure is quoted" \
	'^false: ncu failed \(exit 1\): ==ERROR== ERR_NVGPUCTRPERM' \
	"$(sed -n 4p ct.out | jq -r '"\(.available): \(.message)"')"
check_same "counters: a profiler that runs past its time is stopped there, with all it started" \
	'false: ncu ran past its 2 s (half of --timeout); took 2 s; left 0' \
	"$(sed -n 5p ct.out | jq -r '"\(.available): \(.message); took \(.took) s"'); left $(ps -eo args | grep -c '^sleep 31339.5')"
check_same "counters: merged into the kernel of the same name only" '12.5 null' \
	"$(sed -n 6p ct.out | jq -r '[.kernels[].counters.sm_pct] | map(tostring) | join(" ")')"

# The prompts: a record whose profile carries counters, and one whose
# profiler could not read them.
sed -n 6p ct.out > prof.json
jq -c --slurpfile p prof.json 'select(.eval.exec) | .eval.profile = $p[0]' out.jsonl > counted.jsonl
jq -c '.eval.profile.counters = {available: false, tool: "ncu", message: "ncu failed (exit 1): ERR_NVGPUCTRPERM"}
	| del(.eval.profile.kernels[0].counters)' counted.jsonl > uncounted.jsonl
cat > script2.jsonl <<'EOS'
{"match": "its speed was not measured", "text": "```reflection\nfine\n```"}
{"match": "its speed was not measured", "text": "```reflection\nfine\n```"}
EOS
kill "$llm_pid" 2>/dev/null; wait "$llm_pid" 2>/dev/null
start_llm script2.jsonl
cat counted.jsonl uncounted.jsonl | geak-reflect > refl2.jsonl 2> refl2.err
check_same "geak-reflect on profiles with counters: exit 0" 0 $?
check_match "the prompt gives a kernel's counters beside its timeline" \
	'\* 75% double_kernel: 1 launch, 3\.0 us; counters: SM 12%, memory 88%, DRAM 85%, L2 hit 40%, 3200 GB/s DRAM, achieved occupancy 75% of 100%' \
	"$(llm_prompt_with '* hardware counters: ncu')"
check_match "and where they come from" '\* hardware counters: ncu \(Version 0\.0\.0 \(stand-in\)\), % of the device'"'"'s peak' \
	"$(llm_prompt_with 'counters: SM')"
check_match "a profiler that could not read them: the prompt says why, and shows none" \
	'^\* 75% double_kernel: 1 launch, 3\.0 us\*\* 25% other: 1 launch, 1\.0 us\*\* hardware counters: none \(ncu failed \(exit 1\): ERR_NVGPUCTRPERM\)' \
	"$(llm_prompt_with '* hardware counters: none' | grep '^\* ' | tr '\n' '*')"
done_testing
