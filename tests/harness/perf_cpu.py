"""Drive the harness worker (CPU mode) through a task's whole path with its
performance cases, for tests/0360-eval-perf.t: the reference calibrated
with its cases, the candidate run by the profile's plan (and, with
GEAK_TEST_TIME set, timed after its handshake), and both parts judged.
Times mean nothing on the CPU; the decisions are what is tested.

    perf_cpu.py REF.py CAND.py WORKDIR [PERF.py]
        the plain task "add" of tests/cheats with REF.py as its reference,
        CAND.py as the candidate and small performance inputs (or PERF.py)
    perf_cpu.py RECORDS.jsonl WORKDIR
        the first record of a file, its task and code as geak-eval gets them
    perf_cpu.py --cases LIST
        each line of LIST a JSON array, [NAME, ARG...] with the arguments
        of either form above: every case judged by one pair of workers,
        as geak-eval's slot judges many records (each job is a fresh fork
        of its worker, so a case sees nothing of those before it)

Prints one line of JSON a case: {"profile": {...}, "run": verdict, "timed":
verdict or null, "timing": timing.json or null}, with "name": NAME under
--cases, or "name" and "error" where the case could not be driven.
"""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from pause_worker import start_worker  # noqa: E402

top = os.path.dirname(os.path.dirname(here))
PERF = '''import torch


def perf_inputs():
    return [(torch.randn(n, device="cuda"), torch.randn(n, device="cuda")) for n in (300, 1000)]


def gbps(args, ms):
    return 3 * args[0].numel() * args[0].element_size() / (ms * 1e-3) / 1e9
'''


def read(path):
    with open(path) as fp:
        return fp.read()


def add_spec(ref, cand, perf=None):
    cheats = os.path.join(top, "tests", "cheats")
    return {"suite": "plain", "name": "add", "reference": read(ref), "code": read(cand),
            "test": read(os.path.join(cheats, "add_test.py")), "perf": read(perf) if perf else PERF}


def record_spec(path):
    with open(path) as fp:
        rec = json.loads(fp.readline())
    spec = {k: v for k, v in rec["task"].items() if k in ("suite", "name", "reference", "test", "perf",
                                                         "entry", "tolerance", "perf_cases")}
    spec["code"] = rec["code"]
    if rec["task"].get("test_autotune") and "@triton.autotune" in rec["code"]:
        spec["cand_test"] = rec["task"]["test_autotune"]
    return spec


class Worker:
    def __init__(self):
        self.proc, self.rfile, self.wfile = start_worker()

    def send(self, msg):
        self.wfile.write((json.dumps(msg) + "\n").encode())
        self.wfile.flush()
        return json.loads(self.rfile.readline())

    def quit(self):
        self.wfile.write(b'{"op": "quit"}\n')
        self.wfile.flush()
        self.proc.wait(timeout=30)


def load(d, name):
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return None
    with open(path) as fp:
        return json.load(fp)


def spec_and_dir(args):
    if args[0].endswith(".jsonl"):
        return record_spec(args[0]), args[1]
    return add_spec(args[0], args[1], args[3] if len(args) > 3 else None), args[2]


def finish_timing(w, go):
    """geak-eval's go (or no) to a run waiting after its handshake; then
    the worker's messages up to the job's end ({"timed": true} may come
    first), so that the timing's files are whole and the worker is free."""
    w.wfile.write((json.dumps({"go": go}) + "\n").encode())
    w.wfile.flush()
    while "status" not in json.loads(w.rfile.readline()):
        pass


def drive(w, j, spec, d, timed):
    """One case through the workers w (runs) and j (judges): its JSON."""
    d = os.path.abspath(d)
    spec = dict(spec, seeds=[42, 43, 44], cpu=True)
    prof_dir, cand_dir = os.path.join(d, "profile"), os.path.join(d, "cand")
    for sub in (prof_dir, cand_dir, os.path.join(d, "judge"), os.path.join(d, "judge-timed")):
        os.makedirs(sub, exist_ok=True)
    with open(os.path.join(prof_dir, "job.json"), "w") as fp:
        json.dump(dict(spec, code=spec["reference"]), fp)
    w.send({"op": "calibrate", "dir": prof_dir, "nonce": "p0", "timeout": 600, "compile_timeout": 300,
            "run_budget": 300, "perf": True})
    profile = load(prof_dir, "profile.json") or {}
    out = {"profile": {k: profile.get(k) for k in ("ok", "error", "cases", "poison", "one_call",
                                                   "perf_error")}}
    if not profile.get("ok"):
        return out
    with open(os.path.join(cand_dir, "job.json"), "w") as fp:
        json.dump(spec, fp)
    plan = profile["candidate_plan"]
    if timed and plan.get("perf"):
        plan["timing"] = {"reps": 3, "warmup": 2, "reference": True, "skip": plan["perf"].get("skip", [])}
    first = w.send({"op": "run", "dir": cand_dir, "nonce": "c0", "timeout": 300, "compile_timeout": 300,
                    "plan": plan, "handshake": bool(plan.get("timing"))})
    j.send({"op": "judge", "dir": os.path.join(d, "judge"), "nonce": "j0", "profile": prof_dir,
            "cand": cand_dir, "cand_nonce": "c0", "part": "run", "timeout": 300, "compile_timeout": 300})
    out["run"] = load(os.path.join(d, "judge"), "verdict.json")
    out["timed"] = out["timing"] = None
    out["ready"] = first if first.get("ready") else None
    if first.get("ready"):
        go = bool(out["run"] and out["run"]["exec"])
        finish_timing(w, go)
        if go:
            j.send({"op": "judge", "dir": os.path.join(d, "judge-timed"), "nonce": "j1",
                    "profile": prof_dir, "cand": cand_dir, "cand_nonce": "c0", "part": "timed",
                    "timeout": 300, "compile_timeout": 300})
            out["timed"] = load(os.path.join(d, "judge-timed"), "verdict.json")
            out["timing"] = load(cand_dir, "timing.json")
    return out


def cases(path):
    with open(path) as fp:
        return [json.loads(line) for line in fp if line.strip()]


def main(args):
    timed = bool(os.environ.get("GEAK_TEST_TIME"))
    batch = cases(args[1]) if args[0] == "--cases" else [[None] + args]
    w, j = Worker(), Worker()  # as geak-eval's slots: one runs, one judges
    for case in batch:
        name, case_args = case[0], case[1:]
        try:
            out = drive(w, j, *spec_and_dir(case_args), timed)
        except Exception as exc:  # noqa: BLE001 - the case says it; the next gets fresh workers
            out = {"error": f"{type(exc).__name__}: {exc}"}
            for worker in (w, j):
                worker.proc.kill()
                worker.proc.wait()
            w, j = Worker(), Worker()
        if name is not None:
            out = dict(out, name=name)
        print(json.dumps(out), flush=True)
    j.quit()
    w.quit()


if __name__ == "__main__":
    main(sys.argv[1:])
