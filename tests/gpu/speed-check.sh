#!/bin/sh
# One short GPU session's worth of evaluator checks: the machine, the
# cheat corpus (timed, --static off), and tests/bench/eval-speed.sh on a
# record set (cold; with the profiles and compiled kernels kept; fresh
# code over kept profiles; kept again, one candidate at a time), each
# step under its own time limit.  Records come from
# tests/gpu/eval-data.sh (carry bin and the data directory):
#
#   tests/gpu/speed-check.sh [-j N] [-s SET] DATA_DIR OUT_DIR [cheats|nocheats]
#
# SET defaults to smoke20 (both smoke sets).  Everything but the caches
# goes into OUT_DIR/results.tgz.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=8 set=smoke20
while getopts j:s: o; do
	case $o in
	j) jobs=$OPTARG ;; s) set=$OPTARG ;;
	*) echo "usage: $0 [-j N] [-s SET] DATA_DIR OUT_DIR [cheats|nocheats]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: $0 [-j N] [-s SET] DATA_DIR OUT_DIR [cheats|nocheats]" >&2; exit 2; }
data=$1 out=$2 cheats=${3:-cheats}
work=$(mktemp -d)
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
[ -r "$data/smoke20.jsonl" ] || cat "$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl" > "$data/smoke20.jsonl"
if [ "$cheats" = cheats ]; then
	sh "$top/tests/gpu/full-check.sh" -j "$jobs" "$data" "$work/full" env cheats:150
fi
timeout -s TERM 480 sh "$top/tests/bench/eval-speed.sh" -j "$jobs" -o "$work/speed" "$data/$set.jsonl" |
	tee "$work/speed.json"
rm -rf "$work/speed/cache"
tar czf "$out/results.tgz" -C "$work" . && ls -l "$out/results.tgz"
