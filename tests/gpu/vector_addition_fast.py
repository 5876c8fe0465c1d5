# A fast, correct candidate for TritonBench-revised vector_addition_custom
# (whose reference adds 16 elements a program): 1024 elements a program.
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(A, B, C, size, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < size
    a = tl.load(A + offs, mask=mask)
    b = tl.load(B + offs, mask=mask)
    tl.store(C + offs, a + b, mask=mask)


def custom_add(a, b):
    c = torch.empty_like(a)
    size = c.size(0)
    _add_kernel[(triton.cdiv(size, 1024),)](a, b, c, size, BLOCK=1024, num_warps=4)
    return c
