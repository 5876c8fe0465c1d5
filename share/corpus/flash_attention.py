# SPDX-License-Identifier: MIT
"""Attention forward, flash-attention style:
``O = softmax(Q @ K^T * sm_scale [+ causal mask]) @ V`` for ``Q``, ``K``, ``V``
of shape (batch, heads, seq_len, head_dim) with arbitrary strides and
fp16/bf16 dtype; ``O`` is a new tensor of the same shape and dtype. With
``causal=True`` query i attends only to keys j <= i. Performance idea: each
program owns BLOCK_M queries of one (batch, head) and streams K and V in
BLOCK_N chunks; scores live only in registers and are folded into the output
with the online-softmax recurrence (running row max and row sum, rescaling
the accumulator when the max grows), so the seq_len x seq_len score matrix
is never written to memory. Both products use ``tl.dot`` with fp32
accumulation, exponentials use ``exp2`` with log2(e) folded into the scale,
and the causal loop stops at the diagonal, skipping fully masked blocks.
"""

import math

import torch
import triton
import triton.language as tl

ENTRY = "attention"


@triton.jit
def _attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr,
                     stride_qb, stride_qh, stride_qs, stride_qd,
                     stride_kb, stride_kh, stride_ks, stride_kd,
                     stride_vb, stride_vh, stride_vs, stride_vd,
                     stride_ob, stride_oh, stride_os, stride_od,
                     H, S, D, qk_scale,
                     IS_CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    """Compute the attention output for BLOCK_M queries of one (batch, head)."""
    pid_m = tl.program_id(axis=0)
    pid_bh = tl.program_id(axis=1)
    b = (pid_bh // H).to(tl.int64)
    h = (pid_bh % H).to(tl.int64)
    q_ptr += b * stride_qb + h * stride_qh
    k_ptr += b * stride_kb + h * stride_kh
    v_ptr += b * stride_vb + h * stride_vh
    o_ptr += b * stride_ob + h * stride_oh

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    m_valid = offs_m < S
    d_valid = offs_d < D  # head_dim is padded up to a power of two

    # Q is loaded once and reused against every K/V block.
    q = tl.load(q_ptr + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd,
                mask=m_valid[:, None] & d_valid[None, :], other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)  # running row max (log2 units)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)                 # running row sum
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)

    # Causal: key blocks beyond this query block's last row are all masked.
    if IS_CAUSAL:
        hi = tl.minimum(S, (pid_m + 1) * BLOCK_M)
    else:
        hi = S
    for start_n in tl.range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_valid = offs_n < S
        # K is read as a (BLOCK_D, BLOCK_N) tile, i.e. already transposed for the dot.
        kt = tl.load(k_ptr + offs_n[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=n_valid[None, :] & d_valid[:, None], other=0.0)
        s = tl.dot(q, kt) * qk_scale  # includes log2(e): exp2 below is exp
        keep = n_valid[None, :]
        if IS_CAUSAL:
            keep = keep & (offs_m[:, None] >= offs_n[None, :])
        s = tl.where(keep, s, float("-inf"))

        # Online softmax update. Key 0 is visible to every row in the first
        # block, so m_new is finite and exp2(-inf - m_new) = 0 is safe.
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)

        v = tl.load(v_ptr + offs_n[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=n_valid[:, None] & d_valid[None, :], other=0.0)
        # P is rounded to the input dtype so the second product also runs on
        # tensor cores; the accumulator stays fp32.
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od,
             out.to(o_ptr.dtype.element_ty), mask=m_valid[:, None] & d_valid[None, :])


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              sm_scale: float = None) -> torch.Tensor:
    """Scaled dot-product attention for (batch, heads, seq_len, head_dim) tensors."""
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError("attention: q, k, v must share the shape (B, H, S, D)")
    B, H, S, D = q.shape
    if D > 256:
        raise ValueError("attention: head_dim > 256 is not supported")
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    o = torch.empty_like(q)
    if q.numel() == 0:
        return o
    BLOCK_D = max(16, triton.next_power_of_2(D))
    # 64 x 64 tiles suit head_dim <= 128; halve the key block for larger heads
    # to bound register use. Small sequences use smaller tiles.
    BLOCK_M = max(16, min(64, triton.next_power_of_2(S)))
    BLOCK_N = max(16, min(64 if BLOCK_D <= 128 else 32, triton.next_power_of_2(S)))
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    _attn_fwd_kernel[grid](q, k, v, o,
                           q.stride(0), q.stride(1), q.stride(2), q.stride(3),
                           k.stride(0), k.stride(1), k.stride(2), k.stride(3),
                           v.stride(0), v.stride(1), v.stride(2), v.stride(3),
                           o.stride(0), o.stride(1), o.stride(2), o.stride(3),
                           H, S, D, qk_scale,
                           IS_CAUSAL=causal, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                           BLOCK_D=BLOCK_D, num_warps=4, num_stages=2)
    return o


def _reference(q, k, v, causal=False, sm_scale=None):
    out = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), is_causal=causal, scale=sm_scale)
    return out.to(q.dtype)


def _example_inputs(device):
    g = torch.Generator().manual_seed(22)
    dt = torch.float16
    # S = 100: two query blocks of 64 (second ragged); D = 40 pads to 64.
    q = torch.randn(2, 2, 100, 40, generator=g).to(device=device, dtype=dt)
    k = torch.randn(2, 2, 100, 40, generator=g).to(device=device, dtype=dt)
    # V in (B, S, H, D) memory order, viewed as (B, H, S, D): exercises strides.
    v = torch.randn(2, 100, 2, 40, generator=g).to(device=device, dtype=dt).transpose(1, 2)
    return (q, k, v, True)


TOLERANCE = dict(atol=1e-2, rtol=1e-2)
