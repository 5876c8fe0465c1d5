#!/bin/sh
# demo.sh: the whole agent on the bundled task examples/demo/task.jsonl
# (row-wise scaled softmax): retrieval, generation, evaluation, reflection,
# optimisation, three iterations, then selection and the report.
#
# With no provider configured the model's answers are replayed from
# examples/demo/replay.jsonl (recorded with --record from hand-written
# answers; see make-replay.sh): no network and no API key are needed, and
# the evaluation is real, on the GPU when there is one, else on the CPU
# under Triton's interpreter.  With a provider configured (GEAK_API_KEY,
# OPENAI_API_KEY, ANTHROPIC_API_KEY, LLM_API_KEY, AZURE_OPENAI_API_KEY or
# GEAK_BASE_URL set) the same command runs live.  GEAK_DEMO=replay or
# GEAK_DEMO=live forces either.
#
#   usage: examples/demo.sh [-f]     -f: start afresh instead of resuming
#   GEAK_DEMO_OUT=DIR: write the run there (default out/demo-replay or
#   out/demo-live); GEAK_DEMO_NOBUILD=1: use the tools as built
#
# A replayed and a live demo never share a folder, and the folder's
# manifest (see geak-loop(1)) keeps a live run with another provider or
# model from resuming one made before: the loop stops, and -f starts
# afresh.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 3
fresh=
case ${1:-} in
'') ;;
-f) fresh=1 ;;
-h|--help) echo "usage: examples/demo.sh [-f]   (-f: start afresh instead of resuming)"; exit 0 ;;
*) echo "usage: examples/demo.sh [-f]   (-f: start afresh instead of resuming)" >&2; exit 2 ;;
esac

say() { echo "demo: $*" >&2; }

# Set-up when something is missing: the C libraries or the harness's
# Python environment (make deps), then the tools.
python=${GEAK_PYTHON:-$top/.venv/bin/python}
if ! "$python" -c 'import torch, triton' 2>/dev/null ||
	! pkg-config --exists jansson libcurl libarchive 2>/dev/null ||
	! command -v jq >/dev/null 2>&1; then
	say "setting up (make deps)"
	make deps || exit 3
fi
if [ -z "${GEAK_DEMO_NOBUILD:-}" ]; then
	make -s all || exit 3
fi
PATH=$top/bin:$PATH
export PATH

mode=${GEAK_DEMO:-}
if [ -z "$mode" ]; then
	mode=replay
	for v in GEAK_API_KEY OPENAI_API_KEY ANTHROPIC_API_KEY LLM_API_KEY AZURE_OPENAI_API_KEY GEAK_BASE_URL; do
		eval "val=\${$v:-}"
		[ -n "$val" ] && mode=live
	done
fi
out=${GEAK_DEMO_OUT:-out/demo-$mode}
case $mode in
replay)
	say "offline: the model's answers are replayed from examples/demo/replay.jsonl"
	say "(a recorded exchange; no network, no API key).  Configure a provider to run live."
	GEAK_LLM_FLAGS="--provider openai --model geak-demo-recording --replay $top/examples/demo/replay.jsonl"
	# The recording was made with these prompts; they leave out what
	# differs between machines (timings, error output), so that each
	# recorded exchange is asked again exactly.
	GEAK_PROMPTS=$top/examples/demo/prompts
	export GEAK_PROMPTS
	;;
live)
	say "live: asking the configured model (geak-gen --check to test the set-up)"
	GEAK_LLM_FLAGS=${GEAK_LLM_FLAGS:-}
	;;
*)
	say "GEAK_DEMO: want replay or live, not '$mode'"
	exit 2
	;;
esac
export GEAK_LLM_FLAGS
[ -n "$fresh" ] && rm -rf "$out"
[ -d "$out" ] && say "resuming the run in $out (-f to start afresh)"

# On the CPU no speed is measured; the demo still shows the optimiser,
# which is then told that its list is not ordered by speed.
GEAK_OPT_FLAGS=${GEAK_OPT_FLAGS:---unmeasured}
export GEAK_OPT_FLAGS

# The loop runs in the background so that a signal reaches this shell,
# which passes it on and waits for the loop to stop.
bin/geak-loop.sh -v -i 3 -o "$out" examples/demo/task.jsonl &
loop=$!
trap 'kill -TERM $loop 2>/dev/null' TERM INT
while :; do
	wait $loop
	status=$?
	kill -0 $loop 2>/dev/null || break
done
if [ $status -eq 5 ]; then
	say "$out holds a demo run with other settings (see above): examples/demo.sh -f starts"
	say "afresh there, or GEAK_DEMO_OUT=DIR puts this run in a folder of its own"
	exit $status
fi
if [ $status -ne 0 ]; then
	say "the loop stopped (exit $status, see above); run the same command to carry on"
	exit $status
fi

jq -r '"demo: " + .id + ": " + (if .selected.exec then "correct" else "no correct kernel" end)
	+ (if .selected then ", found in iteration \(.selected.iter)" else "" end)
	+ (if .selected.speedup then ", \(.selected.speedup * 100 | round / 100)x the reference"
	   elif .selected.exec then " (speed not measured on this machine)" else "" end)' \
	"$out/best.jsonl" >&2
# Only code that was made goes into the kernel file.
rm -f "$out/best-kernel.py"
if jq -e -r 'select(.code | type == "string") | .code' "$out/best.jsonl" > "$out/best-kernel.py.tmp"; then
	mv -f "$out/best-kernel.py.tmp" "$out/best-kernel.py"
	say "the kernel: $out/best-kernel.py"
else
	rm -f "$out/best-kernel.py.tmp"
	say "no kernel was made, so none is written"
fi
say "the report: $out/report.html (summary: $out/summary.json)"
