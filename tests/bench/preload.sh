#!/bin/sh
# What the worker's preload saves each job: a job is a fork of the warm
# worker, and what it imports after the fork it imports anew.  Times N
# forked children that import geak_worker.PRELOAD themselves, against N
# forked from a parent that imported it first (the worker's way).
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
import geakh  # noqa: F401
from geakh import calibrate, guard, judge, pyprof, run, sandbox, static  # noqa: F401

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


def children():
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            load()
            os._exit(0)
        os.waitpid(pid, 0)
        ms.append((time.perf_counter() - t0) * 1000)
    return statistics.median(ms)


cold = children()
load()
warm = children()
print(f"{len(names)} modules, {n} jobs each")
print(f"imported in each job:      {cold:8.1f} ms a job (median)")
print(f"imported before the fork:  {warm:8.1f} ms a job (median)")
print(f"saved: {cold - warm:.1f} ms a job, {cold / warm:.1f}x")
PY
