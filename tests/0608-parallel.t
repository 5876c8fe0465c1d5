#!/bin/sh
# Parallel scaling: independent runs through make -j (Makefile.inc) and
# through xargs -P (bin/geak-parallel.sh), merged by geak-select; the
# model side replays the demo's recording.
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v make >/dev/null 2>&1 || skip_all "make is needed"
plan 10
unset GEAK_BASE_URL GEAK_PROVIDER GEAK_MODEL GEAK_API_KEY
GEAK_PROMPTS=$top/examples/demo/prompts
GEAK_LLM_FLAGS="--provider openai --model geak-demo-recording --replay $top/examples/demo/replay.jsonl"
export GEAK_PROMPTS GEAK_LLM_FLAGS

make -s -j2 -f "$top/examples/Makefile" GEAK_ITERS=2 GEAK_RUNS=2 > make.out 2> make.err
check_same "make -j2: two runs of two iterations" 0 $?
check_same "every iteration file of both runs" 8 "$(ls out/run-*/*.jsonl | wc -l | tr -d ' ')"
check_same "each run carries its index" '0 1' \
	"$(jq -r .run out/run-*/evaluated-1.jsonl | tr '\n' ' ' | sed 's/ $//')"
# Both runs pass at iteration 1: pass@1 = pass@2 = 1; at iteration 0 none.
check_same "merged: pass@1 and pass@2" '[[1,1],[2,1]]' \
	"$(jq -c '[.pass_at_k[] | [.k, .exec]]' out/summary.json)"
check_same "merged: by iteration" '[0,1]' "$(jq -c '[.by_iter[].exec_accuracy]' out/summary.json)"
make -q -f "$top/examples/Makefile" GEAK_ITERS=2 GEAK_RUNS=2
check_same "then make has nothing left to do" 0 $?

"$top/bin/geak-parallel.sh" -i 1 -R 3 -j 3 -o par "$top/examples/demo/task.jsonl" 2> par.err
check_same "geak-parallel: three one-iteration runs" 0 $?
check_same "three runs in the summary" 3 "$(jq .runs par/summary.json)"
check_same "run logs: not for every user" 640 "$(stat -c %a par/run-0.log)"
# One iteration: the first attempt fails in every run.
check_same "pass@1..3 over them" '[[1,0],[2,0],[3,0]]' "$(jq -c '[.pass_at_k[] | [.k, .exec]]' par/summary.json)"
done_testing
