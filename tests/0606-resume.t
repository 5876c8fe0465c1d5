#!/bin/sh
# Kill the loop twice, once during an evaluation (SIGTERM) and once during
# the model calls (SIGKILL), and run it again each time: it must carry on
# from the last complete step, never redo one, and lose or duplicate no
# record.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v setsid >/dev/null 2>&1 || skip_all "setsid is needed to kill the loop's process group"
# Two seconds per request, so that a kill lands inside the model calls.
start_llm "$top/examples/demo/script.jsonl" --latency 2
plan 14

loop_pid=
run_loop() {
	setsid "$top/examples/loop.sh" -n 3 -o out "$top/examples/demo/task.jsonl" 2>> loop.err &
	loop_pid=$!
}
# wait_for FILE: until FILE exists (or 200 s pass).
wait_for() {
	n=0
	while [ ! -f "$1" ] && [ $n -lt 2000 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ -f "$1" ]
}
kill_loop() {
	kill "-$1" "-$loop_pid"
	wait "$loop_pid" 2>/dev/null
}
digest() {
	cat "$@" | sha256sum | cut -d' ' -f1
}

run_loop
wait_for out/iter-1.jsonl
check "killed during iteration 1's evaluation" [ ! -f out/evaluated-1.jsonl ]
kill_loop TERM
before=$(digest out/iter-0.jsonl out/evaluated-0.jsonl out/iter-1.jsonl)
calls=$(wc -l < llm.log | tr -d ' ')

run_loop
wait_for out/evaluated-1.jsonl
sleep 1
check "killed during the model calls of iteration 2" [ ! -f out/iter-2.jsonl ]
kill_loop KILL
check_same "finished steps untouched by the restart" "$before" \
	"$(digest out/iter-0.jsonl out/evaluated-0.jsonl out/iter-1.jsonl)"
check_same "no model call of a finished step was made again" "$calls" \
	"$(jq -r 'select(.n <= '"$calls"') | .n' llm.log | wc -l | tr -d ' ')"
before=$(digest out/iter-0.jsonl out/evaluated-0.jsonl out/iter-1.jsonl out/evaluated-1.jsonl)

"$top/examples/loop.sh" -n 3 -o out "$top/examples/demo/task.jsonl" 2>> loop.err
check_same "the third run completes" 0 $?
check_same "finished steps untouched again" "$before" \
	"$(digest out/iter-0.jsonl out/evaluated-0.jsonl out/iter-1.jsonl out/evaluated-1.jsonl)"
check_same "one record in every file, none lost or doubled" '1 1 1 1 1 1' \
	"$(for f in iter-0 evaluated-0 iter-1 evaluated-1 iter-2 evaluated-2; do
		wc -l < out/$f.jsonl | tr -d ' '; done | tr '\n' ' ' | sed 's/ $//')"
check_same "the loop's decisions are those of an uninterrupted run" 'first debug optimize' \
	"$(jq -r .mode out/evaluated-0.jsonl out/evaluated-1.jsonl out/evaluated-2.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_same "the last candidate is correct" true "$(jq -r .eval.exec out/evaluated-2.jsonl)"
check_same "one first attempt asked for" 1 \
	"$(jq -r '.body.messages[0].content | select(contains("**Request:**") and (contains("Previous attempt") | not)) | "x"' llm.log | wc -l | tr -d ' ')"
check_same "iteration 0 reflected on once" 1 \
	"$(jq -r '.body.messages[0].content | select(contains("the run failed")) | "x"' llm.log | wc -l | tr -d ' ')"
# Of iteration 2's three calls, those made before the kill were made again.
total=$(wc -l < llm.log | tr -d ' ')
check "at most the killed step's calls were repeated" [ "$total" -ge 5 -a "$total" -le 8 ]
check_same "no temporary files left" '' "$(ls out | grep '\.tmp\|\.s[0-9]$' || true)"
check_same "the selection is made" 1 "$(wc -l < out/best.jsonl | tr -d ' ')"
done_testing
