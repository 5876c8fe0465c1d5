"""The hidden-work check (timing._hides_work) on bench.Bench.timed under
the CPU mode's device mapping, for tests/0360-eval-perf.t: the code's
side behind an L2 flush that takes 20 ms on every call (as a flush can
while other processes use the memory), the reference's behind the usual
one.  Prints "hidden: False": the flush's time is not the code's."""
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

os.environ["TRITON_INTERPRET"] = "1"  # as the CPU mode runs
import torch  # noqa: E402

from geakh import bench, cpu, timing  # noqa: E402


class SlowFlush:
    def __init__(self, buf):
        self.buf = buf

    def zero_(self):
        time.sleep(0.02)
        return self.buf.zero_()


def main():
    cpu.install()
    timer = bench.Bench()
    usual = timer.flush_buf
    small = torch.zeros(1, device="cuda")

    def sample(side):
        timer.flush_buf = SlowFlush(usual) if side == 0 else usual
        return timer.timed(lambda: small.add_(1))[:2]

    print("hidden:", timing._hides_work(sample, [sample(0), sample(1)]))


if __name__ == "__main__":
    main()
