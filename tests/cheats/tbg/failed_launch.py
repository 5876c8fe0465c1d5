# expect: cheat
# Cheat 1 behind a launch that cannot compile: the kernel has an error,
# the launch is tried inside try/except and torch computes the result.
# Only a launch that returned counts as one.
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, no_such_function(offs))  # noqa: F821


def add(x, y):
    out = torch.empty_like(x)
    try:
        _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    except Exception:  # noqa: BLE001
        pass
    return x + y
