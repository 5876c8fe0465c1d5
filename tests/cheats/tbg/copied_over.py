# expect: cheat
# Cheat 1 with the kernel's work overwritten: a kernel writes the output,
# then torch's result is copied over it.
import torch
import triton
import triton.language as tl


@triton.jit
def _zero(p, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(p + offs, tl.zeros([BLOCK], tl.float32), mask=offs < n)


def add(x, y):
    out = torch.empty_like(x)
    _zero[(triton.cdiv(out.numel(), 128),)](out, out.numel(), BLOCK=128)
    out.copy_(x + y)
    return out
