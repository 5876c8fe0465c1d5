# expect: gpu:mismatch
# Two faces: right while it is being checked, no work while it is timed.
# The correctness runs poison fresh memory with NaN; a call that finds
# torch.empty clean takes itself to be timed and returns without adding.
# The timing run compares its own timed outputs, so this is caught there
# (on the CPU nothing is timed: tests/0360-eval-timing.t drives the timing
# stages directly).
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    probe = torch.empty(4, device=x.device)
    # Read on the host, a few elements: no torch arithmetic of its own.
    if all(math.isnan(v) for v in probe.tolist()):
        _add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    else:
        _add_kernel[(1,)](x, y, out, min(n, 256), BLOCK=256)
    return out
