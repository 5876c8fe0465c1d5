# The add task's reference, racing at element 7 of its 1000-element
# performance case (a new value on every call: the clock's nanoseconds)
# and, in every case and test, at its last element: each program stores
# its block's first sum there too, so the last program to run decides it.
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, extra, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y + tl.where(offs == 7, extra, 0.0), mask=mask)
    first = tl.program_id(0) * BLOCK
    tl.store(out_ptr + n - 1, tl.load(x_ptr + first) + tl.load(y_ptr + first))


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    extra = float(time.monotonic_ns() % 1000003) if n == 1000 else 0.0
    _add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, extra, BLOCK=128)
    return out
