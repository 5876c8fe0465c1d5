# problem: level1/47_Sum_reduction_over_a_dimension
# cpu: batch_size=4 dim1=37 dim2=50
# expect: pass
# A sum over one dimension, keepdim: the input seen as (outer, R, inner),
# each program summing R for a block of inner positions in float32.
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_dim(x_ptr, out_ptr, R, inner, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    outer = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    base = x_ptr + outer.to(tl.int64) * R * inner
    acc = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        x = tl.load(base + rows[:, None] * inner + cols[None, :],
                    mask=(rows[:, None] < R) & (cols[None, :] < inner), other=0.0)
        acc += tl.sum(x.to(tl.float32), axis=0)
    tl.store(out_ptr + outer.to(tl.int64) * inner + cols, acc, mask=cols < inner)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        dim = self.dim % x.dim()
        outer = math.prod(x.shape[:dim])
        inner = math.prod(x.shape[dim + 1:])
        R = x.shape[dim]
        shape = list(x.shape)
        shape[dim] = 1
        out = torch.empty(shape, device=x.device, dtype=x.dtype)
        grid = (outer, triton.cdiv(inner, 128))
        _sum_dim[grid](x, out, R, inner, BLOCK_R=32, BLOCK_I=128)
        return out
