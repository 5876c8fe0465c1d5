#!/bin/sh
# geak-eval's validation on a GPU machine, in one go (it is meant for a
# short lease): the TritonBench and ROCm smoke sets as references against
# themselves with a cold cache, the same again with a warm cache
# (candidates per minute), then the cheat corpus with real timing.
# Record files come from where geak-import runs (tests/gpu/eval-data.sh
# makes them in out/gpu); carry bin and out/gpu to the GPU machine:
#
#   tests/gpu/eval-h200.sh [DATA_DIR [OUT_DIR]]
#
# JOBS (4), BUDGET (240 s) and CHEAT_BUDGET (150 s) bound the runs.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:-$top/out/gpu}
o=${2:-${OUT:-$top/out/gpu-run}}
mkdir -p "$o" || exit 3
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
eval=$top/bin/geak-eval
{
	nvidia-smi -L 2>&1
	"$GEAK_PYTHON" -c 'import torch, triton, numpy, sys; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__)'
	"$eval" --list-gpus
	uname -r
	# Which sandbox layer, if any, keeps the CUDA runtime from starting.
	probe='import torch; print(torch.cuda.device_count())'
	ll="import sys; sys.path.insert(0, '$top/share/harness'); from geakh import guard"
	echo "plain: $("$GEAK_PYTHON" -c "$probe" 2>&1 | tail -1)"
	echo "netns: $(unshare -n "$GEAK_PYTHON" -c "$probe" 2>&1 | tail -1)"
	echo "landlock /tmp /dev: $("$GEAK_PYTHON" -c "$ll; print(guard.restrict_writes(['/tmp', '/dev'])); $probe" 2>&1 | tail -2 | tr '\n' ' ')"
	echo "landlock /tmp /dev /run /var: $("$GEAK_PYTHON" -c "$ll; print(guard.restrict_writes(['/tmp', '/dev', '/run', '/var'])); $probe" 2>&1 | tail -2 | tr '\n' ' ')"
} > "$o/env.txt" 2>&1
cache=$(mktemp -d /tmp/geak-h200-cache.XXXXXX)

sh "$top/tests/gpu/eval-refs.sh" -j "${JOBS:-4}" -b "${BUDGET:-240}" -c "$cache" -o /tmp/geak-refs \
	"$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl" > /dev/null 2>&1
cp /tmp/geak-refs/evaluated.jsonl "$o/refs.jsonl"
cp /tmp/geak-refs/summary.txt "$o/refs-summary.txt"
tail -c 30000 /tmp/geak-refs/stderr.txt > "$o/refs-stderr.txt"

{
	n=$(cat "$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl" | grep -c .)
	t0=$(date +%s.%N)
	"$eval" -j "${JOBS:-4}" --cache "$cache" "$data/smoke-tbg.jsonl" "$data/smoke-rocm.jsonl" > /tmp/geak-warm.jsonl
	t1=$(date +%s.%N)
	cached=$(grep -c '"cached":true' /tmp/geak-warm.jsonl)
	python3 -c 'import sys; n, c, a, b = sys.argv[1:]; s = float(b) - float(a)
print(f"warm cache: {n} records ({c} from the cache) in {s:.1f} s: {60 * int(n) / s:.0f} candidates/minute")' \
		"$n" "$cached" "$t0" "$t1"
	grep "wall" "$o/refs-summary.txt" | sed 's/^/cold cache: /'
} > "$o/warm.txt" 2>&1

timeout "${CHEAT_BUDGET:-150}" "$eval" -j "${JOBS:-4}" --cache "$cache" "$data/cheats.jsonl" \
	> "$o/cheats.jsonl" 2> /tmp/geak-cheats.err
python3 "$top/tests/gpu/eval-summary.py" --expect "$top/tests/cheats" "$o/cheats.jsonl" \
	> "$o/cheats-summary.txt" 2>&1
tail -c 10000 /tmp/geak-cheats.err >> "$o/cheats-summary.txt"
cat "$o/env.txt" "$o/refs-summary.txt" "$o/warm.txt" "$o/cheats-summary.txt"
