"""Drive geak_worker.py (CPU mode) through one run job whose plan asks
each performance case for one output of a call amid calls queued back to
back (as calibrations do on a GPU), for tests/0360-eval-perf.t:

    queued_run.py WORKDIR N -> "CASES OUTPUTS_PER_CASE SAME"

SAME is true when every case's queued output equals its checked one (the
add kernel does not race)."""
import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pause_worker import start_worker  # noqa: E402
from perf_cpu import add_spec  # noqa: E402

top = os.path.dirname(os.path.dirname(here))


def main(d, n):
    cheats = os.path.join(top, "tests", "cheats")
    spec = add_spec(os.path.join(cheats, "add_reference.py"), os.path.join(cheats, "honest.py"))
    spec["seeds"] = [42]
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "job.json"), "w") as fp:
        json.dump(spec, fp)
    worker, rfile, wfile = start_worker()
    plan = {"runs": [42], "perf": {"checks": 1, "queued": n}}
    wfile.write((json.dumps({"op": "run", "dir": d, "nonce": "n0nce", "plan": plan,
                             "timeout": 60, "compile_timeout": 120}) + "\n").encode())
    wfile.flush()
    resp = json.loads(rfile.readline())
    while "status" not in resp:
        resp = json.loads(rfile.readline())
    wfile.write(b'{"op": "quit"}\n')
    wfile.flush()
    worker.wait(timeout=30)
    outs = torch.load(os.path.join(d, "outputs.pt"), weights_only=False)["perf"]
    counts = sorted({len(v) for v in outs.values()})
    same = all(len(v) == 2 and torch.equal(v[0]["ret"], v[1]["ret"]) for v in outs.values())
    print(len(outs), ",".join(map(str, counts)), str(same).lower())


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
