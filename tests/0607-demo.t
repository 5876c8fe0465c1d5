#!/bin/sh
# The README's first command, offline: examples/demo.sh replays the
# recorded model answers, evaluates for real and ends with the report.
# A change to a prompt template that the recording depends on shows up
# here as a replay miss (re-record with examples/demo/make-replay.sh).
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
[ -x "$top/bin/geak-eval" ] && [ -x "$top/bin/geak-gen" ] || skip_all "tools not built"
plan 8
unset GEAK_BASE_URL GEAK_PROVIDER GEAK_MODEL GEAK_API_KEY GEAK_PROMPTS GEAK_LLM_FLAGS

GEAK_DEMO=replay GEAK_DEMO_OUT=$scratch/demo GEAK_DEMO_NOBUILD=1 sh "$top/examples/demo.sh" 2> demo.err
check_same "the demo finishes" 0 $?
check_match "it says the answers are replayed" 'replayed from examples/demo/replay.jsonl' "$(cat demo.err)"
check_same "every model call was answered from the recording" 'true true true' \
	"$(jq -r '.llm.replayed' demo/evaluated-*.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "no record carries an error" 0 "$(cat demo/evaluated-*.jsonl | jq -r 'select(.error) | .id' | wc -l | tr -d ' ')"
check_same "first attempt fails, the fix and the optimised kernel pass" 'false true true' \
	"$(jq -r '.eval.exec' demo/evaluated-*.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "the selected kernel is correct" true "$(jq -r .selected.exec demo/best.jsonl)"
check_match "the kernel is written out" '^import torch' "$(head -n 1 demo/best-kernel.py)"
check_match "and the report" '<svg' "$(cat demo/report.html)"
done_testing
