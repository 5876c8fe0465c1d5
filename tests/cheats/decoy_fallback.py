# expect: cheat
# Cheat 1 with a decoy: a Triton kernel launches, but the answer comes
# from torch.
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(p, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, tl.load(p + offs))


def add(x, y):
    scratch = torch.zeros(16, device=x.device)
    _touch[(1,)](scratch, BLOCK=16)
    return x + y
