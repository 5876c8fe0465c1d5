#!/bin/sh
# What the worker's imports save each job: a job is a fork of the warm
# worker, and what it imports after the fork it imports anew.  Times N
# forked children against N forked from a parent that imported first
# (the worker's way), twice:
#  - the first operation under a dispatch mode (the watch on every
#    call, outside.py), which imports torch._dynamo where the parent
#    had not;
#  - the modules of geak_worker.PRELOAD.
#
#   tests/bench/preload.sh [N]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${GEAK_PYTHON:=$top/.venv/bin/python}"
TRITON_INTERPRET=1 exec "$GEAK_PYTHON" - "${1:-10}" "$top/share/harness" <<'PY'
import ast, importlib, os, statistics, sys, time

n, harness = int(sys.argv[1]), sys.argv[2]
sys.path.insert(0, harness)
sys.dont_write_bytecode = True
import numpy, torch, triton  # noqa: E401,F401  what the worker imports before
from torch.utils._python_dispatch import TorchDispatchMode


def children(job):
    """The median milliseconds of n forked children that run job."""
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            job()
            os._exit(0)
        os.waitpid(pid, 0)
        ms.append((time.perf_counter() - t0) * 1000)
    return statistics.median(ms)


def report(what, cold, warm):
    print(f"{what}, {n} jobs each")
    print(f"  in each job:      {cold:8.1f} ms a job (median)")
    print(f"  before the fork:  {warm:8.1f} ms a job (median)")
    print(f"  saved: {cold - warm:.1f} ms a job, {cold / warm:.1f}x")


class Mode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def first_op():
    with Mode():
        torch.ones(4) + 1


assert "torch._dynamo" not in sys.modules, "torch imported torch._dynamo itself"
cold = children(first_op)
import torch._dynamo  # noqa: E402,F401
report("one operation under a dispatch mode, torch._dynamo imported", cold, children(first_op))

import geakh  # noqa: E402,F401
from geakh import calibrate, guard, judge, pyprof, run, sandbox, static  # noqa: E402,F401

# The list itself, read from the worker's source (importing it starts one).
tree = ast.parse(open(os.path.join(harness, "geak_worker.py")).read())
names = next(ast.literal_eval(a.value) for a in tree.body
             if isinstance(a, ast.Assign) and getattr(a.targets[0], "id", "") == "PRELOAD")


def load():
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


cold = children(load)
load()
report(f"the worker's PRELOAD ({len(names)} modules) imported", cold, children(load))
PY
