#!/bin/sh
# What calibrating the references costs, cold, step by step: a fixed
# subset of the suites' references, each as its own candidate, evaluated
# with an empty cache; per task the calibration's seconds split by
# process and step (eval.calibration), the self-speedup, and the wall of
# the whole run.  With -b, the same subset again under another harness
# (a share/ tree of an earlier version, e.g. made here with
# `git archive main share | tar -x -C out/base`, carried as out/base),
# cold too, in the same call, so the two can be compared on one machine.
#
#   tests/gpu/calib-cost.sh [-j N] [-t SECONDS] [-i IDS] [-b BASE_SHARE] DATA_DIR OUT_DIR
#
# DATA_DIR holds all.jsonl (sh tests/gpu/eval-data.sh); -i IDS replaces
# the subset (comma-separated ids); -t bounds each variant's run
# (default 270 s: both fit one 10-minute call; geak-eval -u keeps what
# finished).  Writes OUT_DIR/VARIANT.jsonl, .trace and .txt, and prints
# the .txt files: "new" (this tree's harness) first, then "base".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=16 limit=270 base=
ids=tbg/vector_addition_custom,tbg/softmax_triton1,tbg/rmsnorm_implementation,tbg/rotary_emb,\
tbg/cross_entropy2,tbg/kv_cache_copy,tbg/index_select_bwd,tbg/layer_norm_welfold,tbg/decay_cumsum,\
tbg/token_attn_reduceV,tbg/matmul_dequant_int4,tbg/int4_matmul,tbg/attention_fwd_triton1,\
tbg/fused_recurrent_hgrn,tbg/matmul_triton_autotune,tbg/log_softmax,tbg/adam_update_triton,\
rocm/gemm,rocm/rmsnorm_fwd,rocm/test_block_pointer_matmul
usage="usage: $0 [-j N] [-t SECONDS] [-i IDS] [-b BASE_SHARE] DATA_DIR OUT_DIR"
while getopts j:t:i:b: o; do
	case $o in
	j) jobs=$OPTARG ;; t) limit=$OPTARG ;; i) ids=$OPTARG ;; b) base=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
data=$1 o=$2
[ -r "$data/all.jsonl" ] || { echo "$0: no $data/all.jsonl (sh tests/gpu/eval-data.sh)" >&2; exit 2; }
[ -z "$base" ] || [ -d "$base/harness" ] || { echo "$0: $base is not a share/ tree" >&2; exit 2; }
mkdir -p "$o" || exit 3
GEAK_PYTHON=${GEAK_PYTHON:-python3}
export GEAK_PYTHON
jq -c --arg ids "$ids" '($ids | split(",")) as $want | select(.id | IN($want[]))' \
	"$data/all.jsonl" > "$o/subset.jsonl" || exit 3
echo "subset: $(grep -c . "$o/subset.jsonl") records of $data/all.jsonl; -j $jobs, $limit s a variant"

variant() { # NAME SHAREDIR
	cache=$(mktemp -d)
	start=$(date +%s)
	GEAK_SHAREDIR=$2 timeout -s TERM "$limit" "$top/bin/geak-eval" -u -v -j "$jobs" --cache "$cache" \
		--timeout 120 --compile-timeout 240 "$o/subset.jsonl" > "$o/$1.jsonl" 2> "$o/$1.trace"
	status=$?
	wall=$(($(date +%s) - start))
	{
		echo "== $1 ($2): exit $status, $wall s wall, $(grep -c . "$o/$1.jsonl") of" \
			"$(grep -c . "$o/subset.jsonl") records"
		"$GEAK_PYTHON" - "$o/$1.jsonl" "$wall" "$cache" <<'PY'
import glob, json, os, statistics, sys

path, wall, cache = sys.argv[1], float(sys.argv[2]), sys.argv[3]
PARTS = ("mem_wait", "tests", "perf_checks", "search", "compile", "save", "load", "take")
recs = [json.loads(line) for line in open(path) if line.strip()]
refs, speedups = [], []
print(f"{'task':36} {'ref s':>7} {'speedup':>8}  steps (s): process wall (parts)")
for r in recs:
    ev = r.get("eval") or {}
    ref = (ev.get("phases") or {}).get("reference")
    ref = ref if isinstance(ref, (int, float)) else None
    if ref:
        refs.append(ref)
    sp = ev.get("speedup")
    if isinstance(sp, (int, float)):
        speedups.append(sp)
    steps = ev.get("calibration") or {}
    text = []
    for name, v in steps.items():
        if isinstance(v, dict):
            parts = " ".join(f"{k} {v[k]:.1f}" for k in PARTS if isinstance(v.get(k), (int, float)) and v[k] >= 0.05)
            text.append(f"{name} {v.get('wall', 0):.1f} ({parts})")
        elif name != "total":
            text.append(f"{name} {v:.1f}")
    why = "" if ev.get("exec") else f"  [{ev.get('reason')}: {str(ev.get('message'))[:60]}]"
    print(f"{r.get('id', '?'):36} {ref if ref is not None else float('nan'):7.1f} "
          f"{sp if isinstance(sp, (int, float)) else float('nan'):8.3f}  {' '.join(text) or '-'}{why}")
# Per process, from the profiles the run left (either harness writes
# "spent"; only the newer writes "steps").
procs = {}
for f in glob.glob(os.path.join(cache, "profile", "*", "profile.json")):
    try:
        prof = json.load(open(f))
    except (OSError, ValueError):
        continue
    for name, s in (prof.get("spent") or {}).items():
        procs.setdefault(name.rstrip("01") if name.startswith("A") else name, []).append(s)
print("calibration processes: " + ", ".join(f"{k} {len(v)}x sum {sum(v):.0f} s median {statistics.median(v):.1f} s"
                                           for k, v in sorted(procs.items())))
if refs:
    print(f"calibrations: {len(refs)}, sum {sum(refs):.0f} s, median {statistics.median(refs):.1f} s, "
          f"max {max(refs):.0f} s")
if speedups:
    out = [s for s in speedups if abs(s - 1) > 0.02]
    print(f"self-speedups: {len(speedups)}, {min(speedups):.3f} .. {max(speedups):.3f}, "
          f"{len(out)} outside 1 +- 2%")
print(f"records: {len(recs)} in {wall:.0f} s, {60 * len(recs) / max(wall, 1):.1f} a minute")
PY
		"$GEAK_PYTHON" "$top/tests/gpu/trace-summary.py" "$o/$1.trace" | sed -n 1,3p
	} > "$o/$1.txt" 2>&1
	rm -rf "$cache"
	cat "$o/$1.txt"
}

variant new "$top/share"
[ -z "$base" ] || variant base "$(cd "$base" && pwd)"
