# racy_scatter_add.py's work with its blocks taken in the other order, so
# that the first block's sum lands on the last element: where programs
# race, either winner is the kernel's.
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    block = tl.num_programs(0) - 1 - tl.program_id(0)
    offs = block * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)
    first = block * BLOCK
    tl.store(out_ptr + n - 1, tl.load(x_ptr + first) + tl.load(y_ptr + first))


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    _add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    return out
