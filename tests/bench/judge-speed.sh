#!/bin/sh
# The judge's comparison of one large output (an attention kernel's, 16M
# float32 elements by default) on one thread, as geak-eval's workers run
# it: the judge as it is against a comparison that widens every element to
# float64 (how it compared before), measured in the same run, for outputs
# equal to the reference's and for outputs off in the last bits.
#
#   tests/bench/judge-speed.sh [MILLIONS_OF_ELEMENTS]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${GEAK_SHAREDIR:=$top/share}" "${GEAK_PYTHON:=$top/.venv/bin/python}"
cd "$GEAK_SHAREDIR/harness" || exit 1
OMP_NUM_THREADS=1 exec "$GEAK_PYTHON" - "${1:-16}" <<'PY'
import sys
import time

import torch

from geakh import judge

n = int(float(sys.argv[1]) * (1 << 20))
torch.manual_seed(0)
ref = torch.randn(n)


def widened(a, b):
    close = torch.isclose(a.double(), b.double(), rtol=1e-3, atol=1e-3, equal_nan=True)
    assert bool(close.all())


def judged(a, b):
    judge.compare(a, b, 1e-3, 1e-3)
    judge.downgraded(a, b)


def seconds(fn, runs):
    t0 = time.perf_counter()
    for r in runs:
        fn(r, ref)
    return time.perf_counter() - t0


for label, runs in (("equal", [ref.clone() for _ in range(4)]),
                    ("last bits off", [ref * (1 + 1e-6 * torch.randn(n)) for _ in range(4)])):
    base, now = seconds(widened, runs), seconds(judged, runs)
    print(f"judge, {n} float32 elements x {len(runs)} runs ({label}), 1 thread: "
          f"float64 comparison {base:.2f} s, judge {now:.3f} s, {base / now:.1f}x")
PY
