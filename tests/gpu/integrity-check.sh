#!/bin/sh
# The integrity checks on a GPU: the cheat corpus (tests/cheats, with the
# hostile candidates of where the arithmetic ran), both smoke sets'
# references judged as their own candidates (none may fail or be
# flagged), and TritonBench-revised vector_addition_custom with a fast
# correct candidate (tests/gpu/vector_addition_fast.py), which must pass
# unflagged at its measured speedup.  Prints counts, and what each new
# check cost a candidate (seconds, median and p90): the record of torch
# operations outside its kernels (outside), the library namespaces
# verified (intact), and the large speedups timed again (recheck).
# Records come from tests/gpu/eval-data.sh (carry bin and out/gpu):
#
#   tests/gpu/integrity-check.sh [-j N] DATA_DIR OUT_DIR
#
# CHEATS_S and REFS_S cap the two runs (default 300 and 480 seconds).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=8
while getopts j: o; do
	case $o in
	j) jobs=$OPTARG ;;
	*) echo "usage: $0 [-j N] DATA_DIR OUT_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-j N] DATA_DIR OUT_DIR" >&2; exit 2; }
data=$1 out=$2
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
mkdir -p "$out"
work=$(mktemp -d)
eval=$top/bin/geak-eval

# The cheats, timed, each against its "# expect:" line.
sh "$top/tests/gpu/full-check.sh" -j "$jobs" "$data" "$out/full" cheats:"${CHEATS_S:-300}" | tail -n 20

# The references as their own candidates, and the fast vector addition.
cat "$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl" > "$work/refs.jsonl"
jq -c --rawfile code "$top/tests/gpu/vector_addition_fast.py" \
	'select(.id == "tbg/vector_addition_custom") | .code = $code | .cheat = "fast"' \
	"$data/smoke-tbg.jsonl" > "$work/fast.jsonl"
cat "$work/refs.jsonl" "$work/fast.jsonl" > "$work/in.jsonl"
mkdir -p "$work/tmp"
timeout -s TERM "${REFS_S:-480}" "$eval" -j "$jobs" --gpus auto --cache "$work/cache" --keep --tmpdir "$work/tmp" \
	--timeout 120 --compile-timeout 240 "$work/in.jsonl" > "$out/refs.jsonl" 2> "$out/refs.err"
echo "geak-eval: exit $?"
echo "references judged as their own candidates:"
jq -r 'select(.cheat == null) | .eval | if .exec != true then "failed"
	elif (.flags | length) > 0 then "flagged" else "passed" end' "$out/refs.jsonl" | sort | uniq -c
jq -r 'select(.cheat == null and (.eval.exec != true or (.eval.flags | length) > 0)) |
	"  \(.id): \(.eval.stage) \(.eval.reason) \(.eval.flags) \(.eval.message // "" | .[0:200])"' "$out/refs.jsonl"
echo "fast vector addition:"
jq -r 'select(.cheat == "fast") | .eval | "  exec \(.exec) flags \(.flags) speedup \(.speedup)"' "$out/refs.jsonl"
# What the checks cost, from the jobs' records.
"$GEAK_PYTHON" - "$work/tmp" <<'PY'
import glob, json, os, statistics, sys
cost = {"outside": [], "intact": [], "recheck": []}
for path in glob.glob(os.path.join(sys.argv[1], "**", "result.json"), recursive=True):
    if "/cand-" not in path:
        continue
    try:
        spent = json.load(open(path)).get("spent") or {}
    except (OSError, ValueError):
        continue
    for k in ("outside", "intact"):
        if k in spent:
            cost[k].append(float(spent[k]))
    timing = os.path.join(os.path.dirname(path), "timing.json")
    if os.path.exists(timing):
        cost["recheck"].append(float((json.load(open(timing)).get("spent") or {}).get("recheck") or 0))
for k, xs in cost.items():
    xs.sort()
    if xs:
        p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
        print(f"cost {k}: {len(xs)} candidates, median {statistics.median(xs):.4f} s, p90 {p90:.4f} s")
    else:
        print(f"cost {k}: no candidate recorded it")
PY
rm -rf "$work/cache"
tar czf "$out/integrity.tgz" -C "$work" . 2>/dev/null
