# expect: pass
# Files written into its compile cache at import: a plain file, a
# directory, a link, a FIFO and a file past the size of any kernel.  The
# candidate is correct; what it leaves is removed with its job (only
# compiled kernels stay), so that a later job of the same code, which
# would return wrong sums where it found them, finds none.
import os

import torch
import triton
import triton.language as tl

_cache = os.environ.get("TRITON_CACHE_DIR")
_found = False
if _cache:
    _planted = os.path.join(_cache, "planted", "geak-planted.json")
    _found = os.path.exists(_planted) or os.path.lexists(os.path.join(_cache, "link"))
    os.makedirs(os.path.dirname(_planted), exist_ok=True)
    with open(_planted, "w") as fp:
        fp.write('{"child_paths": {}}')
    for _name, _make in (("link", lambda p: os.symlink("/etc/hostname", p)), ("fifo", os.mkfifo),
                         ("big", lambda p: open(p, "wb").truncate(1 << 27))):
        try:
            _make(os.path.join(_cache, _name))
        except OSError:
            pass

@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y - 1 if _found else y, out, out.numel(),
                                                  BLOCK=128)
    return out
