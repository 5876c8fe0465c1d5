"""Whether a side's own host overhead shows in the timing's queued calls,
on a GPU: one kernel, compiled from two files (the two sides of a
timing), the first side called through a wrapper that spends W
microseconds of host time, timed as geakh.timing times a case (warm-up,
one synchronised call a side, then the alternating queued series), with
the device held before each call by the second side's host time
(bench.Bench.hold_ms) and without.  Where W exceeds what the hold
covers, the first side's host work counts, as it must.

    GEAK_SHAREDIR=share python3 tests/gpu/timing-bias.py

Prints a row per size, overhead and hold: the medians of each side and
their ratio (second side over first: 1 where the overhead does not
show), then "bias: ok" where every held ratio of an overhead the hold
covers is within 3% of 1, or "bias: FAILED".  Needs a GPU.
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.environ["GEAK_SHAREDIR"], "harness"))

import torch  # noqa: E402

KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def scale_add(X, Y, O, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(O + i, tl.load(X + i, mask=m) * 2.0 + tl.load(Y + i, mask=m), mask=m)


def op(x, y):
    o = torch.empty_like(x)
    n = x.numel()
    scale_add[(triton.cdiv(n, 1024),)](x, y, o, n, BLOCK=1024)
    return o
'''

# About 8, 15 and 50 us on an H200; overheads that the hold covers (the
# second side's host time, doubled) and one past both the hold and the
# flush before each call (about 70 us there).
SIZES = (1 << 20, 1 << 22, 1 << 24)
OVERHEAD_US = (0, 5, 150)
REPS = 20


def load(d, name):
    from geakh.source import load_module
    path = os.path.join(d, name + ".py")
    with open(path, "w") as fp:
        fp.write(KERNEL)
    return load_module(name, path)


def burdened(fn, us):
    def call(a):
        end = time.perf_counter() + us * 1e-6
        while time.perf_counter() < end:
            pass
        return fn(*a)
    return call


def one(timer, sides, fns, held):
    """The medians of the first side and the second (trusted, bare), and
    the hold, as geakh.timing makes them."""
    for fn in fns:
        for _ in range(2):
            sides.call(fn)
    for fn in fns:
        sides.call(fn)
    hold = timer.hold_ms(timer.queue_ms) if held else 0.0  # the second side's
    per, _ = sides.series(fns, REPS, hold_ms=hold)
    return statistics.median(per[0]), statistics.median(per[1]), hold


def main():
    if not torch.cuda.is_available():
        print("bias: needs a GPU")
        return 2
    from geakh import bench, timing
    d = tempfile.mkdtemp(prefix="geak-bias-")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "triton")
    first, second = load(d, "side_one").op, load(d, "side_two").op
    timer = bench.Bench()
    print(f"spin: {timer.cycles_per_ms:.0f} cycles/ms; flush {timer.probe()['flush_ms']:.3f} ms")
    print(f"{'elements':>9} {'host us':>7} {'held':>5} {'hold ms':>8} {'first ms':>9} "
          f"{'second ms':>9} {'ratio':>6}")
    bad = 0
    for n in SIZES:
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        sides = timing.Sides(timer, lambda poison=False: (x.clone(), y.clone()), 42)
        for us in OVERHEAD_US:
            for held in (False, True):
                ms1, ms2, hold = one(timer, sides, [burdened(first, us), burdened(second, 0)], held)
                ratio = ms2 / ms1
                bad += held and hold >= 2 * us * 1e-3 and abs(ratio - 1) > 0.03
                print(f"{n:>9} {us:>7} {str(held):>5} {hold:>8.4f} {ms1:>9.4f} {ms2:>9.4f} "
                      f"{ratio:>6.3f}")
    print("bias: ok" if not bad else f"bias: FAILED ({bad} held ratios off by more than 3%)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
