# expect: gpu:cheat
# A global of the reference's own module changed while the two are timed
# side by side: found through sys.modules by a name put together at run
# time, its "torch" becomes a stand-in whose empty_like sleeps, so that
# the reference looks slow.  (The CPU mode times nothing; tests/0322
# times it on the CPU through the harness.)
import sys
import time
import types

import torch
import triton
import triton.language as tl


class _Slow(types.ModuleType):
    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def empty_like(*args, **kwargs):
        time.sleep(0.001)
        return torch.empty_like(*args, **kwargs)


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    ref = getattr(sys.modules, "get")("geak_reference" + "_side")
    if ref is not None and not isinstance(vars(ref).get("torch"), _Slow):
        vars(ref)["torch"] = _Slow("torch")
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out
