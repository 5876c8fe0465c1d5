# expect: gpu
# Cheat 5, stream injection: the kernel runs on a side stream that the
# timer's events on the default stream do not wait for.  On the CPU there
# are no streams, so this is timed (and rejected or flagged) on a GPU only.
import torch
import triton
import triton.language as tl

_stream = None


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


def add(x, y):
    global _stream
    if _stream is None:
        _stream = torch.cuda.Stream()
    out = torch.empty_like(x)
    with torch.cuda.stream(_stream):
        for _ in range(20):
            _add_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out
