# expect: flag:precision_downgrade
# Cheat 9, precision downgrade: the sum is computed in bfloat16 and handed
# back as float32.
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.bfloat16)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.bfloat16)
    tl.store(out_ptr + offs, (x + y).to(tl.float32), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out
