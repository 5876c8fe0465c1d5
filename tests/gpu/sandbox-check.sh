#!/bin/sh
# geak-eval's sandbox on a GPU machine: the hostile candidates of
# tests/sandbox/ (each followed by an honest kernel of the plain task
# "add"), evaluated on the GPU, and what held.
#
#   GEAK_PYTHON=python3 tests/gpu/sandbox-check.sh [OUT_DIR]
#
# Needs bin/geak-eval (built on another machine is fine: it links only
# jansson and the C library) and a Python with torch and triton.  Prints
# the machine's sandbox facilities, the layers the GPU runtime started
# under, then HELD or DID NOT HOLD for each check, and a count.  OUT_DIR
# (default out/sandbox-check) keeps the records, the trace and the jobs.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
o=${1:-$top/out/sandbox-check}
GEAK_PYTHON=${GEAK_PYTHON:-python3}
GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
eval_bin=$top/bin/geak-eval
[ -x "$eval_bin" ] || { echo "sandbox-check: $eval_bin is not built" >&2; exit 3; }
rm -rf "$o" && mkdir -p "$o/tmp" "$o/outside" "$o/term" || exit 3
cd "$o" || exit 3
verdict() { # 0|1 TEXT
	if [ "$1" = 0 ]; then
		echo "HELD: $2"
	else
		echo "DID NOT HOLD: $2"
	fi
}

main() {

echo "== the machine"
echo "kernel $(uname -r); $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-?}"); uid $(id -u)"
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>&1 | head -n 8
ls -l /dev/nvidia* /dev/kfd /dev/dri 2>/dev/null | sed 's/^/  /'
for f in /proc/sys/kernel/unprivileged_userns_clone /proc/sys/kernel/apparmor_restrict_unprivileged_userns \
	/proc/sys/user/max_user_namespaces /proc/sys/kernel/yama/ptrace_scope; do
	[ -r "$f" ] && echo "$f = $(cat "$f")"
done
awk '$9 == "cgroup2" { print "cgroup2 at " $5 }' /proc/self/mountinfo 2>/dev/null
echo "own cgroup: $(grep '^0::' /proc/self/cgroup)"
[ -r /sys/fs/cgroup/cgroup.controllers ] && echo "root controllers: $(cat /sys/fs/cgroup/cgroup.controllers);" \
	"enabled for children: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
"$GEAK_PYTHON" -c 'import ctypes; l = ctypes.CDLL(None); print("Landlock ABI", l.syscall(444, None, 0, 1))'
echo "bwrap: $(command -v bwrap || echo none)"
"$GEAK_PYTHON" -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "cuda", torch.version.cuda, "hip", torch.version.hip)'
"$eval_bin" --list-gpus | tr -d '\n' | cut -c1-300; echo

key=sk-geak-gpu-$$-0123456789abcdef
key64=$(printf %s "$key" | base64 | tr -d '\n')
tag=g$$
echo "outside-marker-$tag" > outside/outside.txt
sleep 1000 &
victim=$!

"$GEAK_PYTHON" - "$top" "$o" "$key64" "$tag" "$victim" <<'EOPY' > in.jsonl || exit 3
import json, os, sys
top, o, key64, tag, victim = sys.argv[1:]
sb, c = os.path.join(top, "tests/sandbox"), os.path.join(top, "tests/cheats")
read = lambda p: open(p).read()
task = {"suite": "plain", "name": "add", "reference": read(f"{c}/add_reference.py"),
        "test": read(f"{c}/add_test.py"), "perf": read(f"{c}/add_perf.py")}
honest = read(f"{c}/honest.py")
for name in ("ancestors", "redact", "writes", "reads", "kill", "daemon", "forks", "memhog", "flood", "honest"):
    code = "" if name == "honest" else read(f"{sb}/{name}.py")
    for a, b in (("@KEY64@", key64), ("@TAG@", tag), ("@OUTSIDE@", f"{o}/outside"), ("@PID@", victim),
                 ("@CHUNKS@", "32")):
        code = code.replace(a, b)
    print(json.dumps({"schema": 1, "id": "plain/add", "probe": name, "code": code + "\n" + honest,
                      "task": task}))
EOPY

echo "== the hostile candidates, on the GPU"
start=$(date +%s)
env OPENAI_API_KEY="$key" sh -c '"$0" -j 2 --static off --cache cache --tmpdir tmp --keep -v \
	--timeout 120 --compile-timeout 240 --proc-limit 128 --memory-limit 4096 in.jsonl \
	> out.jsonl 2> trace.txt' "$eval_bin"
status=$?
echo "geak-eval exited $status after $(( $(date +%s) - start )) s"
verdict "$( [ $status -le 1 ]; echo $?)" "geak-eval ran to its end (status $status)"
for f in cache/worker/*.json; do
	[ -r "$f" ] && "$GEAK_PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1]))["device"]; print("device:", d.get("name"), "| job layers:", d.get("layers"), "| first error:", d.get("sandbox_error") or d.get("landlock_error")); [print("  without", p["skip"] or "nothing", "->", p["error"] or "the device shows") for p in d.get("probes") or []]' "$f"
done
grep -o 'cand-[A-Za-z0-9]*: exit after [0-9.]* s' trace.txt | awk '{ s += $4; n++ } END { if (n) printf "candidate runs: %d, mean %.2f s\n", n, s / n }'

"$GEAK_PYTHON" - "$key" "$key64" "$tag" "$victim" "$o" "$HOME" <<'EOPY'
import glob, json, os, re, sys
key, key64, tag, victim, o, home = sys.argv[1:]
recs = {}
for line in open("out.jsonl"):
    r = json.loads(line)
    recs[r.get("probe")] = r.get("eval") or {"error": r.get("error")}
def ev(p):
    return recs.get(p) or {}
def out(p):
    return ev(p).get("stdout_tail") or ""
def cmdlines():
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(d + "/cmdline", "rb") as fp:
                yield fp.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            pass
def comms():
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(d + "/comm") as fp:
                yield fp.read().strip()
        except OSError:
            pass
checks = []
def check(ok, text):
    checks.append(bool(ok))
    print(("HELD: " if ok else "DID NOT HOLD: ") + text)
print("layers of the honest candidate:", json.dumps(ev("honest").get("sandbox")))
print("notes:", ev("honest").get("notes"), "| speedup:", ev("honest").get("speedup"))
check(re.search(r"ancestors [01] processes [1-3] secrets 0", out("ancestors")),
      "ancestors: none seen, no credential read (" + out("ancestors").strip()[:80] + ")")
check(key not in json.dumps(ev("redact")) and "[redacted:OPENAI_API_KEY]" in out("redact")
      and "secrets_in_env" in ev("redact").get("flags", []),
      "redaction: a printed key redacted, the candidate flagged secrets_in_env")
left = [p for p in (f"/tmp/geak-sbx-{tag}", f"/dev/shm/geak-sbx-{tag}", f"{home}/geak-sbx-{tag}",
                    f"/root/geak-sbx-{tag}", f"{o}/outside/geak-sbx-{tag}") if os.path.exists(p)]
check(not left, f"writes: nothing left outside its job ({left or 'none'})")
check("outside-marker" not in out("reads") and "unreadable /etc/shadow" in out("reads"),
      "reads: the file outside and /etc/shadow not read")
check(os.path.exists(f"/proc/{victim}") and "could not kill" in out("kill"),
      "a signal: the process outside is alive")
check(not [c for c in cmdlines() if c.startswith("sleep 31337.5")], "a daemon: none outlives geak-eval")
m = re.search(r"forked (\d+) of 400", out("forks"))
check(m and int(m.group(1)) < 400, f"a fork flood: stopped ({m.group(0) if m else out('forks')[:80]})")
check(not [c for c in comms() if c == "geak-sbx-flood"], "a fork flood: none outlives geak-eval")
m = re.search(r"allocated (\d+) MiB", out("memhog"))
killed = "memory limit" in (ev("memhog").get("stderr_tail") or "")
check((m and int(m.group(1)) <= 4096 + 256) or killed,
      f"a memory hog: stopped at its 4096 MiB limit ({m.group(0) if m else 'killed' if killed else 'neither'})")
m = re.match(r"\[(\d+) bytes cut\]", out("flood"))
big = [p for p in glob.glob("tmp/*/jobs/*/std*.txt") if os.path.getsize(p) > 1 << 20]
check(m and int(m.group(1)) > 314000000 and not big and out("flood").rstrip().endswith("flood done"),
      "a 300 MB print: cut to its tail, the cut counted")
# Not the fork flood: its sleepers hold its own process limit, which the
# GPU runtime's threads share, so its kernel may fail by its own doing.
honest = [p for p in ("ancestors", "writes", "reads", "kill", "daemon", "flood", "honest")
          if ev(p).get("exec") is not True]
check(not honest, f"the contained candidates pass on the GPU (not: {honest or 'none'})")
sb = ev("honest").get("sandbox") or {}
for layer in ("netns", "pidns", "mountns", "view", "cgroup"):
    check(sb.get(layer) is True, f"layer {layer} in force with CUDA")
check(sb.get("uid") is not None, f"layer uid in force with CUDA (uid {sb.get('uid')})")
check(sb.get("memory") == "cgroup", f"memory limited by a cgroup (here: {sb.get('memory')})")
check(sb.get("procs") == "cgroup", f"processes limited by a cgroup (here: {sb.get('procs')})")
check(sb.get("landlock_job") is True, "Landlock in force for the jobs with CUDA")
hits = [p for p in ["out.jsonl", "trace.txt"] + glob.glob("cache/**", recursive=True)
        if os.path.isfile(p) and key.encode() in open(p, "rb").read()]
check(not hits, f"no credential in any record, cache file or trace ({hits or 'none'})")
EOPY
kill "$victim" 2>/dev/null

echo "== geak-eval's own environment"
mkfifo fifo
env OPENAI_API_KEY="$key" "$eval_bin" --no-cache --tmpdir tmp < fifo > /dev/null 2>&1 &
pid=$!
exec 3> fifo
sleep 0.5
verdict "$(tr '\0' '\n' < /proc/$pid/environ | grep -q -F "$key"; [ $? = 1 ]; echo $?)" \
	"/proc/PID/environ of geak-eval holds no credential"
exec 3>&-
wait $pid

echo "== SIGTERM in the middle of a GPU job that left a daemon"
"$GEAK_PYTHON" - "$top" <<'EOPY' > term.jsonl
import json, sys
c = sys.argv[1] + "/tests/cheats"
read = lambda p: open(p).read()
code = ('import os, time\nif os.fork() == 0:\n    os.setsid()\n    os.execv("/bin/sleep", ["sleep", "31338.5"])\n'
        'import torch\ntorch.ones(1, device="cuda")\ntime.sleep(120)\n' + read(f"{c}/honest.py"))
print(json.dumps({"id": "plain/add", "code": code, "task": {"suite": "plain", "name": "add",
      "reference": read(f"{c}/add_reference.py"), "test": read(f"{c}/add_test.py")}}))
EOPY
"$eval_bin" --no-cache --static off --tmpdir term -v term.jsonl > /dev/null 2> term.err &
pid=$!
n=0
while ! grep -q 'cand-.*running' term.err && [ $n -lt 1200 ]; do
	sleep 0.1
	n=$((n + 1))
done
sleep 5
kill -TERM $pid
wait $pid 2>/dev/null
status=$?
sleep 1
verdict "$( [ $status = 143 ]; echo $?)" "SIGTERM: geak-eval ends by it (status $status)"
verdict "$( [ -z "$(ls term)" ]; echo $?)" "SIGTERM: its run directory is gone"
verdict "$(ps -eo args | grep -q '^sleep 31338.5'; [ $? = 1 ]; echo $?)" "SIGTERM: the job and its daemon are gone"
verdict "$( [ -z "$(ls -d /sys/fs/cgroup/geak-eval-$pid /sys/fs/cgroup/*/geak-eval-$pid 2>/dev/null)" ]; echo $?)" \
	"SIGTERM: its cgroups are gone"
rm -f /tmp/geak-sbx-$tag /dev/shm/geak-sbx-$tag "$HOME/geak-sbx-$tag" /root/geak-sbx-$tag 2>/dev/null
}

main 2>&1 | tee report.txt
held=$(grep -c '^HELD: ' report.txt)
failed=$(grep -c '^DID NOT HOLD: ' report.txt)
echo "== $held held; $failed did not (details above, and in $o: report.txt, out.jsonl, trace.txt, tmp/)"
[ "$failed" = 0 ]
