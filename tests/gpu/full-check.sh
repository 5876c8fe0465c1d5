#!/bin/sh
# The harness check on a GPU machine, in one command sized for a short
# lease: every TritonBench-revised and ROCm reference evaluated as if it
# were a candidate (cold cache), the same again from the cache (warm), the
# cheat corpus with real timing, and the GPU discovery output.  Record
# files come from tests/gpu/eval-data.sh, run where geak-import works.
#
#   tests/gpu/full-check.sh [-j N] [-b SECONDS] [-n] DATA_DIR OUT_DIR
#
# -n: the full set for correctness only (geak-eval --no-perf), timing the
#     smoke sets alone (a lease too short to time every kernel).
#
# The cache lives in out/cache (ignored by git), so a second call on the
# same machine resumes from it: records already judged come from the cache.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=16 budget=420 noperf=
while getopts j:b:n o; do
	case $o in
	j) jobs=$OPTARG ;; b) budget=$OPTARG ;; n) noperf=--no-perf ;;
	*) echo "usage: $0 [-j N] [-b S] [-n] DATA_DIR OUT_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
data=$1 o=$2
mkdir -p "$o" "$top/out/cache" || exit 3
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
eval=$top/bin/geak-eval
summary=$top/tests/gpu/eval-summary.py

{
	nvidia-smi -L
	"$GEAK_PYTHON" -c 'import sys, torch, triton, numpy; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__)'
	nproc
} > "$o/env.txt" 2>&1
"$eval" --list-gpus > "$o/gpus.json" 2>> "$o/stderr.txt"

run() { # label budget cache-dir [geak-eval flag] file...
	label=$1 b=$2 cache=$3 flag=
	shift 3
	case $1 in --*) flag=$1; shift ;; esac
	start=$(date +%s)
	timeout -s TERM "$b" "$eval" -j "$jobs" --gpus auto --cache "$cache" $flag \
		--timeout 120 --compile-timeout 240 "$@" > "$o/$label.jsonl" 2>> "$o/stderr.txt"
	status=$?
	end=$(date +%s)
	{
		"$GEAK_PYTHON" "$summary" "$o/$label.jsonl"
		echo "$label: geak-eval -j $jobs --gpus auto: exit $status, $((end - start)) s wall," \
			"$(grep -c . "$o/$label.jsonl") of $(cat "$@" | grep -c .) records"
	} > "$o/$label.txt" 2>&1
	tail -n 3 "$o/$label.txt"
	# At most eight files come back from a lease: keep the summaries.
	case $label in warm) rm -f "$o/$label.jsonl" ;; esac
}

if [ -n "$noperf" ]; then
	run cold "$budget" "$top/out/cache" --no-perf "$data/all.jsonl"
	run warm 60 "$top/out/cache" --no-perf "$data/all.jsonl"
	run smoke 150 "$(mktemp -d)" "$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl"
else
	run cold "$budget" "$top/out/cache" "$data/all.jsonl"
	run warm 60 "$top/out/cache" "$data/all.jsonl"
	run cheats 90 "$(mktemp -d)" "$data/cheats.jsonl"
fi
