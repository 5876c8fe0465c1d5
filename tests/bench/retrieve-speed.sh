#!/bin/sh
# Retrieval speed: index build time, index load time, and median and 99th
# percentile query time, for the shared kernel corpus and for a synthetic
# corpus of 100,000 entries made here.  The baseline, measured in the same
# run, is a pipeline that indexes the raw corpus in memory at start-up
# instead of mapping a prebuilt index.
#
#   tests/bench/retrieve-speed.sh [ENTRIES]     (default 100000)
#
# Needs a built tree (make all units) and jq.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$top/bin:$top/tests/helpers:$PATH"
export PATH
GEAK_SHAREDIR="$top/share"
export GEAK_SHAREDIR
n=${1:-100000}
shared=$top/../shared
work=$(mktemp -d "${TMPDIR:-/tmp}/geak-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.3f", $2 - $1 }'; }

bench() {  # name corpus queries
	name=$1 corpus=$2 queries=$3
	t0=$(now)
	geak-retrieve --index "$work/$name.idx" -c "$corpus"
	t1=$(now)
	build=$(secs "$t0" "$t1")
	size=$(wc -c < "$work/$name.idx" | tr -d ' ')
	echo "$name: build ${build}s, index $size bytes"
	echo "$name: instruction $(bm25-bench "$work/$name.idx" "$queries" instruction)"
	jq -c '{task: {reference: .task.reference}, code: .task.reference}' "$queries" > "$work/code.jsonl"
	echo "$name: code        $(bm25-bench "$work/$name.idx" "$work/code.jsonl" code)"
	# One record through the whole tool: start-up dominates.
	head -n 1 "$queries" > "$work/one.jsonl"
	t0=$(now)
	geak-retrieve -c "$work/$name.idx" "$work/one.jsonl" > /dev/null
	t1=$(now)
	geak-retrieve -c "$corpus" "$work/one.jsonl" > /dev/null
	t2=$(now)
	idx=$(secs "$t0" "$t1") raw=$(secs "$t1" "$t2")
	echo "$name: one record: ${idx}s with the index, ${raw}s indexing the raw corpus" \
		"(baseline), ratio $(echo "$raw $idx" | awk '{ printf "%.1f", $1 / ($2 > 0 ? $2 : 0.001) }')"
}

if [ -f "$shared/corpus/triton-kernels.jsonl" ] && [ -f "$shared/bench/geak-eval-data.tar.gz" ]; then
	tar -xzf "$shared/bench/geak-eval-data.tar.gz" -O \
		GEAK-eval/geak_eval/data/TritonBench/data/TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json |
		jq -c '.[] | {task: {instruction, reference: .output}}' > "$work/tbg.jsonl"
	bench shared "$shared/corpus/triton-kernels.jsonl" "$work/tbg.jsonl"
else
	echo "shared: skipped (no $shared/corpus or bench data)"
fi

# A synthetic corpus: kernels built from a vocabulary of operation words,
# so that queries share words with many entries, as real ones do.
awk -v n="$n" 'BEGIN {
	srand(1)
	split("add mul sub div exp log max min sum mean norm softmax gelu silu relu tanh " \
	      "scale shift mask gather scatter reduce cumsum dot matmul transpose cast " \
	      "quant dequant rope rotary attention dropout embed bias residual clamp " \
	      "sigmoid swiglu topk sort hist pool conv", w, " ")
	nw = length(w)
	for (i = 0; i < n; i++) {
		a = w[int(rand() * nw) + 1]; b = w[int(rand() * nw) + 1]; c = w[int(rand() * nw) + 1]
		k = a "_" b "_kernel_" i
		code = "@triton.jit\\ndef " k "(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\\n" \
		    "    pid = tl.program_id(0)\\n" \
		    "    offs = pid * BLOCK + tl.arange(0, BLOCK)\\n" \
		    "    mask = offs < n\\n" \
		    "    x = tl.load(x_ptr + offs, mask=mask, other=0.0)\\n" \
		    "    y = tl." a "(x) * " int(rand() * 100) " + tl." b "(x)\\n" \
		    "    tl.store(y_ptr + offs, y.to(tl.float" (rand() < 0.5 ? 16 : 32) "), mask=mask)\\n\\n\\n" \
		    "def " a "_" b "(x):\\n    y = torch.empty_like(x)\\n" \
		    "    " k "[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)\\n    return y\\n"
		printf "{\"id\":\"syn/%d\",\"description\":\"Fused %s and %s with %s.\",\"code\":\"%s\"}\n", i, a, b, c, code
	}
}' > "$work/syn.jsonl"
awk 'NR % 500 == 1' "$work/syn.jsonl" |
	jq -c '{task: {instruction: ("Write a kernel that fuses " + (.description | ascii_downcase)), reference: .code}}' > "$work/synq.jsonl"
bench "synthetic-$n" "$work/syn.jsonl" "$work/synq.jsonl"
