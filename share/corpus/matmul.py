# SPDX-License-Identifier: MIT
"""Tiled matrix multiplication ``C = A @ B`` for ``A`` of shape (M, K) and
``B`` of shape (K, N), any strides, fp16/bf16 inputs (fp32 also works; on
NVIDIA GPUs ``tl.dot`` then defaults to TF32 tensor-core math); ``C`` is a
new (M, N) tensor in the input dtype. Performance idea: each program computes one
BLOCK_M x BLOCK_N tile of C, marching along K in BLOCK_K steps and feeding
``tl.dot`` (tensor cores / matrix cores) with an fp32 accumulator that stays
in registers until a single rounded store at the end. Programs are numbered
in "grouped" order: GROUP_M consecutive tile-rows are swept column by column,
so tiles computed at the same time share rows of A and columns of B, and
most operand loads hit in L2 instead of DRAM.
"""

import torch
import triton
import triton.language as tl

ENTRY = "matmul"


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr):
    """Compute one BLOCK_M x BLOCK_N tile of C = A @ B."""
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Grouped ordering: pids walk down a band of GROUP_M tile-rows before moving
    # to the next tile-column, so concurrently running programs reuse the same
    # A rows and B columns from L2. The last band may be shorter.
    tiles_per_band = GROUP_M * tiles_n
    band = pid // tiles_per_band
    first_m = band * GROUP_M
    band_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_per_band) % band_rows
    pid_n = (pid % tiles_per_band) // band_rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :].to(tl.int64) * stride_bn
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N

    # fp32 accumulation: summing K half-precision products in half precision
    # would lose most of the mantissa for large K.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K):
        # Zero-fill the K tail so the padded products add nothing.
        k_mask = offs_k < K - k
        a = tl.load(a_ptrs, mask=m_mask & k_mask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & n_mask, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_mask & n_mask)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Return ``a @ b`` for 2-D tensors, accumulated in fp32."""
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0] or a.dtype != b.dtype:
        raise ValueError("matmul: expected (M, K) @ (K, N) with equal dtypes")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if M == 0 or N == 0:
        return c
    # 128 x 128 x 32 tiles with 8 warps suit large problems on current GPUs;
    # shrink for small matrices (tl.dot needs every dimension >= 16).
    BLOCK_M = max(16, min(128, triton.next_power_of_2(M)))
    BLOCK_N = max(16, min(128, triton.next_power_of_2(N)))
    BLOCK_K = max(16, min(32 if a.element_size() <= 2 else 16, triton.next_power_of_2(K)))
    GROUP_M = 8
    num_warps = 8 if BLOCK_M * BLOCK_N >= 128 * 128 else 4
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _matmul_kernel[grid](a, b, c, M, N, K,
                         a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1),
                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                         num_warps=num_warps, num_stages=3)
    return c


def _reference(a, b):
    return (a.float() @ b.float()).to(a.dtype)


def _example_inputs(device):
    g = torch.Generator().manual_seed(19)
    dt = torch.float16
    # 300 x 200 output = 3 x 2 tiles of 128 (both ragged); K = 100 = 4 steps of 32.
    a = torch.randn(300, 100, generator=g).to(device=device, dtype=dt)
    # B is passed transposed (column-major) to exercise the stride arguments.
    b = torch.randn(200, 100, generator=g).to(device=device, dtype=dt).t()
    return (a, b)


TOLERANCE = dict(atol=1e-2, rtol=1e-2)
