# SPDX-License-Identifier: MIT
"""Batched matrix multiplication ``C[i] = A[i] @ B[i]`` for ``A`` of shape
(batch, M, K) and ``B`` of shape (batch, K, N) with arbitrary strides
(including a broadcast batch stride of 0); ``C`` is a new (batch, M, N)
tensor in the input dtype, like ``torch.bmm``. Performance idea: a 2-D launch
grid whose second axis is the batch index, so each program offsets its base
pointers once and then runs an ordinary tiled matmul with an fp32
accumulator and ``tl.dot``. Tiles within a batch entry use grouped ordering
so consecutive programs share operand tiles in L2, and all batch entries run
in one launch rather than one launch per matrix.
"""

import torch
import triton
import triton.language as tl

ENTRY = "batched_matmul"


@triton.jit
def _bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                stride_ab, stride_am, stride_ak,
                stride_bb, stride_bk, stride_bn,
                stride_cb, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    """Compute one BLOCK_M x BLOCK_N tile of C[batch] = A[batch] @ B[batch]."""
    pid = tl.program_id(axis=0)
    batch = tl.program_id(axis=1).to(tl.int64)
    # Move all three base pointers to this batch entry once, up front.
    a_ptr += batch * stride_ab
    b_ptr += batch * stride_bb
    c_ptr += batch * stride_cb

    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Grouped tile order within the batch entry (see matmul.py).
    tiles_per_band = GROUP_M * tiles_n
    first_m = (pid // tiles_per_band) * GROUP_M
    band_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_per_band) % band_rows
    pid_n = (pid % tiles_per_band) // band_rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K):
        k_mask = offs_k < K - k
        a = tl.load(a_ptrs, mask=m_mask & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & n_mask, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_mask & n_mask)


def batched_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return ``torch.bmm(a, b)`` for 3-D tensors, accumulated in fp32."""
    if a.dim() != 3 or b.dim() != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError("batched_matmul: expected (B, M, K) and (B, K, N)")
    if a.dtype != b.dtype:
        raise ValueError("batched_matmul: a and b must have the same dtype")
    batch, M, K = a.shape
    N = b.shape[2]
    c = torch.empty((batch, M, N), device=a.device, dtype=a.dtype)
    if c.numel() == 0:
        return c
    # Batched problems are usually many small matrices: use 64 x 64 tiles.
    BLOCK_M = max(16, min(64, triton.next_power_of_2(M)))
    BLOCK_N = max(16, min(64, triton.next_power_of_2(N)))
    BLOCK_K = max(16, min(32, triton.next_power_of_2(K)))
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), batch)
    _bmm_kernel[grid](a, b, c, M, N, K,
                      a.stride(0), a.stride(1), a.stride(2),
                      b.stride(0), b.stride(1), b.stride(2),
                      c.stride(0), c.stride(1), c.stride(2),
                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                      num_warps=4, num_stages=3)
    return c


def _reference(a, b):
    return torch.bmm(a.float(), b.float()).to(a.dtype)


def _example_inputs(device):
    g = torch.Generator().manual_seed(20)
    dt = torch.float16
    a = torch.randn(3, 90, 40, generator=g).to(device=device, dtype=dt)
    # One shared right-hand matrix broadcast over the batch (batch stride 0).
    b = torch.randn(1, 40, 70, generator=g).to(device=device, dtype=dt).expand(3, 40, 70)
    return (a, b)


TOLERANCE = dict(atol=1e-2, rtol=1e-2)
