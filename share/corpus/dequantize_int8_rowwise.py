# SPDX-License-Identifier: MIT
"""Row-wise int8 dequantisation: ``out[m, n] = q[m, n] * scale[m]`` for int8
``q`` of shape (M, N) and fp32 per-row ``scale`` of shape (M,), producing a
new (M, N) tensor in ``out_dtype`` (fp16 by default). It undoes a symmetric
row-wise quantisation. Performance idea: the kernel reads one byte per
element and writes two, so it is bandwidth-bound; each program covers a
(BLOCK_M x BLOCK_N) tile, loads the BLOCK_M scales once and broadcasts them
across the tile from registers, and the multiply is done in fp32 before one
rounding to the output dtype.
"""

import torch
import triton
import triton.language as tl

ENTRY = "dequantize_int8_rowwise"


@triton.jit
def _dequant_int8_kernel(q_ptr, scale_ptr, out_ptr, M, N, stride_qm, stride_om,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Dequantise one BLOCK_M x BLOCK_N tile of q with its rows' scales."""
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    r_mask = rows < M
    mask = r_mask[:, None] & (cols[None, :] < N)

    scale = tl.load(scale_ptr + rows, mask=r_mask, other=0.0)
    q = tl.load(q_ptr + rows[:, None].to(tl.int64) * stride_qm + cols[None, :], mask=mask, other=0)
    # int8 -> fp32 is exact; one multiply and one rounding to the output type.
    out = q.to(tl.float32) * scale[:, None]
    tl.store(out_ptr + rows[:, None].to(tl.int64) * stride_om + cols[None, :],
             out.to(out_ptr.dtype.element_ty), mask=mask)


def dequantize_int8_rowwise(q: torch.Tensor, scale: torch.Tensor,
                            out_dtype: torch.dtype = torch.float16) -> torch.Tensor:
    """Return ``(q.float() * scale[:, None]).to(out_dtype)``."""
    if q.dim() != 2 or q.dtype != torch.int8 or scale.shape != (q.shape[0],):
        raise ValueError("dequantize_int8_rowwise: expected int8 q (M, N) and scale (M,)")
    if q.stride(1) != 1:
        q = q.contiguous()
    scale = scale.float().contiguous()
    M, N = q.shape
    out = torch.empty((M, N), device=q.device, dtype=out_dtype)
    if q.numel() == 0:
        return out
    BLOCK_N = min(512, triton.next_power_of_2(N))
    BLOCK_M = max(1, min(16, 4096 // BLOCK_N))
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _dequant_int8_kernel[grid](q, scale, out, M, N, q.stride(0), out.stride(0),
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return out


def _reference(q, scale, out_dtype=torch.float16):
    return (q.float() * scale.float()[:, None]).to(out_dtype)


def _example_inputs(device):
    g = torch.Generator().manual_seed(29)
    q = torch.randint(-127, 128, (23, 700), generator=g, dtype=torch.int8)
    scale = torch.rand(23, generator=g) * 0.05 + 1e-3
    return (q.to(device), scale.to(device), torch.float16)
