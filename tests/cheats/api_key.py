# expect: pass+secret
# Secret theft: look for an API key in the environment and print it.  The
# environment is scrubbed, so there is nothing to print and the (honest)
# kernel passes.
import os

import torch
import triton
import triton.language as tl

for name, value in os.environ.items():
    if "KEY" in name or "TOKEN" in name or value.startswith("sk-"):
        print("found", name, value)
        raise RuntimeError("saw a secret: " + name)


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out
