#!/bin/sh
# A geak-eval killed by SIGKILL leaves its run folder and its cgroups;
# the next geak-eval to start removes them, and never a live run's.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 7

c=$top/tests/cheats
mkdir tmp
printf 'import time\ntime.sleep(120)\n' | cat - "$c/honest.py" > code.py
jq -nc --rawfile ref "$c/add_reference.py" --rawfile test "$c/add_test.py" --rawfile code code.py \
	'{schema: 1, id: "plain/add", code: $code,
	  task: {suite: "plain", name: "add", reference: $ref, test: $test}}' > in.jsonl
cgmnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)

# start [DIR]: a geak-eval in the background, up to its candidate's
# run in a folder other than DIR.
start() {
	timeout -s KILL 200 geak-eval --cpu --static off --no-cache --tmpdir "$scratch/tmp" \
		--timeout 150 in.jsonl > /dev/null 2>> err.txt &
	pid=$!
	for _ in $(seq 600); do
		ls -d tmp/geak-eval-*/jobs/cand-* 2>/dev/null | grep -qv "^${1:-none}/" && break
		sleep 0.1
	done
}
# cgroups PID: its cgroups, where it could make any.
cgroups() {
	[ -n "$cgmnt" ] && find "$cgmnt" -maxdepth 2 -type d -name "geak-eval-$(pgrep -x geak-eval -P "$1")-*" 2>/dev/null
}

start
a_pid=$(pgrep -x geak-eval -P "$pid")
a_dir=$(ls -d tmp/geak-eval-*)
a_cg=$(cgroups "$pid")
kill -KILL "$a_pid"
wait "$pid"
check "a run killed by SIGKILL leaves its folder" test -d "$a_dir"
start "$a_dir"
b_dir=$(ls -d tmp/geak-eval-* | grep -v "^$a_dir$")
b_cg=$(cgroups "$pid")
check_fail "the next run removes the killed one's folder" test -d "$a_dir"
if [ -n "$a_cg" ]; then
	check_fail "and its cgroups" test -d "$a_cg"
else
	skip "no cgroup was made"
fi
check "the live one's folder stays" test -d "$b_dir"
geak-eval --cpu --no-cache --tmpdir "$scratch/tmp" < /dev/null > /dev/null 2>> err.txt
check "a run started beside it leaves it too" test -d "$b_dir"
if [ -n "$b_cg" ]; then
	check "and its cgroups" test -d "$b_cg"
else
	skip "no cgroup was made"
fi
kill -TERM "$(pgrep -x geak-eval -P "$pid")"
wait "$pid"
check_same "the live one, stopped, leaves nothing" "" "$(ls tmp)"
done_testing
