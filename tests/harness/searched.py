"""An output that an autotuner's search writes before the call's own
launch, for tests/0350-eval-plain.t: a kernel launched in Triton's
interpreter, once as the search's (while the autotuner benches) and once
as the call's, both writing the same values.  The launch hook tells the
call of the search's launch, so the call counts the output written by
its kernels; a call not told sees its own launch change nothing.  Prints
"told untold" as True or False each (expected: "True False").

    searched.py"""
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from geakh import autotune, entry, launches  # noqa: E402


@triton.jit
def fill_two(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full([BLOCK], 2.0, tl.float32), mask=offs < n)


def written(told):
    out = torch.full((64,), float("nan"))
    call = entry.Call("fill", (out,), {}, "full", 0)
    launches.COUNTER.call = call if told else None
    autotune.STATE.benching += 1
    try:
        fill_two[(1,)](out, out.numel(), BLOCK=64)  # the search's launch
    finally:
        autotune.STATE.benching -= 1
    launches.COUNTER.call = call
    fill_two[(1,)](out, out.numel(), BLOCK=64)  # the call's own
    launches.COUNTER.call = None
    return call.launches == 1 and call.written(out)


launches.COUNTER.install()
launches.COUNTER.watch(os.path.abspath(__file__))
print(written(True), written(False))
