#!/bin/sh
# Where a candidate's seconds go inside the harness: a record set
# evaluated cold, then warm (profiles and compiled kernels kept, the
# evaluation cache missed on purpose), with GEAK_PYPROFILE set, every
# job's Python profile kept.  On a GPU machine, bin/ and the data carried:
#
#   tests/gpu/profile-check.sh [-j N] [-i IDS] DATA_DIR OUT_DIR
#
# IDS: comma-separated record ids of DATA_DIR/smoke20.jsonl (default all).
# OUT_DIR/profiles.tgz holds PASS/TASK/JOB/pyprofile*.prof and the
# records; read it with tests/gpu/pyprof-summary.py.  The profiler slows
# what it watches: the seconds here are for comparing phases, not rates.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=8 ids=
while getopts j:i: o; do
	case $o in
	j) jobs=$OPTARG ;; i) ids=$OPTARG ;;
	*) echo "usage: $0 [-j N] [-i IDS] DATA_DIR OUT_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-j N] [-i IDS] DATA_DIR OUT_DIR" >&2; exit 2; }
data=$1 out=$2
work=$(mktemp -d)
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share GEAK_PYPROFILE=1
export GEAK_PYTHON GEAK_SHAREDIR GEAK_PYPROFILE
[ -r "$data/smoke20.jsonl" ] || cat "$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl" > "$data/smoke20.jsonl"
if [ -n "$ids" ]; then
	jq -c --arg ids "$ids" 'select(.id | IN($ids | split(",")[]))' "$data/smoke20.jsonl" > "$work/in.jsonl"
else
	cp "$data/smoke20.jsonl" "$work/in.jsonl"
fi
echo "profile-check: $(grep -c . "$work/in.jsonl") records, -j $jobs"
for pass in cold warm; do
	limit=10
	[ $pass = warm ] && limit=10.5
	mkdir -p "$work/$pass"
	t0=$(date +%s)
	"$top/bin/geak-eval" -j "$jobs" -u --keep --tmpdir "$work/$pass" --cache "$work/cache" \
		--speedup-limit $limit "$work/in.jsonl" > "$work/$pass.jsonl" 2> "$work/$pass.err"
	echo "$pass: exit $?, $(($(date +%s) - t0)) s"
	jq -c '{id, s: .eval.seconds, exec: .eval.exec, ph: .eval.phases}' "$work/$pass.jsonl"
done
# Each kept job directory (and each calibration in the cache) by task.
mkdir -p "$work/prof"
find "$work/cold" "$work/warm" "$work/cache/profile" -name 'pyprofile*.prof' | while read -r f; do
	d=$(dirname "$f")
	name=$(jq -r '.name // "?"' "$d/job.json" 2>/dev/null || echo "?")
	case $f in "$work/cold"*) pass=cold ;; "$work/warm"*) pass=warm ;; *) pass=calibrate ;; esac
	dest="$work/prof/$pass/$name/$(basename "$d")"
	mkdir -p "$dest" && cp "$f" "$dest/"
done
tar czf "$out/profiles.tgz" -C "$work" prof cold.jsonl warm.jsonl cold.err warm.err && ls -l "$out/profiles.tgz"
