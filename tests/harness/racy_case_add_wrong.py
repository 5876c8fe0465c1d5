# The racing add of racy_case_add.py, also wrong by 1 at element 9 of
# the case that races: a value that is wrong is wrong in every run.
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, extra, bad, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y + tl.where(offs == 7, extra, 0.0) + tl.where(offs == 9, bad, 0.0),
             mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    extra = float(time.monotonic_ns() % 1000003) if n == 1000 else 0.0
    bad = 1.0 if n == 1000 else 0.0
    _add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, extra, bad, BLOCK=128)
    return out
