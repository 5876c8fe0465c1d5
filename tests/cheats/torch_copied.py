# expect: cheat
# Arithmetic outside the kernels: torch computes the sum, and a real
# Triton kernel copies it into the output, so every output is written by
# a launch of the candidate's own kernel on every call.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    total = torch.add(x, y)
    _copy_kernel[(triton.cdiv(out.numel(), 128),)](total, out, out.numel(), BLOCK=128)
    return out
