#!/bin/sh
# llm-throughput.sh: how close geak-gen -j comes to the ideal when the
# model is slow.  N generations at -j J against the loopback test server
# with LATENCY seconds per reply; prints the wall time against the ideal
# N * LATENCY / J, and a serial baseline measured in the same run.
#
#	tests/bench/llm-throughput.sh [N [J [LATENCY]]]   (default 200 32 0.2)
set -eu
n=${1:-200}
j=${2:-32}
lat=${3:-0.2}
top=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$top/bin:$PATH"
GEAK_SHAREDIR="$top/share"
export PATH GEAK_SHAREDIR
py=$(command -v python3 || echo "${GEAK_PYTHON:-$top/.venv/bin/python}")
work=$(mktemp -d "${TMPDIR:-/tmp}/geak-bench.XXXXXX")
key=sk-bench-key
"$py" "$top/tests/helpers/llm_server.py" --key "$key" --latency "$lat" >"$work/port" &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$work"' EXIT INT TERM
while [ ! -s "$work/port" ]; do sleep 0.05; done
url=http://127.0.0.1:$(head -n 1 "$work/port")/v1

tasks() {
	i=0
	while [ "$i" -lt "$1" ]; do
		printf '{"schema":1,"id":"plain/t%d","task":{"instruction":"Write kernel %d."}}\n' "$i" "$i"
		i=$((i + 1))
	done
}

# run COUNT JOBS: seconds of wall time for COUNT generations.
run() {
	tasks "$1" >"$work/in"
	t0=$(date +%s.%N)
	OPENAI_API_KEY=$key geak-gen --base-url "$url" --knowledge none -j "$2" \
		<"$work/in" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	t1=$(date +%s.%N)
	got=$(wc -l <"$work/out")
	[ "$got" -eq "$1" ] || { echo "llm-throughput: $got records out of $1" >&2; exit 1; }
	errs=$(grep -c '"error"' "$work/out" || true)
	[ "$errs" -eq 0 ] || { echo "llm-throughput: $errs records with errors" >&2; exit 1; }
	echo "$t0 $t1" | awk '{ printf "%.3f", $2 - $1 }'
}

serial_n=$(( n / 10 > 4 ? n / 10 : 4 ))
serial=$(run "$serial_n" 1)
wall=$(run "$n" "$j")
awk -v n="$n" -v j="$j" -v lat="$lat" -v wall="$wall" -v sn="$serial_n" -v serial="$serial" 'BEGIN {
	ideal = n * lat / j
	per = serial / sn
	printf "generations:          %d at -j %d, %.0f ms latency each\n", n, j, lat * 1000
	printf "wall time:            %.3f s\n", wall
	printf "ideal (n*lat/j):      %.3f s\n", ideal
	printf "whole waves (ceil(n/j)*lat): %.3f s\n", int((n + j - 1) / j) * lat
	printf "efficiency:           %.1f%% of ideal (ideal / wall)\n", 100 * ideal / wall
	printf "serial baseline:      %.3f s per generation (%d at -j 1)\n", per, sn
	printf "speed-up over serial: %.1fx (ideal %dx)\n", per * n / wall, j
}'
