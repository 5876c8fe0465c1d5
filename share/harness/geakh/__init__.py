"""geakh: the evaluation harness of geak-eval (see geak-eval(1), and
geak-harness(7) for its jobs).

The modules split by trust.  Untrusted side, in the processes that import
the code under test: run.py (a run by its plan), tasks.py and rocm.py (how
each suite loads and runs), source.py (its source surgery), entry.py and
launches.py (its calls and its kernels' launches), timing.py and bench.py
(its timing), autotune.py (the one shim over Triton's autotuner), guard.py
(seeding, poison, the parent's death), sandbox.py (the job's namespaces,
cgroup, uid, limits and Landlock), cpu.py (the CPU mode).  Trusted side, in
processes that never import it: calibrate.py (the reference's profile,
from runs it forks), judge.py (pass or fail), compare.py and values.py
(the one rule, and outputs as plain data), static.py (its source read).
"""
import hashlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SEPARATOR = "#" * 146


def spread(n, k):
    """The indices of the performance cases run of n: k of them evenly
    spread over the suite's order, the first and the last among them, the
    same for every code of the task (so that speedups compare); all of
    them where k is 0 or at least n."""
    if not k or n <= k:
        return list(range(n))
    if k == 1:
        return [n - 1]
    return sorted({round(j * (n - 1) / (k - 1)) for j in range(k)})


def harness_version():
    """A digest of every harness source file: any change to the harness
    changes the version, and with it every cache key."""
    h = hashlib.sha256()
    root = os.path.dirname(HERE)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            if f.endswith(".py") or f == "requirements.txt":
                p = os.path.join(dirpath, f)
                h.update(os.path.relpath(p, root).encode() + b"\0")
                with open(p, "rb") as fp:
                    h.update(fp.read())
    return "h1-" + h.hexdigest()[:16]
