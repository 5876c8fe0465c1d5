#!/bin/sh
# geak-eval's checks on a GPU machine, as named steps that each fit a
# short lease.  Record files come from tests/gpu/eval-data.sh, run where
# geak-import works (the GPU machine may lack libarchive); carry bin and
# the data directory there.
#
#   tests/gpu/full-check.sh [-j N] [-g GPUS] [-r CACHE.tgz] [-s SET] [-i IDS] DATA_DIR OUT_DIR STEP[:SECONDS]...
#
# -i IDS: only the records of the set whose id, or the part of it after
# the suite, is in the comma-separated list IDS (e.g. -i
# destindex_copy,rocm/softmax); written to DATA_DIR/picked.jsonl, which
# then is the set.
#
# Steps (each stopped after SECONDS, default 400; geak-eval -u writes
# every result as it finishes, so a step cut short keeps what it did):
#   env     GPUs, library versions, geak-eval --list-gpus
#   cheats  the cheat corpus (tests/cheats), timed, checked against each
#           file's "# expect:" line; fresh cache; --static off, so that
#           each runtime defence decides (the static checks are tested
#           on the CPU)
#   smoke   the smoke sets of both suites; fresh cache
#   all     every reference of both suites as a candidate (or, with -s,
#           the records of DATA_DIR/SET.jsonl, here and below), with the cache
#           in out/cache (kept on the machine between calls), so the step
#           run again resumes where the last one stopped
#   correct the set for correctness only (--no-perf), cache in out/cache
#   recheck recheck.jsonl for correctness only; fresh cache
#   rewarm  the set again with the evaluation cache missed on purpose
#           (another --speedup-limit) but reference outputs and compiled
#           kernels cached: the rate for new candidates of known tasks
#   cached  the set again, every result from the evaluation cache
#   fresh   the set with each code made new by a comment, as a loop's next
#           candidates are (its kernels compiled apart from the
#           reference's), cache in out/cache: self-speedups where the
#           reference's kernels come from a cache of their own
#   NAME    any other name: DATA_DIR/NAME.jsonl as all (timed, out/cache)
#   save    the evaluation cache as OUT_DIR/eval-cache.tgz: a later call on
#           a fresh machine, given it with -r (carried), resumes from it
# Each step writes STEP.txt (summary, with tests/gpu/trace-summary.py's
# account of the GPU's time) and STEP.jsonl (records); every job's trace
# (geak-eval -v) goes to stderr.txt.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=16 gpus=auto restore= set=all ids=
usage="usage: $0 [-j N] [-g GPUS] [-r CACHE.tgz] [-s SET] [-i IDS] DATA_DIR OUT_DIR STEP[:SECONDS]..."
while getopts j:g:r:s:i: o; do
	case $o in
	j) jobs=$OPTARG ;; g) gpus=$OPTARG ;; r) restore=$OPTARG ;; s) set=$OPTARG ;; i) ids=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { echo "$usage" >&2; exit 2; }
data=$1 o=$2
shift 2
mkdir -p "$o" "$top/out/cache" || exit 3
if [ -n "$restore" ]; then
	tar xzf "$restore" -C "$top/out/cache" || exit 3
fi
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
if [ -n "$ids" ]; then
	"$GEAK_PYTHON" - "$data/$set.jsonl" "$ids" > "$data/picked.jsonl" <<'PY' || exit 3
import json, sys
want = set(sys.argv[2].split(","))
for line in open(sys.argv[1]):
    rid = json.loads(line)["id"]
    if rid in want or rid.split("/", 1)[-1] in want:
        sys.stdout.write(line)
PY
	echo "picked $(grep -c . "$data/picked.jsonl") records of $data/$set.jsonl"
	set=picked
fi
eval=$top/bin/geak-eval
summary=$top/tests/gpu/eval-summary.py

run() { # label budget cache-dir expect-dir file [geak-eval flags...]
	label=$1 b=$2 cache=$3 expect=$4 file=$5
	shift 5
	start=$(date +%s)
	timeout -s TERM "$b" "$eval" -u -v -j "$jobs" --gpus "$gpus" --cache "$cache" \
		--timeout 120 --compile-timeout 240 "$@" "$file" > "$o/$label.jsonl" 2> "$o/$label.trace"
	status=$?
	end=$(date +%s)
	{
		echo "$label: geak-eval -u -j $jobs --gpus $gpus $*: exit $status, $((end - start)) s wall," \
			"$(grep -c . "$o/$label.jsonl") of $(grep -c . "$file") records"
		if [ -n "$expect" ]; then
			"$GEAK_PYTHON" "$summary" --wall $((end - start)) --expect "$expect" "$o/$label.jsonl"
		else
			"$GEAK_PYTHON" "$summary" --wall $((end - start)) "$o/$label.jsonl"
		fi
		"$GEAK_PYTHON" "$top/tests/gpu/trace-summary.py" "$o/$label.trace"
	} > "$o/$label.txt" 2>&1
	{ echo "== $label"; cat "$o/$label.trace"; } >> "$o/stderr.txt"
	rm -f "$o/$label.trace"
	tail -n 12 "$o/$label.txt"
}

for step; do
	name=${step%%:*} b=400
	case $step in *:*) b=${step#*:} ;; esac
	echo "== $name ($b s)"
	case $name in
	env)
		{
			nvidia-smi -L
			"$GEAK_PYTHON" -c 'import sys, torch, triton, numpy; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__)'
			echo "$(nproc) CPUs"
		} > "$o/env.txt" 2>&1
		"$eval" --list-gpus > "$o/gpus.json" 2>> "$o/stderr.txt"
		cat "$o/env.txt" ;;
	cheats) run cheats "$b" "$(mktemp -d)" "$top/tests/cheats" "$data/cheats.jsonl" --static off ;;
	smoke)
		cat "$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl" > "$o/smoke-in.jsonl"
		run smoke "$b" "$(mktemp -d)" "" "$o/smoke-in.jsonl"
		rm -f "$o/smoke-in.jsonl" ;;
	all) run all "$b" "$top/out/cache" "" "$data/$set.jsonl" ;;
	correct) run correct "$b" "$top/out/cache" "" "$data/$set.jsonl" --no-perf ;;
	recheck) run recheck "$b" "$(mktemp -d)" "" "$data/recheck.jsonl" --no-perf ;;
	rewarm) run rewarm "$b" "$top/out/cache" "" "$data/$set.jsonl" --speedup-limit 10.5 ;;
	cached) run cached "$b" "$top/out/cache" "" "$data/$set.jsonl" ;;
	fresh)
		jq -c --arg n "$(date +%s%N)" 'if (.code | type) == "string" then .code += "\n# fresh \($n)\n" else . end' \
			"$data/$set.jsonl" > "$o/fresh-in.jsonl" || exit 3
		run fresh "$b" "$top/out/cache" "" "$o/fresh-in.jsonl"
		rm -f "$o/fresh-in.jsonl" ;;
	save) tar czf "$o/eval-cache.tgz" -C "$top/out/cache" eval && ls -l "$o/eval-cache.tgz" ;;
	*)
		[ -r "$data/$name.jsonl" ] || { echo "$0: unknown step '$name' (and no $data/$name.jsonl)" >&2; exit 2; }
		run "$name" "$b" "$top/out/cache" "" "$data/$name.jsonl" ;;
	esac
done
