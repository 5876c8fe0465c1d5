#!/bin/sh
# The calibrations' round trip on a GPU: a record set evaluated in a fresh
# cache with --export-calibration, the archive imported into another fresh
# cache, the same records evaluated there; prints whether any calibration
# job ran the second time, the jobs that made outputs again, and each
# record's verdict and speedup side by side.  First, geak-eval without
# libarchive: it runs, and an import says what is missing.
#
#   L=$(sh tests/gpu/carry-libs.sh out/libsrc/libarchive.so.13 out/libsrc /tmp/L)
#   LD_LIBRARY_PATH=$L sh tests/gpu/calib-roundtrip.sh [-j N] [-n RECORDS] [DATA.jsonl [OUT_DIR]]
#
# DATA defaults to out/gpu/smoke-tbg.jsonl (tests/gpu/eval-data.sh), of
# which the first RECORDS (default 8) are used; everything goes to OUT_DIR
# (default a new temporary folder), the traces in a.err and b.err.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=4 n=8
while getopts j:n: o; do
	case $o in
	j) jobs=$OPTARG ;; n) n=$OPTARG ;;
	*) echo "usage: $0 [-j N] [-n RECORDS] [DATA.jsonl [OUT_DIR]]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
data=${1:-$top/out/gpu/smoke-tbg.jsonl}
out=${2:-$(mktemp -d)}
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
PATH=$top/bin:$PATH
[ -r "$data" ] || { echo "$0: $data: no records (sh tests/gpu/eval-data.sh)" >&2; exit 2; }
mkdir -p "$out" || exit 3
head -n "$n" "$data" > "$out/in.jsonl"
echo "records: $(grep -c . "$out/in.jsonl") of $data; output in $out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'

echo "== without libarchive (LD_LIBRARY_PATH unset)"
echo "ldd bin/geak-eval, libarchive lines: $(ldd "$top/bin/geak-eval" | grep -c libarchive)"
env -u LD_LIBRARY_PATH geak-eval --check >/dev/null 2>&1
echo "geak-eval --check without it: exit $?"
env -u LD_LIBRARY_PATH geak-eval --cache "$out/none" --import-calibration /dev/null </dev/null
echo "geak-eval --import-calibration without it: exit $?"

echo "== 1: calibrate and evaluate in a fresh cache, then export"
t0=$(date +%s)
geak-eval -v -j "$jobs" --cache "$out/a" --export-calibration "$out/calib.tgz" \
	"$out/in.jsonl" > "$out/a.jsonl" 2> "$out/a.err"
echo "exit $?, $(( $(date +%s) - t0 )) s; $(tail -n 2 "$out/a.err" | tr '\n' ' ')"
echo "archive: $(du -k "$out/calib.tgz" | cut -f1) KiB; the cache's profiles: $(du -sk "$out/a/profile" | cut -f1) KiB"

echo "== 2: import into a fresh cache"
geak-eval -j "$jobs" --cache "$out/b" --import-calibration "$out/calib.tgz" > "$out/import.jsonl" 2> "$out/import.err"
echo "exit $?; $(tail -n 1 "$out/import.err")"

echo "== 3: evaluate the same records there"
t0=$(date +%s)
geak-eval -v -j "$jobs" --cache "$out/b" "$out/in.jsonl" > "$out/b.jsonl" 2> "$out/b.err"
echo "exit $?, $(( $(date +%s) - t0 )) s; $(tail -n 1 "$out/b.err")"
echo "calibration jobs: first run $(grep -c 'calibrate-.*: exit after' "$out/a.err"), second run $(grep -c 'calibrate-.*: exit after' "$out/b.err")"
echo "regeneration jobs in the second run: $(grep -c 'regen-.*: exit after' "$out/b.err")"
grep 'does not hold here' "$out/b.err" | sed 's/^/  /'

"$GEAK_PYTHON" - "$out/a.jsonl" "$out/b.jsonl" <<'PY'
import json, statistics, sys

def load(path):
    with open(path) as fp:
        return [json.loads(line) for line in fp if line.strip()]

a, b = load(sys.argv[1]), load(sys.argv[2])
same, ratios = 0, []
print(f"{'record':40} {'verdict (calibrated)':28} {'speedup':>8}   {'verdict (imported)':28} {'speedup':>8} {'ref s 1':>7} {'ref s 2':>7}")
for ra, rb in zip(a, b):
    ea, eb = ra.get("eval") or {}, rb.get("eval") or {}
    va = f"{ea.get('exec')} {ea.get('reason')}" if ea else f"error {(ra.get('error') or {}).get('kind')}"
    vb = f"{eb.get('exec')} {eb.get('reason')}" if eb else f"error {(rb.get('error') or {}).get('kind')}"
    sa, sb = ea.get("speedup"), eb.get("speedup")
    same += va == vb
    if sa and sb:
        ratios.append(sb / sa)
    fmt = lambda s: "-" if s is None else f"{s:.3f}"
    ref = lambda e: (e.get("phases") or {}).get("reference")
    print(f"{str(ra.get('id'))[:40]:40} {va[:28]:28} {fmt(sa):>8}   {vb[:28]:28} {fmt(sb):>8} "
          f"{fmt(ref(ea)):>7} {fmt(ref(eb)):>7}")
print(f"verdicts equal: {same} of {len(a)}")
if ratios:
    print(f"speedup imported / calibrated: median {statistics.median(ratios):.3f}, "
          f"min {min(ratios):.3f}, max {max(ratios):.3f} over {len(ratios)}")
PY
