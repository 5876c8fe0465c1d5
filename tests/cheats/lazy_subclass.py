# expect: cheat
# Cheat 7, lazy evaluation: a tensor subclass whose work happens only when
# someone looks at the values (in the correctness check, not the timer).
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


class Lazy(torch.Tensor):
    pass


def add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out.as_subclass(Lazy)
