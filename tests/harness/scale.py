# A plain task's reference: x times s, 64 elements a program.
import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


def scale(x, s):
    out = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), s, BLOCK=64)
    return out
