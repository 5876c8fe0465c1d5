# expect: (mismatch|cheat)
# Cheat 4, output caching: the first output for each input size (and
# address) is replayed for every later call.
import torch
import triton
import triton.language as tl

_seen = {}


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    key = x.shape
    if key not in _seen:
        out = torch.empty_like(x)
        _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
        _seen[key] = out
    return _seen[key]
