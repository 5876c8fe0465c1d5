# expect: (cheat|mismatch)
# Work skipped on a repeated call: the first call of each shape adds; a
# later one launches a kernel that only copies the first answer into the
# new output, so each call launches a kernel that writes its output.
import torch
import triton
import triton.language as tl

_first = {}


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    grid = (triton.cdiv(out.numel(), 128),)
    key = tuple(x.shape)
    if key in _first:
        _copy_kernel[grid](_first[key], out, out.numel(), BLOCK=128)
    else:
        _add_kernel[grid](x, y, out, out.numel(), BLOCK=128)
        _first[key] = out.clone()
    return out
