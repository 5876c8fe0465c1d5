#!/bin/sh
# tests/gpu/own-check.sh OUT: one's own kernel on a GPU, from the files in
# examples/own to the loop's kernel files, as the README's "Your own
# kernel" section runs it on the CPU.
#
#   1. geak-import of the three forms (a PyTorch function, a KernelBench
#      file, a starting Triton kernel), printed as a transcript;
#   2. geak-eval on the GPU: each task's verdict and speedup (the two
#      reference-only tasks come out with no code to judge);
#   3. two iterations of bin/geak-loop.sh with the scripted model of
#      examples/own/script.jsonl on loopback, speed measured;
#   4. every file of OUT/loop/kernels put back into its task's record
#      and judged again by geak-eval.
#
# The harness's Python is GEAK_PYTHON (what tests/gpu/deps-check.sh made,
# say).  Tools are built elsewhere and carried in bin/; geak-import and
# geak-retrieve need libarchive, which LD_LIBRARY_PATH may carry
# (tests/gpu/carry-libs.sh).  OUT gets own.jsonl, evaluated.jsonl, the
# loop's summary and report, and kernels.tgz.
set -u
[ $# -eq 1 ] || { echo "usage: $0 OUT" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
mkdir -p "$out" || exit 1
PATH=$top/bin:$PATH
GEAK_SHAREDIR=$top/share
export PATH GEAK_SHAREDIR
cd "$top" || exit 1
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"; [ -n "${server:-}" ] && kill "$server" 2>/dev/null' EXIT

step() { printf '\n== %s\n' "$*"; }
say() { printf '$ %s\n' "$*" >&2; "$@"; }

step "harness: ${GEAK_PYTHON:-(GEAK_PYTHON unset)}"
geak-eval --check 2>&1 | tail -n 4

step "1. geak-import, the three forms"
say geak-import examples/own/scale_add.py > "$work/own.jsonl"
say geak-import examples/own/row_softplus.py >> "$work/own.jsonl"
say geak-import --name scale_add_given --code examples/own/scale_add_triton.py \
	examples/own/scale_add.py >> "$work/own.jsonl"
jq -r '"\(.id): suite \(.task.suite), entry \(.task.entry // "-"), code \(if .code then "given" else "none" end)"' \
	"$work/own.jsonl"
cp "$work/own.jsonl" "$out/"

step "2. geak-eval on the GPU"
start=$(date +%s)
geak-eval -j 2 "$work/own.jsonl" > "$work/evaluated.jsonl"
echo "exit $?, $(($(date +%s) - start)) s"
jq -r 'if .eval then "\(.id): call \(.eval.call), exec \(.eval.exec), speedup \(.eval.speedup // "none")\(if (.eval.flags // []) != [] then ", flags \(.eval.flags)" else "" end)\(if .eval.reason then ", \(.eval.reason)" else "" end)" else "\(.id): no code to judge" end' \
	"$work/evaluated.jsonl"
cp "$work/evaluated.jsonl" "$out/"

step "3. the loop, two iterations, scripted model"
python3 tests/helpers/llm_server.py --script examples/own/script.jsonl --port-file "$work/port" \
	> "$work/server.log" 2>&1 &
server=$!
n=0
until [ -s "$work/port" ] || [ $n -ge 100 ]; do sleep 0.1; n=$((n + 1)); done
start=$(date +%s)
GEAK_BASE_URL=http://127.0.0.1:$(cat "$work/port")/v1 GEAK_MODEL=test-model \
	bin/geak-loop.sh -i 2 -o "$work/loop" "$work/own.jsonl" 2>&1 | tail -n 4
echo "loop: $(($(date +%s) - start)) s"
kill "$server" 2>/dev/null
server=
jq -r '.kernels[] | "\(.id): exec \(.exec), speedup \(.speedup // "none"), iteration \(.iter // "-"), file \(.file // "-")"' \
	"$work/loop/summary.json" 2>&1
cp "$work/loop/summary.json" "$work/loop/report.html" "$out/" 2>/dev/null

step "4. the kernel files, judged again"
pass=0 total=0
for f in "$work"/loop/kernels/*.py; do
	[ -e "$f" ] || { echo "no kernel files"; break; }
	total=$((total + 1))
	id=$(sed -n '1s/^# geak kernel for \([^ ]*\).*/\1/p' "$f")
	head -n 3 "$f"
	jq -c --arg id "$id" --rawfile code "$f" 'select(.id == $id) | .code = $code | del(.code_sha)' \
		"$work/own.jsonl" > "$work/again.jsonl"
	v=$(geak-eval "$work/again.jsonl" | jq -r '"call \(.eval.call), exec \(.eval.exec), speedup \(.eval.speedup // "none")"')
	echo "  -> $v"
	case $v in *"exec true"*) pass=$((pass + 1)) ;; esac
done
echo "kernel files passing geak-eval: $pass of $total"
tar -czf "$out/kernels.tgz" -C "$work/loop" kernels 2>/dev/null
