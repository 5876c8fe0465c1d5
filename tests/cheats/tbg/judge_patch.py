# expect: mismatch
# Cheat 8 against the judge: a wrong answer, with the harness's own
# comparison functions replaced in this process.  Every comparison is made
# by the judge, a process that never imports the candidate.
import torch
import triton
import triton.language as tl

try:
    from geakh import compare, values
    compare.compare = lambda *a, **k: None
    values.equal = lambda a, b: True
except ImportError:
    pass


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out
