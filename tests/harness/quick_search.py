"""Two autotuned kernels, one that asks for CUDA-graph searches, searched
under geakh.autotune's policy POLICY (default "quick"):

    quick_search.py [quick|full]

prints how many configurations were timed and with which (warm-up,
repetition) in ms.  Every one must be timed by the harness's rule,
"timed 5 with [(1, 5)]" quick and "timed 5 with [(2, 10)]" full; left
to Triton, the first kernel's would go to the driver's benchmarker and
the second's to do_bench_cudagraph, for 25 and 100 ms each."""
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton import testing  # noqa: E402

from geakh import autotune  # noqa: E402

timed = []


def recording_bench(fn, warmup=25, rep=100, quantiles=None, **kwargs):
    fn()  # the interpreter has no events: one call, timed 0
    timed.append((warmup, rep))
    return [0.0] * len(quantiles or [0])


testing.do_bench = recording_bench
autotune.install()
autotune.set_policy(sys.argv[1] if len(sys.argv) > 1 else "quick")


@triton.autotune(configs=[triton.Config({"B": b}) for b in (16, 32, 64)], key=["n"])
@triton.jit
def add_one(x, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) + 1, mask=offs < n)


@triton.autotune(configs=[triton.Config({"B": b}) for b in (16, 32)], key=["n"], use_cuda_graph=True)
@triton.jit
def add_two(x, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) + 2, mask=offs < n)


x = torch.zeros(40)
for kernel in (add_one, add_two):
    kernel[lambda meta: (triton.cdiv(40, meta["B"]),)](x, 40)
print(f"timed {len(timed)} with {sorted(set(timed))}")
