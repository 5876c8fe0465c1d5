#!/bin/sh
# Stop the loop with `kill PID` (SIGTERM) at each of its stages and run
# it again each time: no process of the run outlives the loop, no request
# whose answer came back is made again, and the final records are those of
# an uninterrupted run.  Then SIGKILL, which the loop cannot pass on: its
# step is stopped all the same, and a second run started at once takes
# the folder over and completes.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v setsid >/dev/null 2>&1 || skip_all "setsid is needed"
command -v flock >/dev/null 2>&1 || skip_all "flock is needed"
plan 31
mkdir tmp
TMPDIR=$scratch/tmp
# The optimiser is asked on the CPU too, so that every stage asks the model.
GEAK_OPT_FLAGS=--unmeasured
export TMPDIR GEAK_OPT_FLAGS
task=$top/examples/demo/task.jsonl
check_prompt='Reply with the single word: ok'

# An uninterrupted run, against a server of its own.
start_llm "$top/examples/demo/script.jsonl" --latency 1
"$top/bin/geak-loop.sh" -i 3 -o "$scratch/ref" "$task" 2> ref.err
check_same "the uninterrupted run completes" 0 $?
kill "$llm_pid"
wait "$llm_pid" 2>/dev/null
mv llm.log ref.log

# Each answer takes a second, so that a stop lands inside a model call;
# a cache of its own, so that every evaluation runs.
start_llm "$top/examples/demo/script.jsonl" --latency 1
XDG_CACHE_HOME=$scratch/cache-stopped
TRITON_CACHE_DIR=$XDG_CACHE_HOME/triton
loop_pid=
start_loop() {
	setsid "$top/bin/geak-loop.sh" -i 3 -o "$scratch/out" "$task" 2>> loop.err &
	loop_pid=$!
}
# requests TEXT: how many requests whose prompt holds TEXT the server saw.
requests() {
	jq -r --arg t "$1" 'select(.body.messages[0].content | contains($t)) | .n' llm.log 2>/dev/null |
		wc -l | tr -d ' '
}
# until_request TEXT N: until the server has seen N such requests (60 s at most).
until_request() {
	n=0
	while [ "$(requests "$1")" -lt "$2" ] && [ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
}
# The session of the step running now (each step is one of its own,
# named in the lock), or nothing.
step_sid() {
	sed -n 's/^step //p' out/.geak.lock 2>/dev/null
}
# until_eval: until an evaluation step's workers have started (not those
# of the preflight's geak-eval --check).
until_eval() {
	n=0
	while { sid=$(step_sid); [ -z "$sid" ] || ! pgrep -s "$sid" -f geak_worker > /dev/null ||
		pgrep -s "$sid" -f 'geak-eval --check' > /dev/null; } && [ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
}
last_sid=
stop_loop() {
	last_sid=$(step_sid)
	kill "$loop_pid"
	wait "$loop_pid"
	rc=$?
}
# alive: the run's processes still alive (zombies are dead), the loop's
# and its last step's, after the few seconds geak-eval's workers take to
# see that it is gone.
alive() {
	n=0
	while [ $n -lt 50 ]; do
		left=$( { ps -o stat= -o pid= -o args= -s "$loop_pid"
			[ -n "$last_sid" ] && ps -o stat= -o pid= -o args= -s "$last_sid"; } | awk '$1 !~ /^Z/')
		[ -z "$left" ] && break
		sleep 0.1
		n=$((n + 1))
	done
	printf '%s' "$left"
}

start_loop
until_request '**Request:**' 1
stop_loop
check_same "stopped in the first attempt's call: exit 143" 143 "$rc"
check_same "no process of the run left" "" "$(alive)"
check "the step is not kept" [ ! -f out/iter-0.jsonl ]
check_same "the answer that came back is kept in the step's journal" 1 \
	"$(wc -l < out/iter-0.jsonl.journal | tr -d ' ')"

start_loop
until_eval
stop_loop
check_same "stopped in an evaluation: exit 143" 143 "$rc"
check_same "no process of the run left" "" "$(alive)"
check "the first step was completed from its journal" [ -f out/iter-0.jsonl ]
check "the journal goes with the completed step" [ ! -f out/iter-0.jsonl.journal ]
check "the evaluation is not kept" [ ! -f out/evaluated-0.jsonl ]

start_loop
until_request 'the run failed' 1
stop_loop
check_same "stopped in a reflection's call: exit 143" 143 "$rc"
check_same "no process of the run left" "" "$(alive)"
check "the step is not kept" [ ! -f out/iter-1.jsonl ]

start_loop
until_request '**Previous attempt:**' 1
stop_loop
check_same "stopped in a debug attempt's call: exit 143" 143 "$rc"
check_same "no process of the run left" "" "$(alive)"
check_same "the step's journal holds the reflection and the fix" 2 \
	"$(wc -l < out/iter-1.jsonl.journal | tr -d ' ')"

start_loop
until_request 'correct implementations of this task found so far' 1
stop_loop
check_same "stopped in an optimisation's call: exit 143" 143 "$rc"
check_same "no process of the run left" "" "$(alive)"

# SIGKILL cannot be passed on; the step is stopped all the same, and a
# run started at once takes the folder over.
start_loop
until_eval
killed_sid=$(step_sid)
kill -KILL "$loop_pid"
wait "$loop_pid" 2>/dev/null
"$top/bin/geak-loop.sh" -i 3 -o "$scratch/out" "$task" 2>> loop.err
check_same "a run started at once after SIGKILL completes" 0 $?
check_match "taking the folder over from the dead run" "its run \\(pid $loop_pid\\) has died" \
	"$(cat loop.err)"
check_same "nothing of the killed step is left" "" "$(ps -o pid= -s "$killed_sid" | tr -d ' ')"

# The server saw each request that was answered once, but for the
# preflight, made once per start of the loop.
check_same "no request made twice" 0 \
	"$(jq -c --arg c "$check_prompt" 'select(.body.messages[0].content != $c) | .body' llm.log |
		sort | uniq -d | wc -l | tr -d ' ')"
check_same "as many requests as the uninterrupted run" \
	"$(jq -r --arg c "$check_prompt" 'select(.body.messages[0].content != $c) | .n' ref.log | wc -l | tr -d ' ')" \
	"$(jq -r --arg c "$check_prompt" 'select(.body.messages[0].content != $c) | .n' llm.log | wc -l | tr -d ' ')"

# What differs from run to run: timings, the server's request ids, and the
# evaluator's paths in the traceback.
same() {
	jq -cS 'del(.llm.latency_ms, .llm.request_id, .eval.seconds, .eval.phases, .eval.calibration, .eval.cached,
		.eval.traceback, .eval.runs, .eval.stdout_tail, .eval.stderr_tail)' "$1"
}
for f in iter-0 evaluated-0 iter-1 evaluated-1 iter-2 evaluated-2; do
	check_same "$f.jsonl as in the uninterrupted run" "$(same ref/$f.jsonl)" "$(same out/$f.jsonl)"
done
check_same "usage counts every call, as in the uninterrupted run" "$(jq -c .usage ref/summary.json)" \
	"$(jq -c .usage out/summary.json)"
check_same "no temporary file or journal left" '' "$(ls out | grep '\.tmp\|\.journal' || true)"
done_testing
