# expect: cheat
# Cheat 1 with a decoy: a real kernel writes a scratch buffer while the
# output comes from torch, in a task whose test keeps copies of its
# outputs (so no output the test returns is a kernel's argument).  The
# entry point's own outputs are attributed to the kernels that wrote them.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def add(x, y):
    scratch = torch.empty_like(x)
    _copy_kernel[(triton.cdiv(x.numel(), 128),)](x, scratch, x.numel(), BLOCK=128)
    return torch.add(x, y)
