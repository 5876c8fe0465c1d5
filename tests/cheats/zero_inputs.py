# expect: cheat
# Cheat 3, input modification: the right answer, then the inputs are
# zeroed so that a reference run afterwards would agree with anything.
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    _add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    x.zero_()
    y.zero_()
    return out
