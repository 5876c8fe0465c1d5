#!/bin/sh
# geak-eval's limits hold against what a candidate or a task asks: the
# job's /tmp and /dev/shm count toward its memory limit (what it can hold
# in them and its heap together stays within --memory-limit), and a task's
# own memory_mib and timeout are held to --max-task-memory and
# --max-task-timeout, below an explicit --timeout (under a watchdog).
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
plan 8

c=$top/tests/cheats
mkdir tmp
# A candidate that fills its /tmp and /dev/shm, then takes heap until it
# gets no more, says how much it held, lets it all go, and is honest.
cat > hog.py <<'PY'
import os
MIB = 1 << 20


def _fill(folder):
    n, path = 0, os.path.join(folder, "geak-fill")
    try:
        with open(path, "wb") as fp:
            while n < 8192:
                fp.write(b"x" * MIB)
                fp.flush()
                n += 1
    except OSError:
        pass
    return n, path


_tmp, _p1 = _fill("/tmp")
_shm, _p2 = _fill("/dev/shm")
_heap = []
try:
    while len(_heap) < 1024:
        _heap.append(bytearray(16 * MIB))
except MemoryError:
    pass
print(f"held tmp {_tmp} shm {_shm} heap {16 * len(_heap)} MiB", flush=True)
del _heap
for _p in (_p1, _p2):
    os.remove(_p)
PY
cat hog.py "$c/honest.py" > code.py
jq -nc --rawfile ref "$c/add_reference.py" --rawfile test "$c/add_test.py" --rawfile code code.py \
	'{schema: 1, id: "plain/add", code: $code,
	  task: {suite: "plain", name: "add", reference: $ref, test: $test}}' > hog.jsonl
timeout -s KILL 240 geak-eval --cpu --static off --no-cache --tmpdir tmp --timeout 60 \
	--memory-limit 1024 hog.jsonl > hog.out 2> hog.err
check_same "geak-eval exits 0 (the hog)" 0 $?
held=$(jq -r '.eval.stdout_tail // ""' hog.out | sed -n 's/^held tmp \([0-9]*\) shm \([0-9]*\) heap \([0-9]*\) MiB$/\1 \2 \3/p' | head -n 1)
if [ "$(jq -r '.eval.sandbox.memory // ""' hog.out)" = cgroup ]; then
	skip "a memory cgroup holds the job: its tmpfs pages are charged there"
elif [ -n "$held" ] && [ $(echo "$held" | tr ' ' '+' | bc) -le 1024 ]; then
	ok "/tmp, /dev/shm and the heap together stay within --memory-limit 1024 ($held MiB)"
else
	not_ok "/tmp, /dev/shm and the heap together stay within --memory-limit 1024 (got '$held')"
	sed 's/^/# /' hog.err | tail -n 5
fi

# A task that asks for 95 TiB and 100000 s: a candidate that says how
# large its /tmp is; a reference that sleeps for ever.
cat > say.py <<'PY'
import os
_st = os.statvfs("/tmp")
print(f"tmp {_st.f_blocks * _st.f_frsize >> 20} MiB", flush=True)
PY
cat say.py "$c/honest.py" > code.py
printf 'import time\ntime.sleep(10 ** 6)\n' | cat - "$c/add_reference.py" > sleeper.py
{
	jq -nc --rawfile ref "$c/add_reference.py" --rawfile test "$c/add_test.py" --rawfile code code.py \
		'{schema: 1, id: "plain/add", probe: "big", code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test,
		         memory_mib: 100000000, timeout: 100000}}'
	jq -nc --rawfile ref sleeper.py --rawfile test "$c/add_test.py" --rawfile code "$c/honest.py" \
		'{schema: 1, id: "plain/add", probe: "sleeper", code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test, timeout: 100000}}'
} > ask.jsonl
t0=$(date +%s)
timeout -s KILL 150 geak-eval --cpu --static off --no-cache --tmpdir tmp --timeout 10 \
	--compile-timeout 10 ask.jsonl > ask.out 2> ask.err
st=$?
t1=$(date +%s)
check_same "geak-eval ends by itself within the watchdog (the task's timeout)" 1 "$st"
if [ $((t1 - t0)) -lt 100 ]; then
	ok "the sleeping reference is stopped at --timeout and --compile-timeout ($((t1 - t0)) s)"
else
	not_ok "the sleeping reference is stopped at --timeout and --compile-timeout ($((t1 - t0)) s)"
fi
check_match "and said so" 'ran past 20 s' \
	"$(jq -r 'select(.probe == "sleeper") | .error.message' ask.out)"
mib=$(jq -r 'select(.probe == "big") | .eval.stdout_tail // ""' ask.out | sed -n 's/^tmp \([0-9]*\) MiB$/\1/p' | head -n 1)
host=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
if [ -n "$mib" ] && [ "$mib" -le $((host / 2)) ]; then
	ok "a task's memory_mib is held to --max-task-memory (its /tmp: $mib MiB)"
else
	not_ok "a task's memory_mib is held to --max-task-memory (its /tmp: '$mib' MiB, host $host MiB)"
fi
head -n 1 ask.jsonl | timeout -s KILL 150 geak-eval --cpu --static off --no-cache --tmpdir tmp --max-task-memory 800 \
	> ask2.out 2>/dev/null
mib=$(jq -r 'select(.probe == "big") | .eval.stdout_tail // ""' ask2.out | sed -n 's/^tmp \([0-9]*\) MiB$/\1/p' | head -n 1)
check_same "--max-task-memory 800: its /tmp is an eighth of it" 100 "$mib"
check_same "no run folder is left" "" "$(ls tmp)"
done_testing
