#!/bin/sh
# How evaluation and parallel runs scale from one GPU to two, on one host.
# Each step prints its figures; the two-GPU half of a step runs only where
# two GPUs show (nvidia-smi -L), so on one GPU the one-GPU figures come
# out and the two-GPU ones are this same command away on a larger machine:
#
#   tests/gpu/two-gpu.sh [-j N] [-s SET] DATA_DIR OUT_DIR [STEP...]
#
# Records come from tests/gpu/eval-data.sh (carry bin and DATA_DIR there);
# SET defaults to smoke20 (both smoke sets).  -j N is geak-eval's -j on
# one GPU; on two it is doubled.  Steps (default all four):
#   cold     geak-eval --gpus 0 against --gpus 0,1, each on a fresh cache
#   warm     the same with the calibrations and compiled kernels kept (the
#            evaluation cache missed on purpose by another --speedup-limit)
#   parallel bin/geak-parallel.sh, two independent runs of the demo task
#            (its recorded model, no key), pinned one to each GPU (-g 0,1)
#            against both on GPU 0 (-g 0,0): wall time and ratio
#   shards   two geak-eval processes by xargs -P 2 over halves of SET,
#            sharing the host's GPU locks, against one process: candidates
#            a minute, ratio, and every record out exactly once
# OUT_DIR gets each step's records and traces and figures.txt.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=8 set=smoke20
while getopts j:s: o; do
	case $o in
	j) jobs=$OPTARG ;; s) set=$OPTARG ;;
	*) echo "usage: $0 [-j N] [-s SET] DATA_DIR OUT_DIR [STEP...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: $0 [-j N] [-s SET] DATA_DIR OUT_DIR [STEP...]" >&2; exit 2; }
data=$1 out=$2
shift 2
[ $# -gt 0 ] || set -- cold warm parallel shards
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
PATH=$top/bin:$PATH
mkdir -p "$out" || exit 3
[ -r "$data/smoke20.jsonl" ] || cat "$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl" > "$data/smoke20.jsonl"
recs=$data/$set.jsonl
[ -r "$recs" ] || { echo "$0: no $recs" >&2; exit 2; }
n=$(grep -c . "$recs")
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
say() { echo "$*" | tee -a "$out/figures.txt"; }
say "two-gpu: $n records of $set; $gpus GPU(s) here; -j $jobs per GPU"
[ "$gpus" -ge 2 ] || say "two-gpu: fewer than two GPUs: the two-GPU halves are not run"

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", n / (b - a) * 60 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.2f", b / a; else printf "-" }'; }

# evalpass LABEL GPUS JOBS CACHE LIMIT: one geak-eval over the set; sets $per.
evalpass() {
	t0=$(now)
	geak-eval -u -v -j "$3" --gpus "$2" --cache "$4" --speedup-limit "$5" "$recs" \
		> "$out/$1.jsonl" 2> "$out/$1.trace"
	rc=$?
	t1=$(now)
	per=$(rate "$n" "$t0" "$t1")
	say "$1: --gpus $2 -j $3: exit $rc, $(grep -c . "$out/$1.jsonl") of $n records," \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, $per a minute"
}

for step; do
	case $step in
	cold)
		rm -rf "$out/cache-1" "$out/cache-2"
		evalpass cold-1gpu 0 "$jobs" "$out/cache-1" 10; one=$per
		if [ "$gpus" -ge 2 ]; then
			evalpass cold-2gpu 0,1 $((jobs * 2)) "$out/cache-2" 10
			say "cold: two GPUs against one: $(ratio "$one" "$per")x"
		fi ;;
	warm)
		[ -d "$out/cache-1" ] || evalpass cold-1gpu 0 "$jobs" "$out/cache-1" 10
		evalpass warm-1gpu 0 "$jobs" "$out/cache-1" 10.5; one=$per
		if [ "$gpus" -ge 2 ]; then
			[ -d "$out/cache-2" ] || evalpass cold-2gpu 0,1 $((jobs * 2)) "$out/cache-2" 10
			evalpass warm-2gpu 0,1 $((jobs * 2)) "$out/cache-2" 10.5
			say "warm: two GPUs against one: $(ratio "$one" "$per")x"
		fi ;;
	parallel)
		GEAK_PROMPTS=$top/examples/demo/prompts
		GEAK_LLM_FLAGS="--provider openai --model geak-demo-recording --replay $top/examples/demo/replay.jsonl"
		export GEAK_PROMPTS GEAK_LLM_FLAGS
		for pin in 0,0 0,1; do
			[ "$pin" = 0,1 ] && [ "$gpus" -lt 2 ] && continue
			rm -rf "$out/par-$pin"
			t0=$(now)
			"$top/bin/geak-parallel.sh" -i 2 -R 2 -j 2 -g "$pin" -o "$out/par-$pin" \
				"$top/examples/demo/task.jsonl" > "$out/par-$pin.out" 2> "$out/par-$pin.err"
			rc=$?
			t1=$(now)
			wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
			say "parallel -g $pin: exit $rc, $wall s; self-speedups:" \
				"$(jq -r 'select(.eval.speedup != null) | .eval.speedup' "$out/par-$pin"/run-*/evaluated-*.jsonl 2>/dev/null | tr '\n' ' ')"
			eval "wall_$(echo "$pin" | tr , _)=$wall"
		done
		[ "$gpus" -ge 2 ] && say "parallel: one GPU each against both on one: $(ratio "$wall_0_1" "$wall_0_0")x less wall time" ;;
	shards)
		[ -d "$out/cache-1" ] || evalpass cold-1gpu 0 "$jobs" "$out/cache-1" 10
		list=0 j=$jobs
		[ "$gpus" -ge 2 ] && list=0,1 j=$((jobs * 2))
		evalpass shards-one "$list" "$j" "$out/cache-1" 10.25; one=$per
		awk 'NR % 2 == 1' "$recs" > "$out/half-0.jsonl"
		awk 'NR % 2 == 0' "$recs" > "$out/half-1.jsonl"
		t0=$(now)
		printf '%s\n' 0 1 | xargs -P 2 -I{} sh -c 'geak-eval -u -j "$1" --gpus "$2" --cache "$3" \
			--speedup-limit 10.75 "$4/half-{}.jsonl" > "$4/shard-{}.jsonl" 2> "$4/shard-{}.trace"' \
			sh $((j / 2)) "$list" "$out/cache-1" "$out"
		t1=$(now)
		got=$(cat "$out"/shard-0.jsonl "$out"/shard-1.jsonl | jq -r .id | sort | uniq -c | awk '$1 == 1' | wc -l)
		say "shards: two processes over --gpus $list: $(rate "$n" "$t0" "$t1") a minute against" \
			"$one for one process: $(ratio "$one" "$(rate "$n" "$t0" "$t1")")x; $got of $n ids out exactly once" ;;
	*) echo "$0: unknown step '$step'" >&2; exit 2 ;;
	esac
done
