#!/bin/sh
# geak-eval throughput on this machine: candidates per minute with a cold
# cache (every reference and candidate evaluated) and a warm one (every
# result from the cache), for N distinct candidates of the plain task
# "add" (tests/cheats/add_*.py) at -j J.  On a machine without a GPU this
# measures the CPU mode (Triton's interpreter).
#
#   tests/bench/eval-cache.sh [N [J]]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-8} j=${2:-2}
: "${GEAK_SHAREDIR:=$top/share}" "${GEAK_PYTHON:=$top/.venv/bin/python}"
export GEAK_SHAREDIR GEAK_PYTHON
tmp=$(mktemp -d "${TMPDIR:-/tmp}/geak-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
c=$top/tests/cheats
i=0
while [ "$i" -lt "$n" ]; do
	# Distinct code, same kernel: the block size varies.
	sed "s/BLOCK=256/BLOCK=$((32 << (i % 5)))/; s/, 256)/, $((32 << (i % 5))))/" "$c/honest.py" |
		{ cat; echo "# variant $i"; } > "$tmp/cand.py"
	jq -nc --rawfile r "$c/add_reference.py" --rawfile t "$c/add_test.py" --rawfile code "$tmp/cand.py" \
		'{id: "plain/add", code: $code, task: {suite: "plain", name: "add", reference: $r, test: $t}}'
	i=$((i + 1))
done > "$tmp/in.jsonl"

run() {
	t0=$(date +%s.%N)
	"$top/bin/geak-eval" -j "$j" --cache "$tmp/cache" "$tmp/in.jsonl" > "$tmp/out.jsonl" || exit 1
	t1=$(date +%s.%N)
	echo "$t0 $t1"
}
cold=$(run)
passed=$(grep -c '"exec":true' "$tmp/out.jsonl")
warm=$(run)
cached=$(grep -c '"cached":true' "$tmp/out.jsonl")
echo "$cold $warm" | awk -v n="$n" -v j="$j" -v p="$passed" -v c="$cached" '{
	cs = $2 - $1; ws = $4 - $3
	printf "candidates: %d (-j %d), %d passed; %d from the cache on the second run\n", n, j, p, c
	printf "cold cache: %6.1f s  %7.1f candidates/minute\n", cs, 60 * n / cs
	printf "warm cache: %6.1f s  %7.1f candidates/minute  (%.1fx)\n", ws, 60 * n / ws, cs / ws
}'
