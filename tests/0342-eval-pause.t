#!/bin/sh
# A timing run pauses the correctness jobs in flight on its GPU: geak-eval
# sends their workers SIGUSR1, and SIGUSR2 when they may go on.  The worker
# must stop the job (its process stopped, no result written meanwhile) and
# stop the job's clock, so that a job paused for longer than its whole
# time limit (3 s to the first call, 3 s after it) still ends normally.
# A timing run sets up beside the others, says it is ready, and times
# nothing until geak-eval says go (the GPU is then its alone); the wait is
# not its time; told no, it is stopped.
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
[ -r /proc/self/task/$$/children ] || skip_all "no /proc/PID/task/TID/children"
plan 9
field() { "$GEAK_PYTHON" -c 'import json,sys; d=json.loads(sys.stdin.read()); print(eval(sys.argv[1], d))' "$1"; }

out=$("$GEAK_PYTHON" "$top/tests/harness/pause_worker.py" "$scratch/job" 8 2>err.txt | tail -n 1)
check_same "the job's process is stopped while paused" "1 ['T']" \
	"$(printf '%s' "$out" | field '(jobs, states)' | tr -d '(),' | sed 's/ \[/ [/')"
check_same "and writes no result meanwhile" False "$(printf '%s' "$out" | field 'result_while_paused')"
check_same "paused 8 s of a 6 s limit, it still ends normally" "exit 0 True" \
	"$(printf '%s' "$out" | field '(status, code, wall > 8)' | tr -d "(),'")"
check_same "with its result" "n0nce True" "$(printf '%s' "$out" | field '(nonce, runs_ok)' | tr -d "(),'")"

out=$("$GEAK_PYTHON" "$top/tests/harness/handshake_worker.py" "$scratch/hs" 12 go 2>>err.txt | tail -n 1)
check_same "a timing job says it is ready, set up, and its layers" "True True True" \
	"$(printf '%s' "$out" | field "(first['ready'], 'landlock' in first, 'pidns' in first['sandbox'])" | tr -d "(),")"
check_same "and times nothing before it is told to go" False "$(printf '%s' "$out" | field 'timed_before_go')"
check_same "told to go after 12 s (its limit is 10), it times every case" "exit 0 n0nce None 2" \
	"$(printf '%s' "$out" | field '(status, code, nonce, error, shapes)' | tr -d "(),'")"
check_same "it says it is done with the device before its answer, once" "[{'timed': True}]" \
	"$(printf '%s' "$out" | field 'before')"
out=$("$GEAK_PYTHON" "$top/tests/harness/handshake_worker.py" "$scratch/hs-no" 1 no 2>>err.txt | tail -n 1)
check_same "told no, it is stopped and writes no timing" "aborted None" \
	"$(printf '%s' "$out" | field '(status, nonce)' | tr -d "(),'")"
done_testing
