#!/bin/sh
# Record I/O speed: push N records of about 20 KB (the size of a real
# candidate record) through a pass-through geak stage and through
# `jq -c .`, in the same run, and print records/s, MB/s and peak memory.
#   tests/bench/record-io.sh [N]          (default 100000)
#   TOOL="geak-reflect" tests/bench/record-io.sh   (another pass-through stage)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-100000}
tool=${TOOL:-$top/tests/helpers/passthru}
python=${GEAK_PYTHON:-$top/.venv/bin/python}
[ -x "$python" ] || python=python3
dir=$(mktemp -d "${TMPDIR:-/tmp}/geak-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

"$python" - "$n" > "$dir/in.jsonl" <<'PY'
import json, random, sys
random.seed(1)
n = int(sys.argv[1])
body = []
for i in range(400):
    body.append(f"    offs_{i % 7} = pid * BLOCK + tl.arange(0, BLOCK)  # \"step\" {i}\n")
code = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n" + "".join(body)
code = code[:15000]
for i in range(n):
    rec = {"schema": 1, "id": f"tbg/kernel_{i % 184}", "run": i % 5, "iter": i % 10,
           "task": {"suite": "tbg", "name": f"kernel_{i % 184}", "difficulty": 3,
                    "instruction": "Write a fused kernel. " * 40},
           "code": code, "code_sha": "%064x" % random.getrandbits(256),
           "eval": {"call": True, "exec": i % 3 == 0, "speedup": round(random.uniform(0.5, 3), 4),
                    "shapes": [{"shape": [2 ** k], "ms": random.random(), "ms_ref": random.random()}
                               for k in range(10, 18)],
                    "stderr_tail": "Traceback (most recent call last):\n  ...\nValueError: é ü ✓\n"},
           "llm": {"provider": "openai", "model": "m", "usage": {"input_tokens": 1234, "output_tokens": 567}}}
    sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")
PY
bytes=$(wc -c < "$dir/in.jsonl")
mb=$(echo "$bytes" | awk '{printf "%.1f", $1 / 1e6}')
echo "input: $n records, $mb MB ($(awk -v b="$bytes" -v n="$n" 'BEGIN{printf "%.1f", b/n/1024}') KiB each)"

measure() { # label command...
	label=$1
	shift
	/usr/bin/time -f '%e %M' -o "$dir/time" "$@" < "$dir/in.jsonl" > "$dir/out.jsonl"
	read -r secs kib < "$dir/time"
	lines=$(wc -l < "$dir/out.jsonl")
	[ "$lines" -eq "$n" ] || { echo "$label: $lines records out of $n" >&2; exit 1; }
	awk -v l="$label" -v s="$secs" -v n="$n" -v b="$bytes" -v k="$kib" 'BEGIN {
		if (s < 0.01) s = 0.01
		printf "%-22s %8.2f s %10.0f rec/s %8.1f MB/s %8.1f MiB peak\n", l, s, n/s, b/1e6/s, k/1024 }'
	echo "$secs" > "$dir/secs.$label"
}
measure "$(basename "$tool")" "$tool"
measure "jq -c ." jq -c .
awk -v a="$(cat "$dir/secs.$(basename "$tool")")" -v b="$(cat "$dir/secs.jq -c .")" \
	'BEGIN { if (a < 0.01) a = 0.01; printf "ratio: %.2fx the speed of jq -c .\n", b / a }'
