"""Drive geak_worker.py (CPU mode) through one run job that a timing run
pauses, for tests/0342-eval-pause.t: SIGUSR1 to the worker must stop the
job's process (state T, no progress) and stop its clock, SIGUSR2 must let
it go on, so that a job paused for longer than its whole time limit still
ends normally.

    pause_worker.py WORKDIR PAUSE_SECONDS -> one line of JSON
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
share = os.environ.get("GEAK_SHAREDIR", os.path.join(top, "share"))

TEST = '''import time
import torch
calls = []


def test(fn):
    if not calls:
        time.sleep(2.0)
    calls.append(1)
    return {"y": fn(torch.ones(3))}
'''


def children(pid):
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as fp:
            out += [int(x) for x in fp.read().split()]
    return out


def state(pid):
    with open(f"/proc/{pid}/stat") as fp:
        return fp.read().rsplit(")", 1)[1].split()[0]


def start_worker():
    """The worker in the CPU mode, on a socket as descriptor 3, told its
    sandbox settings (none) and its greeting read: (process, reader,
    writer)."""
    ours, theirs = socket.socketpair()
    env = dict(os.environ, GEAK_EVAL_CPU="1")
    worker = subprocess.Popen(
        [sys.executable, "-u", "-B", os.path.join(share, "harness", "geak_worker.py")],
        close_fds=False, env=env,
        preexec_fn=lambda: os.dup2(theirs.fileno(), 3))
    theirs.close()
    rfile, wfile = ours.makefile("rb"), ours.makefile("wb")
    wfile.write(b'{"op": "start", "sandbox": {}}\n')
    wfile.flush()
    json.loads(rfile.readline())  # the greeting
    return worker, rfile, wfile


def main(d, pause_s):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "job.json"), "w") as fp:
        json.dump({"suite": "plain", "name": "op", "entry": "op", "seeds": [42],
                   "code": "def op(x):\n    return x * 2\n", "test": TEST}, fp)
    worker, rfile, wfile = start_worker()
    # 3 s to the first call and 3 s after it: 6 s in all, less than the
    # pause alone.
    wfile.write((json.dumps({"op": "run", "dir": d, "nonce": "n0nce", "timeout": 3,
                             "compile_timeout": 3, "plan": {"runs": [42]}}) + "\n").encode())
    wfile.flush()
    time.sleep(0.8)
    job = children(worker.pid)
    worker.send_signal(signal.SIGUSR1)
    time.sleep(0.5)
    states = [state(p) for p in job]
    result_during = os.path.exists(os.path.join(d, "result.json"))
    time.sleep(pause_s)
    result_paused = os.path.exists(os.path.join(d, "result.json"))
    worker.send_signal(signal.SIGUSR2)
    resp = json.loads(rfile.readline())
    wfile.write(b'{"op": "quit"}\n')
    wfile.flush()
    worker.wait(timeout=30)
    with open(os.path.join(d, "result.json")) as fp:
        res = json.load(fp)
    print(json.dumps({"jobs": len(job), "states": states, "result_while_paused": result_during or result_paused,
                      "status": resp.get("status"), "code": resp.get("code"), "wall": resp.get("wall"),
                      "nonce": res.get("nonce"), "runs_ok": all(r.get("ok") for r in res.get("runs", []))}))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
