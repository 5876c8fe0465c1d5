#!/bin/sh
# How fast geak-eval judges candidates: a record file evaluated three
# times, cold (a fresh cache: every reference calibrated, every kernel
# compiled), warm (the profiles and compiled kernels kept, the evaluation
# cache missed on purpose by another --speedup-limit) and fresh (the
# profiles kept, each candidate's code made new by a comment, as a loop's
# next candidates are: their kernels and launchers compiled again), each
# with the seconds per candidate (median, p90, max), the candidates a
# minute, and the median of each phase; then warm again one candidate at
# a time (-j 1: "alone"), the seconds a candidate takes when no other
# shares the machine.  On a GPU machine:
#
#   tests/bench/eval-speed.sh [-j N] [-g GPUS] [-o DIR] RECORDS.jsonl
#
# (geak-eval --cpu on a machine without one).  DIR (default a temporary
# one) keeps each pass's records and trace.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=8 gpus=auto out=
while getopts j:g:o: o; do
	case $o in
	j) jobs=$OPTARG ;; g) gpus=$OPTARG ;; o) out=$OPTARG ;;
	*) echo "usage: $0 [-j N] [-g GPUS] [-o DIR] RECORDS.jsonl" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-j N] [-g GPUS] [-o DIR] RECORDS.jsonl" >&2; exit 2; }
recs=$1
[ -n "$out" ] || out=$(mktemp -d)
mkdir -p "$out/cache" || exit 3
PATH=$top/bin:$PATH
case $gpus in cpu) dev=--cpu ;; *) dev="--gpus $gpus" ;; esac

# pass NAME LIMIT [RECORDS [JOBS]]: one evaluation of the records; prints
# its summary.
pass() {
	t0=$(date +%s.%N)
	geak-eval $dev -j "${4:-$jobs}" -u -v --cache "$out/cache" --speedup-limit "$2" "${3:-$recs}" \
		> "$out/$1.jsonl" 2> "$out/$1.trace"
	rc=$?
	t1=$(date +%s.%N)
	jq -s --arg name "$1" --argjson jobs "${4:-$jobs}" --argjson wall "$(awk "BEGIN { print $t1 - $t0 }")" --argjson rc "$rc" '
		def q(p): sort | if length == 0 then null else .[((length - 1) * p | floor)] end;
		def r: if . == null then null else (. * 100 | round) / 100 end;
		[.[] | select(.eval != null)] as $e |
		{pass: $name, jobs: $jobs, exit: $rc, records: length, evaluated: ($e | length),
		 exec: ($e | map(select(.eval.exec)) | length),
		 errors: (map(select(.error != null)) | length),
		 wall_s: ($wall | r), per_min: (($e | length) / $wall * 60 | r),
		 seconds: {median: ($e | map(.eval.seconds) | q(0.5) | r),
		           p90: ($e | map(.eval.seconds) | q(0.9) | r),
		           max: ($e | map(.eval.seconds) | max | r)},
		 phases: ($e | map(.eval.phases | to_entries[]) | group_by(.key)
		          | map({key: .[0].key, value: (map(.value) | q(0.5) | r)}) | from_entries),
		 self_speedup: ($e | map(.eval.speedup | select(. != null)) as $s |
		          {timed: ($s | length), within_2pct: ($s | map(select(. >= 0.98 and . <= 1.02)) | length),
		           min: ($s | min | r), max: ($s | max | r)})}' "$out/$1.jsonl"
}
pass cold 10
pass warm 10.5
jq -c --arg n "$(date +%s%N)" 'if (.code | type) == "string" then .code += "\n# fresh \($n)\n" else . end' \
	"$recs" > "$out/fresh-in.jsonl" || exit 3
pass fresh 10 "$out/fresh-in.jsonl"
pass alone 10.25 "$recs" 1
