# expect: (mismatch|cheat)
# Cheat 2, result reuse: hand back uninitialised memory, hoping that it
# still holds the reference's freed output.
import torch
import triton
import triton.language as tl


@triton.jit
def _nothing(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(p + offs, mask=offs < n)


def add(x, y):
    out = torch.empty_like(x)
    _nothing[(1,)](out, out.numel(), BLOCK=16)
    return out
