# expect: (mismatch|cheat)
# Cheat 8, timer and comparison monkey-patching: a wrong answer, with the
# comparison and timing functions of this process replaced.  The judge
# runs in another process, so the patches change nothing there; the
# candidate's process is found to have changed library functions.
import time

import torch
import triton
import triton.language as tl

torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
time.perf_counter = lambda: 0.0
if hasattr(torch.cuda, "Event"):
    torch.cuda.Event.elapsed_time = lambda self, other: 1e-6


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) - tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out
