# expect: (cheat|mismatch)
# Cheat 4, per call: a real kernel runs on every call (so every call
# launches one), but its result is thrown away after the first call on
# inputs at the same addresses, and the first result is returned again.
# The first call is made again with its inputs changed in place.
import torch
import triton
import triton.language as tl

_memo = {}


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    key = (x.data_ptr(), y.data_ptr(), x.numel())
    if key in _memo:
        old = _memo[key]
        _add_kernel[(triton.cdiv(out.numel(), 128),)](old, old * 0, out, out.numel(), BLOCK=128)
        return out
    _memo[key] = out.clone()
    return out
