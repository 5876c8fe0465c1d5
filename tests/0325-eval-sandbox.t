#!/bin/sh
# geak-eval against hostile candidates, one per way out of the sandbox
# (tests/sandbox/*.py, each followed by an honest kernel for the plain
# task "add" of tests/cheats/): the environment of its ancestors, a key it
# prints, writes to /tmp, /dev/shm and homes, reads outside, a signal to
# a process outside, a daemon, a fork flood, a memory hog, a 300 MB
# print.  Each is contained; no credential reaches a record, the cache or
# the trace; geak-eval holds none in its environment; a SIGTERM leaves
# neither its run directory, a process nor a record of the killed job
# behind.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
command -v base64 >/dev/null || skip_all "no base64"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 35

sb=$top/tests/sandbox
c=$top/tests/cheats
key=sk-geak-sandbox-$$-0123456789abcdef
key64=$(printf %s "$key" | base64 | tr -d '\n')
tag=t$$
mkdir outside tmp
echo "outside-marker-$tag" > outside/outside.txt
sleep 1000 &
victim=$!

# record NAME: the candidate tests/sandbox/NAME.py, then the honest kernel.
record() {
	sed -e "s|@KEY64@|$key64|" -e "s|@TAG@|$tag|g" -e "s|@OUTSIDE@|$scratch/outside|g" \
		-e "s|@PID@|$victim|" -e "s|@CHUNKS@|16|" "$sb/$1.py" > code.py
	cat "$c/honest.py" >> code.py
	jq -nc --rawfile ref "$c/add_reference.py" --rawfile test "$c/add_test.py" \
		--rawfile perf "$c/add_perf.py" --rawfile code code.py --arg name "$1" \
		'{schema: 1, id: "plain/add", probe: $name, code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test, perf: $perf}}'
}
for p in ancestors redact writes reads kill daemon forks memhog flood; do
	record "$p"
done > in.jsonl
record ancestors | jq -c '.probe = "honest" | .code = $code' --rawfile code "$c/honest.py" >> in.jsonl

# The key is in the environment of the shell above geak-eval too, as a
# loop's would be.
env OPENAI_API_KEY="$key" sh -c 'geak-eval -j 2 --cpu --static off --cache cache --tmpdir tmp --keep -v \
	--timeout 60 --proc-limit 64 --memory-limit 1024 in.jsonl > out.jsonl 2> err.txt'
check_same "geak-eval exits 0" 0 $?

ev() { jq -r --arg p "$1" "select(.probe == \$p) | .eval | $2" out.jsonl; }
out() { ev "$1" '.stdout_tail // ""'; }

# Its one ancestor is the first process of its PID namespace: its relay.
check_match "ancestors: it sees none outside its job, and no credential" \
	'ancestors [01] processes [0-9]+ secrets 0' "$(out ancestors)"
check_match "ancestors: it sees its own processes only" 'processes [1-3] ' "$(out ancestors)"
check_same "redaction: the key it printed is in no part of its evaluation" "" \
	"$(ev redact . | grep -F -e "$key" -e "$key64")"
check_match "redaction: its output says what was redacted" \
	'stolen \[redacted:OPENAI_API_KEY\]' "$(out redact)"
check_match "redaction: so does its message" '\[redacted:OPENAI_API_KEY\]' "$(ev redact .message)"
check_match "redaction: it is flagged secrets_in_env" 'secrets_in_env' "$(ev redact '.flags | join(",")')"
check_same "writes: nothing it wrote is left outside its job" "" \
	"$(ls -d /tmp/geak-sbx-$tag /dev/shm/geak-sbx-$tag "$HOME/geak-sbx-$tag" /root/geak-sbx-$tag \
		2>/dev/null; find "$scratch" -name "geak-sbx-$tag" ! -path '*/jobs/*/geak-sbx-*')"
check_match "writes: /tmp and /dev/shm were its own while it ran" \
	"wrote /tmp/geak-sbx-$tag.*wrote /dev/shm/geak-sbx-$tag" "$(out writes | tr '\n' ' ')"
check_same "the contained candidates pass (their kernels are honest)" \
	"true true true true true true true true" \
	"$(for p in ancestors writes reads kill daemon forks flood honest; do ev $p .exec; done | tr '\n' ' ' | sed 's/ $//')"
check_same "reads: the file outside is not read" "" "$(out reads | grep "outside-marker-$tag")"
check_match "reads: the file outside, the home and /etc/shadow do not exist for it" \
	"unreadable $scratch/outside/outside.txt.*unreadable /root/.gitconfig.*unreadable /etc/shadow" \
	"$(out reads | tr '\n' ' ')"
check "a signal: the process outside is alive" kill -0 "$victim"
check_match "a signal: it could not reach it" "could not kill $victim" "$(out kill)"
check_same "a daemon: none outlives geak-eval" 0 "$(ps -eo args | grep -c '^sleep 31337.5')"
check_match "a fork flood: stopped at the process limit" 'forked [1-6]?[0-9] of 400' "$(out forks)"
check_same "a fork flood: none of them outlives geak-eval" 0 "$(ps -eo comm | grep -c '^geak-sbx-flood')"
# Under an rlimit it gets MemoryError and says how far it got; under a
# cgroup it is killed, and its stderr says so.
hog=$(out memhog | sed -n 's/.*allocated \([0-9]*\) MiB.*/\1/p')
if [ -n "$hog" ]; then
	check "a memory hog: stopped near its limit of 1024 MiB (at $hog of 4096)" test "$hog" -le 1280
else
	check_match "a memory hog: killed at its memory limit" 'killed at its memory limit' \
		"$(ev memhog '.stderr_tail // ""')"
fi
cut=$(out flood | sed -n '1s/^\[\([0-9]*\) bytes cut\]$/\1/p')
check "a 300 MB print: the tail says ${cut:-nothing} bytes were cut" test "${cut:-0}" -gt 314000000
check_match "a 300 MB print: the tail ends with its last line" 'flood done$' "$(out flood)"
check_same "a 300 MB print: no kept stream holds more than 1 MiB" "" \
	"$(find tmp -name 'std*.txt' -size +1024k)"
check_same "the layers: PID and mount namespaces, a private root, a uid of its own" \
	"true true true true" \
	"$(ev honest '[.sandbox.pidns, .sandbox.mountns, .sandbox.view, (.sandbox.uid != null)] | map(tostring) | join(" ")')"
check_same "no credential in any record, cache file or trace" "" \
	"$(grep -rl -F "$key" out.jsonl cache err.txt)"

# geak-eval's own environment, as /proc shows it, while it waits for input.
mkfifo fifo
env OPENAI_API_KEY="$key" geak-eval --cpu --no-cache --tmpdir tmp < fifo > /dev/null 2>&1 &
pid=$!
exec 3> fifo
sleep 0.5
check_same "geak-eval's /proc/PID/environ holds no credential" 0 \
	"$(tr '\0' '\n' < /proc/$pid/environ | grep -c -F "$key")"
exec 3>&-
wait $pid

# SIGTERM in the middle of a job whose candidate sleeps and left a daemon.
mkdir term
{
	printf 'import os, time\nif os.fork() == 0:\n    os.setsid()\n    os.execv("/bin/sleep", ["sleep", "31338.5"])\ntime.sleep(60)\n'
	cat "$c/honest.py"
} > term-code.py
# Not code.py: record writes that one while jq reads.
record ancestors | jq -c '.code = $code' --rawfile code term-code.py > term.jsonl
geak-eval --cpu --no-cache --static off --tmpdir term -v term.jsonl > term.out 2> term.err &
pid=$!
n=0
while ! grep -q 'cand-.*running' term.err 2>/dev/null && [ $n -lt 600 ]; do
	sleep 0.1
	n=$((n + 1))
done
sleep 1
kill -TERM $pid
wait $pid 2>/dev/null # the shell would say "Terminated"
rc=$?
[ "$rc" = 143 ] || { echo "# SIGTERM: exit $rc; its record and trace:"
	jq -c '.eval | {stage, reason, message, stdout_tail, stderr_tail}' term.out | sed 's/^/#   /'
	tail -n 20 term.err | sed 's/^/#   /'; } >&2
check_same "SIGTERM: geak-eval ends by it" 143 "$rc"
check_same "SIGTERM: its run directory is gone" "" "$(ls term)"
# The job killed under it is no result: its record stays out (a resumed
# run evaluates it again).
check_same "SIGTERM: no record of the killed job" 0 "$(wc -l < term.out)"
check_same "SIGTERM: the job and its daemon are gone" 0 "$(ps -eo args | grep -c '^sleep 31338.5')"
check_same "SIGTERM: its cgroups are gone" "" \
	"$(ls -d /sys/fs/cgroup/geak-eval-$pid-* /sys/fs/cgroup/unified/geak-eval-$pid-* 2>/dev/null)"

# A task's own memory limit (task.memory_mib) is its jobs' where
# --memory-limit is not given: the hog of 1536 MiB runs to its end under
# 3072.
record memhog | sed 's/< 16:/< 6:/' | jq -c '.task.memory_mib = 3072' > big.jsonl
check_match "the raised limit is what the hog is given" '"memory_mib":3072' "$(cat big.jsonl)"
geak-eval -j 1 --cpu --static off --no-cache --tmpdir tmp --timeout 60 big.jsonl \
	> big-out.jsonl 2> big-err.txt
check_match "a task's memory_mib: the hog gets all it asked for" \
	'allocated 1536 MiB' "$(jq -r '.eval.stdout_tail // ""' big-out.jsonl)"
# Under a raised limit that is still too small, the kill names that limit.
if [ "$(ev memhog '.sandbox.memory')" = cgroup ]; then
	jq -c '.task.memory_mib = 1280' big.jsonl > raised.jsonl
	geak-eval -j 1 --cpu --static off --no-cache --tmpdir tmp --timeout 60 \
		raised.jsonl > raised-out.jsonl 2>/dev/null
	check_match "killed under a task's memory_mib: the message names that limit" \
		'killed at its memory limit \(1280 MiB' "$(jq -r '.eval.stderr_tail // ""' raised-out.jsonl)"
else
	skip "no memory cgroup"
fi

# A job killed at its default share of the host's memory (3/4 of it over
# -j, 2048 MiB at least) runs once more beside the others, allowed what
# the host has available then less an eighth of its memory (at most
# half of it): the hog of 3072 MiB at -j 64 runs to its end.  Under an rlimit (no cgroup) the
# hog is stopped, not killed, and nothing runs again.
if [ "$(ev memhog '.sandbox.memory')" = cgroup ] &&
	[ "$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)" -gt 8192 ]; then
	record memhog | sed 's/< 16:/< 12:/' > share.jsonl
	geak-eval -j 64 -v --cpu --static off --no-cache --tmpdir tmp --timeout 120 share.jsonl \
		> share-out.jsonl 2> share-err.txt
	check_match "its share ran out: the hog runs again and gets all it asked for" \
		'allocated 3072 MiB' "$(jq -r '.eval.stdout_tail // ""' share-out.jsonl)"
	check_same "noted oom_retry, the retry traced with the memory it was given" "oom_retry 1" \
		"$(jq -r '.eval.notes | map(select(. == "oom_retry")) | join(",")' share-out.jsonl) $(grep -c \
			"cand-.*: killed at its share of the host's memory; once more, allowed [0-9]* MiB" \
			share-err.txt)"
	geak-eval -j 64 --cpu --static off --no-cache --tmpdir tmp --timeout 120 --memory-limit 2048 \
		share.jsonl > given-out.jsonl 2>/dev/null
	check_match "with --memory-limit given it is killed there, and not run again" \
		'killed at its memory limit' "$(jq -r '.eval.stderr_tail // ""' given-out.jsonl)"
else
	for i in 1 2 3; do skip "no memory cgroup, or under 8 GiB available"; done
fi

kill "$victim"
rm -f /tmp/geak-sbx-$tag /dev/shm/geak-sbx-$tag "$HOME/geak-sbx-$tag" /root/geak-sbx-$tag 2>/dev/null
done_testing
