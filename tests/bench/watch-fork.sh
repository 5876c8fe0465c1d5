#!/bin/sh
# What a forked job pays for the watch on its calls (outside.py): the
# first operation under a dispatch mode imports torch._dynamo.  Times N
# forked children that run one small operation under a dispatch mode,
# forked from a parent that had not imported torch._dynamo, against N
# forked after it did (outside.py's import: the worker's way).
#
#   tests/bench/watch-fork.sh [N]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${GEAK_PYTHON:=$top/.venv/bin/python}"
exec "$GEAK_PYTHON" - "${1:-10}" <<'PY'
import os, statistics, sys, time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

n = int(sys.argv[1])


class Mode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def children():
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            with Mode():
                torch.ones(4) + 1
            os._exit(0)
        os.waitpid(pid, 0)
        ms.append((time.perf_counter() - t0) * 1000)
    return statistics.median(ms)


assert "torch._dynamo" not in sys.modules, "torch imported torch._dynamo itself"
cold = children()
import torch._dynamo  # noqa: E402,F401
warm = children()
print(f"{n} jobs each, one operation under a dispatch mode")
print(f"torch._dynamo imported in each job:     {cold:8.1f} ms a job (median)")
print(f"torch._dynamo imported before the fork: {warm:8.1f} ms a job (median)")
print(f"saved: {cold - warm:.1f} ms a job, {cold / warm:.1f}x")
PY
