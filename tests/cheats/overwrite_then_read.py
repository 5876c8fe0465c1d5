# expect: cheat
# A kernel writes the output, torch then overwrites it with its own
# answer, and another kernel only reads it: the kernels saw the output
# change, but its final values are torch's.
import torch
import triton
import triton.language as tl


@triton.jit
def _zero(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], tl.float32), mask=offs < n)


@triton.jit
def _read(out_ptr, sink_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(sink_ptr + tl.program_id(0), tl.sum(tl.load(out_ptr + offs, mask=offs < n, other=0.0), 0))


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    grid = (triton.cdiv(n, 256),)
    _zero[grid](out, n, BLOCK=256)
    torch.add(x, y, out=out)
    sink = torch.empty(grid[0], device=x.device)
    _read[grid](out, sink, n, BLOCK=256)
    return out
