# SPDX-License-Identifier: MIT
"""Tiled, stride-aware 2-D transpose: ``out = x.t().contiguous()``. Input ``x``
has shape (M, N) with arbitrary strides (it may be a slice or a view); the
output is a new contiguous (N, M) tensor of the same dtype. Performance idea:
each program moves a square BLOCK x BLOCK tile. It reads the tile along the
input's rows and writes it along the output's rows, and the compiler stages
the tile through shared memory to swap the layout, so both the global loads
and the global stores stay coalesced. A naive one-element-per-thread copy
would make one of the two sides strided and waste most of each memory
transaction.
"""

import torch
import triton
import triton.language as tl

ENTRY = "transpose_2d"


@triton.jit
def _transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Copy the (BLOCK_M, BLOCK_N) tile x[m0:m0+BM, n0:n0+BN] to out[n0:.., m0:..]."""
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)

    # Strides are runtime values, so views and slices are read in place
    # without a .contiguous() copy on the host side.
    src = (x_ptr + offs_m[:, None].to(tl.int64) * stride_xm
           + offs_n[None, :].to(tl.int64) * stride_xn)
    tile = tl.load(src, mask=mask)
    # Swapping the roles of the indices on the store is all a transpose is; the
    # compiler inserts the register/shared-memory shuffle that keeps the
    # stores contiguous along M.
    dst = out_ptr + offs_n[None, :].to(tl.int64) * stride_om + offs_m[:, None]
    tl.store(dst, tile, mask=mask)


def transpose_2d(x: torch.Tensor) -> torch.Tensor:
    """Return the contiguous transpose of a 2-D tensor with any strides."""
    if x.dim() != 2:
        raise ValueError("transpose_2d: expected a 2-D tensor")
    M, N = x.shape
    out = torch.empty((N, M), device=x.device, dtype=x.dtype)
    if x.numel() == 0:
        return out
    # 64 x 64 tiles: 16 KiB of fp32 through shared memory, fine on all GPUs.
    BLOCK_M = BLOCK_N = 64
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _transpose_kernel[grid](x, out, M, N, x.stride(0), x.stride(1), out.stride(0),
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return out


def _reference(x):
    return x.t().contiguous()


def _example_inputs(device):
    g = torch.Generator().manual_seed(8)
    base = torch.randn(90, 202, generator=g).to(device)
    # A non-contiguous (90, 101) view: every other column.
    return (base[:, ::2],)


TOLERANCE = dict(atol=0.0, rtol=0.0)  # a copy must be exact
