#!/bin/sh
# What KernelBench costs in geak-eval's CPU mode, the measurements behind
# geak-import(1)'s CPU rule: Triton's interpreter's rate on an
# elementwise kernel (elements a second, for two block sizes), then a
# sample of level-1 references (IDS, default five of the smaller ones)
# each run against itself by geak-eval --cpu -j 1 --static off, with the
# seconds each took and how it ended.
#
#   tests/bench/kernelbench-cpu.sh [kernelbench-data.tar.gz [IDS]]
#
# The sample takes about ten minutes on 2 cores and up to 10 GB of memory.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$top/../shared/bench/kernelbench-data.tar.gz}
ids=${2:-level1/12_Matmul_with_diagonal_matrices_,level1/40_LayerNorm,level1/88_MinGPTNewGelu,level1/72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_,level1/81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____strided__}
: "${GEAK_SHAREDIR:=$top/share}" "${GEAK_PYTHON:=$top/.venv/bin/python}"
export GEAK_SHAREDIR GEAK_PYTHON
tmp=$(mktemp -d "${TMPDIR:-/tmp}/geak-kbcpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "== the interpreter, one core"
"$GEAK_PYTHON" - <<'PY' || exit 3
import os, time
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
torch.set_num_threads(1)

@triton.jit
def relu(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    m = o < n
    tl.store(y + o, tl.maximum(tl.load(x + o, mask=m), 0.0), mask=m)

for n, B in ((1 << 20, 1024), (1 << 22, 4096)):
    x = torch.rand(n)
    y = torch.empty_like(x)
    t = time.time()
    relu[(triton.cdiv(n, B),)](x, y, n, B=B)
    dt = time.time() - t
    print(f"relu, {n} elements, BLOCK {B}: {dt:.2f} s, {n / dt / 1e6:.1f} M elements/s")
PY

echo "== references against themselves: geak-eval --cpu -j 1 --static off --no-cache"
"$top/bin/geak-import" --as-candidate --ids "$ids" "$src" > "$tmp/in.jsonl" 2> "$tmp/import.txt" ||
	{ cat "$tmp/import.txt" >&2; exit 3; }
start=$(date +%s)
"$top/bin/geak-eval" --cpu -j 1 --static off --no-cache -v "$tmp/in.jsonl" > "$tmp/out.jsonl" 2> "$tmp/trace.txt"
echo "geak-eval: exit $?, $(($(date +%s) - start)) s for $(grep -c . "$tmp/in.jsonl") references"
"$GEAK_PYTHON" - "$tmp/in.jsonl" "$tmp/out.jsonl" "$tmp/trace.txt" <<'PY'
import json, re, sys
elems = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    elems[r["id"]] = r["task"].get("input_elements")
start, end = {}, {}
for line in open(sys.argv[3]):
    m = re.match(r"geak-eval:\s+([\d.]+) s: slot \d+: \S+ \((\S+)\): (started|finished)", line)
    if m:
        (start if m.group(3) == "started" else end)[m.group(2)] = float(m.group(1))
for line in open(sys.argv[2]):
    r = json.loads(line)
    i = r.get("id")
    ev = r.get("eval") or {}
    how = (r.get("error") or {}).get("message") or f"{ev.get('reason')}: {ev.get('message')}"
    took = end.get(i, 0) - start.get(i, 0)
    print(f"{i}: {elems.get(i)} input elements, {took:.0f} s, {how[:120]}")
PY
