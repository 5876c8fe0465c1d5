#!/bin/sh
# examples/bench/agent-bench.sh end to end on one benchmark task: import
# from the real archive, the agent loop with a scripted model over the
# real chat API (it answers with the reference kernel), evaluation on
# Triton's CPU interpreter, and the GEAK-style summary with pass@k.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
geak=$top/../shared/bench/geak-eval-data.tar.gz
[ -r "$geak" ] || skip_all "no benchmark archive $geak"
[ -x "$top/bin/geak-eval" ] || skip_all "geak-eval not built"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 7

geak-import --ids relu_triton_kernel "$geak" |
	jq -c '{text: ({thought: "one program per block", code: .task.reference} | tostring)}' > script.jsonl
start_llm script.jsonl
GEAK_EVAL_FLAGS=--cpu
export GEAK_EVAL_FLAGS

sh "$top/examples/bench/agent-bench.sh" --ids relu_triton_kernel -i 1 -n 1 -R 2 -j 2 \
	-o out "$geak" > table.txt 2> bench.err
status=$?
check_same "agent-bench.sh exits 0" 0 $status
[ $status -eq 0 ] || sed 's/^/# /' bench.err | tail -n 20
check_same "one task imported" 1 "$(grep -c . out/tasks.jsonl)"
check_same "two runs evaluated" "0 1" \
	"$(jq -r .run out/agent/run-*/evaluated-0.jsonl | sort | tr '\n' ' ' | sed 's/ $//')"
check_same "summary: call and exec accuracy 1" "1 1" \
	"$(jq -r '"\(.call_accuracy) \(.exec_accuracy)"' out/summary.json)"
check_same "summary: no speedup measured on the CPU" "0" "$(jq -r .speedup_n out/summary.json)"
check_match "table shows exec accuracy" '^exec accuracy +1$' "$(cat table.txt)"
check_match "table shows pass@2" '^pass@2 +call 1 +exec 1$' "$(cat table.txt)"
done_testing
