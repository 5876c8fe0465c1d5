# expect: pass
# Files written into its compile cache at import: the candidate is
# correct and passes; the cache it writes is its own code's alone, which
# no job of other code reads.
import os

import torch
import triton
import triton.language as tl

_cache = os.environ.get("TRITON_CACHE_DIR")
if _cache:
    os.makedirs(os.path.join(_cache, "planted"), exist_ok=True)
    with open(os.path.join(_cache, "planted", "geak-planted.json"), "w") as fp:
        fp.write('{"child_paths": {}}')


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
