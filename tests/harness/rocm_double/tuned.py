# The same kernel, autotuned over BLOCK too: it suits the variant.
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=1)], key=[])
@triton.jit
def double_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)


def size():
    """The test's length, a task function it calls before the launch."""
    return 64
