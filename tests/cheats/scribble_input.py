# expect: gpu:mismatch
# Writes into an input on the performance cases' sizes only, as a write
# past an output's end lands wherever the allocator put the next tensor:
# the sums are right, but the call changes an argument that the
# reference's calls leave unchanged.
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)
    tl.store(y_ptr + offs, x, mask=mask & (offs == 0) & (n >= 65536))


def add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out
