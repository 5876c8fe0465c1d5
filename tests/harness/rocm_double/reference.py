# A ROCm-style task whose reference autotunes num_warps only and takes
# BLOCK from its caller: it cannot launch under the test variant that
# passes no launch meta-parameters (tests/0330), which has called size()
# by then.
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=1), triton.Config({}, num_warps=2)], key=[])
@triton.jit
def double_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)


def size():
    """The test's length, a task function it calls before the launch."""
    return 64
