#!/bin/sh
# Runs that cannot do their work: a wrong key is caught by the preflight
# before any step, and by the step itself when there is none (the step is
# not kept, exit 4); the right key then completes the run.  A budget that
# runs out leaves its step unkept, with the answers that came back in the
# step's journal, and the run, resumed with more, asks only for the rest.
# The demo writes no kernel file when no kernel was made.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v flock >/dev/null 2>&1 || skip_all "flock is needed"
plan 26
key=sk-test-good-key-0609
task=$top/examples/demo/task.jsonl
check_prompt='Reply with the single word: ok'
start_llm "$top/examples/demo/script.jsonl" --key "$key"

OPENAI_API_KEY=sk-wrong "$top/bin/geak-loop.sh" -i 1 -o "$scratch/w" "$task" 2> wrong.err
check_same "wrong key: the loop exits 4" 4 $?
check_match "wrong key: the preflight says the key was refused" \
	'FAILED: key: the endpoint refused the key from \$OPENAI_API_KEY' "$(cat wrong.err)"
check_match "wrong key: and that nothing was run" 'nothing was run' "$(cat wrong.err)"
check_same "wrong key: no step kept, no journal; the run's settings" manifest.json "$(ls w)"
check_same "wrong key: one request, the preflight's" "1 false" \
	"$(jq -r '.auth_ok' llm.log | wc -l | tr -d ' ') $(jq -r .auth_ok llm.log)"

# The step on its own, without a preflight: not kept either.
OPENAI_API_KEY=sk-wrong geak-iter.sh first "$task" "$scratch/w/iter-0.jsonl" 2> step.err
check_same "wrong key, the step alone: exit 4" 4 $?
check_match "it names the stage and its reason" \
	'geak-gen: its records failed for reasons that are not theirs' "$(cat step.err)"
check_match "and says the file was not written" 'iter-0.jsonl not written' "$(cat step.err)"
check "nothing kept" [ ! -f w/iter-0.jsonl ]

OPENAI_API_KEY=$key "$top/bin/geak-loop.sh" -i 1 -o "$scratch/w" "$task" 2> right.err
check_same "right key: the run completes" 0 $?
check_same "right key: the first attempt and its evaluation" '"first" false' \
	"$(jq -c .mode w/iter-0.jsonl) $(jq -c .eval.exec w/evaluated-0.jsonl)"
check_same "the key is in no record, journal or message" '' \
	"$(grep -rlF "$key" w ./*.err 2>/dev/null)"

# Two tasks that ask the very same thing, and a budget of one request.
: > llm.log
jq -c '., (.id += "_twin")' "$task" > twins.jsonl
OPENAI_API_KEY=$key GEAK_LLM_FLAGS="-j 1 --max-tokens-total 100" \
	"$top/bin/geak-loop.sh" -i 1 -o "$scratch/b" twins.jsonl 2> budget.err
check_same "budget: the loop exits 4" 4 $?
check_match "budget: it says the model could not be used for the step" \
	'the model could not be used for .*iter-0.jsonl' "$(cat budget.err)"
check_match "budget: the budget is named, counted over the run" \
	'budget: not sent: [0-9]+ tokens used by the run \(--ledger\), --max-tokens-total is 100' \
	"$(cat budget.err)"
check "budget: the step is not kept" [ ! -f b/iter-0.jsonl ]
check_same "budget: the one answer is kept in the journal" 1 "$(wc -l < b/iter-0.jsonl.journal | tr -d ' ')"
OPENAI_API_KEY=$key "$top/bin/geak-loop.sh" -i 1 -o "$scratch/b" twins.jsonl 2>> budget.err
check_same "budget lifted: the run completes" 0 $?
check_same "both twins got their first attempt" 2 "$(jq -r 'select(.mode == "first") | .id' b/iter-0.jsonl | wc -l | tr -d ' ')"
check_same "two first-attempt requests in all: the kept answer was not asked again" 2 \
	"$(jq -r --arg c "$check_prompt" 'select(.body.messages[0].content != $c) | .n' llm.log | wc -l | tr -d ' ')"

# A model that never writes code: the demo says so and writes no kernel file.
# The loop's own budget holds for the whole run, whatever its steps.
OPENAI_API_KEY=$key "$top/bin/geak-loop.sh" -i 2 --max-tokens-total 3000 -o "$scratch/lb" "$task" 2> lb.err
check_same "a run's budget: the loop exits 4" 4 $?
check_match "... saying the run's budget is spent, and how much" \
	"the run's budget is spent \((\\\$[0-9.]+, )?[0-9]+ tokens(, [0-9]+ calls unpriced)? so far, --max-cost none, --max-tokens-total 3000\)" \
	"$(cat lb.err)"
check_same "... after the steps it could pay for" "evaluated-0.jsonl iter-0.jsonl" \
	"$(cd lb && ls iter-0.jsonl evaluated-0.jsonl iter-1.jsonl 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"

kill "$llm_pid"
start_llm /dev/null --reply 'I would rather not.'
GEAK_DEMO=live GEAK_DEMO_OUT=$scratch/demo GEAK_DEMO_NOBUILD=1 sh "$top/examples/demo.sh" 2> demo.err
check_same "no kernel made: the demo still ends well" 0 $?
check "no kernel file" [ ! -e demo/best-kernel.py ]
check_match "it says why, with no null in its words" 'no kernel was made' \
	"$(grep -v null demo.err)"
done_testing
