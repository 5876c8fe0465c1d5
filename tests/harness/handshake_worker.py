"""Drive geak_worker.py (CPU mode) through one run job with the
handshake geak-eval uses on a GPU, for tests/0342-eval-pause.t: the job
runs the test and checks the performance cases, says {"ready": true} and
times nothing until told to go; the wait does not count against its
time; told to go, it says {"timed": true} before its answer; told no,
it is stopped.

    handshake_worker.py WORKDIR WAIT_SECONDS go|no -> one line of JSON
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pause_worker import start_worker  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))


# Small inputs: Triton's interpreter is slow.
PERF = '''import torch


def perf_inputs():
    return [(torch.randn(n, device="cuda"), torch.randn(n, device="cuda")) for n in (300, 1000)]
'''


def main(d, wait_s, answer):
    cheats = os.path.join(top, "tests", "cheats")
    spec = {"suite": "plain", "name": "add", "seeds": [42]}
    for key, name in (("reference", "add_reference.py"), ("code", "honest.py"),
                      ("test", "add_test.py")):
        with open(os.path.join(cheats, name)) as fp:
            spec[key] = fp.read()
    spec["perf"] = PERF
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "job.json"), "w") as fp:
        json.dump(spec, fp)
    worker, rfile, wfile = start_worker()
    # 10 s after the set-up: less than the wait for go in the test.
    plan = {"runs": [42], "perf": {"checks": 1}, "timing": {"reps": 3, "warmup": 2, "reference": True}}
    wfile.write((json.dumps({"op": "run", "dir": d, "nonce": "n0nce", "plan": plan,
                             "timeout": 10, "compile_timeout": 60, "handshake": True}) + "\n").encode())
    wfile.flush()
    first = json.loads(rfile.readline())
    time.sleep(wait_s)
    timed_early = os.path.exists(os.path.join(d, "timing.json"))
    wfile.write((json.dumps({"go": answer == "go"}) + "\n").encode())
    wfile.flush()
    before = []  # what the job said between go and its answer
    resp = json.loads(rfile.readline())
    while "status" not in resp:
        before.append(resp)
        resp = json.loads(rfile.readline())
    wfile.write(b'{"op": "quit"}\n')
    wfile.flush()
    worker.wait(timeout=30)
    timing = {}
    if os.path.exists(os.path.join(d, "timing.json")):
        with open(os.path.join(d, "timing.json")) as fp:
            timing = json.load(fp)
    print(json.dumps({"first": first, "timed_before_go": timed_early, "status": resp.get("status"),
                      "code": resp.get("code"), "before": before, "nonce": timing.get("nonce"),
                      "error": timing.get("error"), "shapes": len(timing.get("cases") or [])}))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), sys.argv[3])
