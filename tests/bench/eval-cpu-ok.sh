#!/bin/sh
# Measure which TritonBench-revised references run on Triton's CPU
# interpreter under geak-eval --cpu, and print share/bench/cpu-ok.txt: the
# header says how, then one task id per line.  Each reference runs twice
# (seed 42) as the reference of a stub candidate; a task is listed when
# both runs finish without error.  About 15 minutes on 2 cores.
#
#   tests/bench/eval-cpu-ok.sh [geak-eval-data.tar.gz] > share/bench/cpu-ok.txt
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$top/../shared/bench/geak-eval-data.tar.gz}
: "${GEAK_SHAREDIR:=$top/share}" "${GEAK_PYTHON:=$top/.venv/bin/python}"
export GEAK_SHAREDIR GEAK_PYTHON
flags="--cpu -j 2 --seeds 1 --timeout 20 --compile-timeout 40 --no-cache"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/geak-cpuok.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$top/bin/geak-import" --suite tbg --as-candidate "$src" |
	jq -c '.code = "import torch\n"' > "$tmp/in.jsonl" || exit 3
# shellcheck disable=SC2086  # flags split on purpose
"$top/bin/geak-eval" $flags "$tmp/in.jsonl" > "$tmp/out.jsonl" 2> "$tmp/err.txt"
[ $? -le 1 ] || { cat "$tmp/err.txt" >&2; exit 3; }
jq -r 'select(.error == null and .eval.reason != "harness") | .id' "$tmp/out.jsonl" | sort > "$tmp/ok.txt"
versions=$("$GEAK_PYTHON" -c 'import sys, torch, triton, numpy
print("Python", sys.version.split()[0] + ", torch", torch.__version__ + ", triton", triton.__version__ + ", numpy", numpy.__version__)')
cat <<HEAD
# TritonBench-revised tasks whose reference runs on Triton's CPU interpreter
# under geak-eval --cpu: $(grep -c . "$tmp/ok.txt") of $(grep -c . "$tmp/in.jsonl"), measured $(date -u +%Y-%m-%d)
# with $versions, $(nproc) cores, by tests/bench/eval-cpu-ok.sh
# (geak-eval $flags; each reference run twice with seed 42, both without error).
# geak-import reads this file to set task.cpu_ok.
HEAD
cat "$tmp/ok.txt"
