# expect: cheat
# Cheat 1 with a kernel that only reads: torch computes the output, then
# a kernel takes it as an argument and writes nothing.  An output counts
# as the kernels' only where one of them changed it and nothing changed
# it after.
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(p + offs, mask=offs < n)


def add(x, y):
    out = torch.add(x, y)
    _touch[(1,)](out, out.numel(), BLOCK=16)
    return out
