"""Drive geakh.timing's two stages on the CPU (Triton's interpreter, with
the CPU mode's device mapping), for tests/0360-eval-timing.t: the times
mean nothing here, the decisions are what is tested.

    timing_cpu.py STAGE CANDIDATE.py WORKDIR [REFERENCE.py] -> timing.json
        (the plain task "add" of tests/cheats, small performance inputs)
    timing_cpu.py STAGE RECORDS.jsonl WORKDIR  -> the same, for the first
        record of a file (task and code as geak-eval gets them)

With GEAK_TEST_ALL_CONFIGS set, autotuners search every configuration
(the CPU mode keeps the first alone), each timed 0, so the first wins and
the second is the runner-up.  With GEAK_TEST_DEVICE_LOST set, every error
counts as one that leaves the device unusable (as a kernel's illegal
memory access does on a GPU).  GEAK_TEST_REQUEST: JSON merged into the
request (e.g. {"retuned": false}).
"""
import json
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(top, "share")), "harness"))

from geakh import cpu, timing  # noqa: E402

PERF = '''import torch


def perf_inputs():
    return [(torch.randn(n, device="cuda"), torch.randn(n, device="cuda")) for n in (300, 1000)]
'''


def add_spec(cand, reference=None):
    cheats = os.path.join(top, "tests", "cheats")
    with open(reference or os.path.join(cheats, "add_reference.py")) as fp:
        ref = fp.read()
    with open(cand) as fp:
        code = fp.read()
    return {"suite": "plain", "name": "add", "code": code, "reference": ref, "perf": PERF,
            "test": "", "seeds": [42]}


def record_spec(path):
    with open(path) as fp:
        rec = json.loads(fp.readline())
    spec = dict(rec["task"])
    spec.update(code=rec["code"], seeds=[42])
    return spec


def main(stage, src, d, reference=None):
    spec = record_spec(src) if src.endswith(".jsonl") else add_spec(src, reference)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "job.json"), "w") as fp:
        json.dump(spec, fp)
    from triton.runtime import autotuner
    prune = autotuner.Autotuner.prune_configs
    cpu.install(poison=False)
    if os.environ.get("GEAK_TEST_ALL_CONFIGS"):
        autotuner.Autotuner.prune_configs = prune
    if os.environ.get("GEAK_TEST_DEVICE_LOST"):
        timing.device_usable = lambda: False
    req = {"stage": stage, "reps": 3, "warmup": 1}
    req.update(json.loads(os.environ.get("GEAK_TEST_REQUEST", "{}")))
    timing.main(d, "n0nce", lambda: None, req)
    with open(os.path.join(d, "timing.json")) as fp:
        print(fp.read())


if __name__ == "__main__":
    main(*sys.argv[1:5])
