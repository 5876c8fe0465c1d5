#!/bin/sh
# make-replay.sh: record replay.jsonl, the model side of the demo.
#
# The answers are hand-written (script.jsonl: a first attempt that uses
# tl.libdevice and does not compile, a reflection on it, the fix, a
# reflection on the correct kernel, and a faster tiled version).  The test
# LLM server tests/helpers/llm_server.py serves them over the real chat
# API, and the demo's loop runs against it with --record, so replay.jsonl
# holds exactly the exchanges that examples/demo.sh asks for.  Run it again
# after changing a prompt template.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 3
make -s all || exit 3
PATH=$top/bin:$PATH
export PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/geak-replay.XXXXXX")
python3 tests/helpers/llm_server.py --script examples/demo/script.jsonl \
	--port-file "$tmp/port" > "$tmp/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
n=0
while [ ! -s "$tmp/port" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
[ -s "$tmp/port" ] || { echo "make-replay.sh: the server did not start" >&2; exit 3; }

GEAK_BASE_URL=http://127.0.0.1:$(cat "$tmp/port")/v1
GEAK_PROVIDER=openai
GEAK_PROMPTS=$top/examples/demo/prompts
GEAK_LLM_FLAGS="--provider openai --model geak-demo-recording --record $tmp/replay.jsonl"
# As examples/demo.sh: the optimiser is asked even where no speed is measured.
GEAK_OPT_FLAGS=--unmeasured
export GEAK_BASE_URL GEAK_PROVIDER GEAK_PROMPTS GEAK_LLM_FLAGS GEAK_OPT_FLAGS
bin/geak-loop.sh -v -n 3 -o "$tmp/out" examples/demo/task.jsonl || exit 3
mv -f "$tmp/replay.jsonl" examples/demo/replay.jsonl || exit 3
echo "make-replay.sh: $(wc -l < examples/demo/replay.jsonl) exchanges in examples/demo/replay.jsonl" >&2
