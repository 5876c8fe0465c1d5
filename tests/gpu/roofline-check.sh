#!/bin/sh
# The roofline and the kernel profile on a GPU.  From the repository root,
# with the tools built (make):
#
#   sh tests/gpu/roofline-check.sh OUTDIR
#
# 1. Three plain tasks through geak-eval, each with a Triton candidate:
#    a vector add of 2^26 float32 (memory-bound), an 8192^3 float16
#    matmul (compute-bound) and a vector add of 1024 elements (latency-
#    bound); each case's class and fractions of the peaks are printed,
#    the candidate's and the reference's, and checked against the class
#    the kernel has by construction.
# 2. The matmul and the memory-bound vector add again with --profile:
#    their kernel breakdowns and, where ncu is found, their kernels'
#    hardware counters (the matmul's SM throughput must exceed its DRAM
#    throughput, the add's the other way round); then --ncu off, whose
#    record must say why there are none.
# 3. Where geak-gen, geak-reflect and geak-opt run (they need libcurl),
#    the vector add through three iterations of bin/geak-loop.sh with a
#    scripted model (tests/helpers/llm_server.py on loopback): iteration
#    2's optimize prompt must carry iteration 1's roofline figures, and
#    the report its roofline plot (OUTDIR/loop/report.html).
#
# Everything is kept in OUTDIR: records, stderr, the prompts the scripted
# model saw (loop/llm.log), and summary.txt with what was printed.
# Exit status: 0 when every class is as expected and the prompt carries
# the figures, 1 otherwise, 2 on bad usage.
set -u
top=$(pwd)
[ -x "$top/bin/geak-eval" ] || { echo "roofline-check.sh: run from the repository root after make" >&2; exit 2; }
[ $# -eq 1 ] || { echo "usage: sh tests/gpu/roofline-check.sh OUTDIR" >&2; exit 2; }
out=$1
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
PATH=$top/bin:$top/tests/helpers:$PATH GEAK_SHAREDIR=$top/share
GEAK_PYTHON=${GEAK_PYTHON:-$(command -v python3)}
export PATH GEAK_SHAREDIR GEAK_PYTHON
py=$GEAK_PYTHON
fails=0
say() { printf '%s\n' "$*" | tee -a "$out/summary.txt"; }
: > "$out/summary.txt"

"$py" - "$out" <<'EOPY'
import json, os, sys
out = sys.argv[1]
add = '''import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, out, n, BLOCK=BLOCK_SIZE, num_warps=4)
    return out
'''
mm = '''import torch
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    grid_m, grid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    width = GROUP * grid_n
    group = pid // width
    first_m = group * GROUP
    rows = min(grid_m - first_m, GROUP)
    pm = first_m + (pid % width) % rows
    pn = (pid % width) // rows
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK * sak
        b += BK * sbk
    c = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1), BM=128, BN=256, BK=64, GROUP=8, num_warps=8, num_stages=3)
    return c
'''
def perf(inputs, gbps, tflops):
    return ("import torch\n\n\ndef perf_inputs():\n    return " + inputs + "\n\n\n"
            "def gbps(args, ms):\n    return " + gbps + " / (ms * 1e6)\n\n\n"
            "def tflops(args, ms):\n    return " + tflops + " / (ms * 1e9)\n")
add_bytes = "3 * args[0].numel() * args[0].element_size()"
tasks = [
    ("vector_add", "memory", "add", "def add(x, y):\n    return x + y\n", add.replace("BLOCK_SIZE", "1024"),
     "[(torch.randn(1 << 26, device='cuda'), torch.randn(1 << 26, device='cuda'))]",
     perf("[(torch.randn(1 << 26, device='cuda'), torch.randn(1 << 26, device='cuda'))]",
          add_bytes, "args[0].numel()")),
    ("matmul", "compute", "matmul", "import torch\n\n\ndef matmul(a, b):\n    return a @ b\n", mm,
     "[(torch.randn(512, 512, device='cuda', dtype=torch.float16), torch.randn(512, 512, device='cuda', dtype=torch.float16))]",
     perf("[(torch.randn(8192, 8192, device='cuda', dtype=torch.float16), "
          "torch.randn(8192, 8192, device='cuda', dtype=torch.float16))]",
          "3 * args[0].numel() * 2", "2 * args[0].shape[0] * args[0].shape[1] * args[1].shape[1]")),
    ("tiny_add", "latency", "add", "def add(x, y):\n    return x + y\n", add.replace("BLOCK_SIZE", "128"),
     "[(torch.randn(1000, device='cuda'), torch.randn(1000, device='cuda'))]",
     perf("[(torch.randn(1024, device='cuda'), torch.randn(1024, device='cuda'))]",
          add_bytes, "args[0].numel()")),
]
with open(os.path.join(out, "tasks.jsonl"), "w") as f, open(os.path.join(out, "expect.txt"), "w") as e:
    for name, bound, fn, ref, code, test_inputs, perf_src in tasks:
        task = {"suite": "plain", "name": fn, "instruction": f"Write a Triton kernel and its wrapper {fn}.",
                "reference": "import torch\n\n\n" + ref if not ref.startswith("import") else ref,
                "test": "import torch\n\n\ndef inputs():\n    return " + test_inputs + "\n",
                "perf": perf_src, "signatures": [f"def {fn}(a, b)" if fn == "matmul" else f"def {fn}(x, y)"]}
        if fn == "matmul":  # sums of 512 half-precision products
            task["tolerance"] = {"rtol": 1e-2, "atol": 1e-2}
        f.write(json.dumps({"id": "plain/" + name, "task": task, "code": code}) + "\n")
        e.write(f"plain/{name} {bound}\n")
EOPY
[ $? -eq 0 ] || { echo "roofline-check.sh: could not write the tasks" >&2; exit 1; }

# 1. The classes.
say "== roofline classes (geak-eval)"
geak-eval -v "$out/tasks.jsonl" > "$out/evaluated.jsonl" 2> "$out/eval.err"
say "geak-eval: exit $?"
jq -r '"\(.id): exec \(.eval.exec), speedup \(.eval.speedup), device \(.eval.device), peaks \(.eval.peaks | tojson)",
	(.eval.shapes[]? | "  case \(.shape): \(.ms) ms (reference \(.ms_ref) ms), \(.gbps // "-") GB/s, \(.tflops // "-") TFLOP/s; " +
	 "\(.roofline.bound // "no class") (hbm \(.roofline.hbm), compute \(.roofline.compute)); " +
	 "reference \(.roofline.bound_ref // "no class") (hbm \(.roofline.hbm_ref), compute \(.roofline.compute_ref))")' \
	"$out/evaluated.jsonl" | tee -a "$out/summary.txt"
while read -r id want; do
	got=$(jq -r --arg id "$id" 'select(.id == $id) | [.eval.shapes[]?.roofline.bound] | join(",")' "$out/evaluated.jsonl")
	ref=$(jq -r --arg id "$id" 'select(.id == $id) | [.eval.shapes[]?.roofline.bound_ref] | join(",")' "$out/evaluated.jsonl")
	if [ "$got" = "$want" ] && [ "$ref" = "$want" ]; then
		say "ok: $id is $want-bound, and so is its reference"
	else
		say "NOT OK: $id: want $want-bound, got '$got' (reference '$ref')"
		fails=$((fails + 1))
	fi
done < "$out/expect.txt"

# 2. The kernel profile and the hardware counters.
say "== kernel profile (geak-eval --profile, the matmul)"
jq -c 'select(.id == "plain/matmul")' "$out/tasks.jsonl" > "$out/matmul.jsonl"
geak-eval --profile --no-cache "$out/matmul.jsonl" > "$out/profiled.jsonl" 2> "$out/profile.err"
say "geak-eval --profile: exit $?"
jq '.eval.profile' "$out/profiled.jsonl" | tee -a "$out/summary.txt"
if jq -e '.eval.profile.available == true and (.eval.profile.kernels | length) > 0' "$out/profiled.jsonl" >/dev/null; then
	say "ok: the matmul's kernels were profiled"
else
	say "NOT OK: no kernel profile (see above)"
	fails=$((fails + 1))
fi
# counted FILE CLASS: the first counted kernel's figures, and whether
# they lean the way the class says.
counted() {
	c=$(jq -c '.eval.profile.counters' "$1")
	say "counters: $c"
	if ! jq -e '.eval.profile.counters.available == true' "$1" >/dev/null; then
		say "NOT OK: no hardware counters ($(jq -r '.eval.profile.counters.message' "$1"))"
		fails=$((fails + 1))
		return
	fi
	lean=$(jq -r '.eval.profile.counters.kernels[0] | if .sm_pct > .dram_pct then "compute" else "memory" end' "$1")
	if [ "$lean" = "$2" ]; then
		say "ok: the counters lean $lean-bound, as the kernel is"
	else
		say "NOT OK: the counters lean $lean-bound, the kernel is $2-bound"
		fails=$((fails + 1))
	fi
}
counted "$out/profiled.jsonl" compute
jq -c 'select(.id == "plain/vector_add")' "$out/tasks.jsonl" > "$out/vadd.jsonl"
geak-eval --profile --no-cache "$out/vadd.jsonl" > "$out/vadd-profiled.jsonl" 2> "$out/vadd-profile.err"
say "geak-eval --profile (the vector add): exit $?"
counted "$out/vadd-profiled.jsonl" memory
geak-eval --profile --ncu off --no-cache "$out/vadd.jsonl" > "$out/vadd-off.jsonl" 2> "$out/vadd-off.err"
if jq -e '.eval.profile.counters.message == "no hardware counters: --ncu off"' "$out/vadd-off.jsonl" >/dev/null; then
	say "ok: --ncu off: the record says why there are no counters"
else
	say "NOT OK: --ncu off: $(jq -c .eval.profile.counters "$out/vadd-off.jsonl")"
	fails=$((fails + 1))
fi
same=$(jq -s '(.[0].eval.speedup != null) and (.[1].eval.speedup != null)' "$out/evaluated.jsonl" "$out/profiled.jsonl")
say "speedups: $(jq -r 'select(.id == "plain/matmul") | .eval.speedup' "$out/evaluated.jsonl") without, $(jq -r .eval.speedup "$out/profiled.jsonl") with --profile (both measured: $same)"

# 3. Three iterations with a scripted model.
say "== loop (three iterations, scripted model)"
if ! geak-gen --help >/dev/null 2>&1 || ! geak-opt --help >/dev/null 2>&1; then
	say "skipped: geak-gen or geak-opt does not run here (libcurl?)"
else
	loop=$out/loop
	rm -rf "$loop"
	mkdir -p "$loop"
	jq -c 'select(.id == "plain/vector_add") | del(.code)' "$out/tasks.jsonl" > "$loop/tasks.jsonl"
	"$py" - "$out/tasks.jsonl" "$loop/script.jsonl" <<'EOPY'
import json, sys
code = [json.loads(l) for l in open(sys.argv[1]) if '"plain/vector_add"' in l][0]["code"]
lines = [
    {"match": "was timed against the reference", "text": "```reflection\nOne pass over memory.\n```"},
    {"match": "correct implementations of this task found so far",
     "text": json.dumps({"strategy": "larger blocks", "code": code.replace("num_warps=4", "num_warps=8")})},
    {"text": json.dumps({"thought": "a masked add", "code": code})},
]
with open(sys.argv[2], "w") as f:
    for l in lines:
        f.write(json.dumps(l) + "\n")
EOPY
	"$py" "$top/tests/helpers/llm_server.py" --script "$loop/script.jsonl" --port-file "$loop/llm.port" \
		--log "$loop/llm.log" > "$loop/llm.out" 2>&1 &
	srv=$!
	n=0
	while [ ! -s "$loop/llm.port" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
	GEAK_BASE_URL=http://127.0.0.1:$(cat "$loop/llm.port")/v1 GEAK_MODEL=scripted GEAK_PROVIDER=openai \
		sh "$top/bin/geak-loop.sh" -v -n 3 -o "$loop/run" "$loop/tasks.jsonl" 2> "$loop/loop.err"
	rc=$?
	say "geak-loop: exit $rc"
	[ $rc -eq 0 ] || tail -n 15 "$loop/loop.err" | tee -a "$out/summary.txt"
	kill "$srv" 2>/dev/null
	cp "$loop/run/report.html" "$loop/report.html" 2>/dev/null
	jq -r '.body.messages[0].content | select(contains("correct implementations of this task found so far"))' "$loop/llm.log" \
		> "$loop/optimize-prompts.txt"
	say "optimize prompts: $(grep -c 'correct implementations of this task found so far' "$loop/optimize-prompts.txt")"
	grep -A4 "Against the device's roofs" "$loop/optimize-prompts.txt" | tee -a "$out/summary.txt"
	if grep -q "of HBM bandwidth, the reference .*memory-bound" "$loop/optimize-prompts.txt"; then
		say "ok: the optimize prompts carry the roofline figures"
	else
		say "NOT OK: no roofline figures in the optimize prompts"
		fails=$((fails + 1))
	fi
	if grep -q "Roofline: plain/vector_add" "$loop/report.html" 2>/dev/null; then
		say "ok: the report has the roofline plot ($loop/report.html)"
	else
		say "NOT OK: no roofline plot in the report"
		fails=$((fails + 1))
	fi
fi
say "== $fails failed"
[ "$fails" -eq 0 ]
