# SPDX-License-Identifier: MIT
"""Rotary position embedding (RoPE), rotate-half (GPT-NeoX / LLaMA) layout:
for each token t with position ``pos[t]`` and each head, the head vector is
split into halves ``x1 = x[..., :D/2]`` and ``x2 = x[..., D/2:]`` and rotated
by per-frequency angles: ``out1 = x1 * cos - x2 * sin`` and
``out2 = x2 * cos + x1 * sin``, with ``cos``/``sin`` rows taken from caches of
shape (max_position, D/2). ``x`` has shape (tokens, heads, head_dim) with
contiguous heads; ``positions`` is an integer tensor of shape (tokens,); the
output is a new tensor shaped like ``x``. Performance idea: one program per
(token, group of heads) loads the token's cos/sin rows once and reuses them
for every head in the group from registers; both halves are processed as
(BLOCK_H, BLOCK_HALF) tiles, so no data shuffling is needed.
"""

import torch
import triton
import triton.language as tl

ENTRY = "apply_rotary"


@triton.jit
def _rotary_kernel(x_ptr, pos_ptr, cos_ptr, sin_ptr, out_ptr, H, HALF,
                   stride_xt, stride_xh, stride_ot, stride_oh, stride_cos,
                   BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """Rotate BLOCK_H heads of one token by the angles of that token's position."""
    token = tl.program_id(axis=0).to(tl.int64)
    pid_h = tl.program_id(axis=1)
    heads = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    freqs = tl.arange(0, BLOCK_HALF)
    f_mask = freqs < HALF  # head_dim / 2 need not be a power of two
    mask = (heads[:, None] < H) & f_mask[None, :]

    # cos/sin for this token: one row each, shared by every head in the tile.
    pos = tl.load(pos_ptr + token).to(tl.int64)
    cos = tl.load(cos_ptr + pos * stride_cos + freqs, mask=f_mask, other=0.0).to(tl.float32)
    sin = tl.load(sin_ptr + pos * stride_cos + freqs, mask=f_mask, other=0.0).to(tl.float32)

    x_base = x_ptr + token * stride_xt + heads[:, None] * stride_xh + freqs[None, :]
    x1 = tl.load(x_base, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_base + HALF, mask=mask, other=0.0).to(tl.float32)
    out1 = x1 * cos[None, :] - x2 * sin[None, :]
    out2 = x2 * cos[None, :] + x1 * sin[None, :]

    o_base = out_ptr + token * stride_ot + heads[:, None] * stride_oh + freqs[None, :]
    tl.store(o_base, out1.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(o_base + HALF, out2.to(out_ptr.dtype.element_ty), mask=mask)


def apply_rotary(x: torch.Tensor, positions: torch.Tensor, cos: torch.Tensor,
                 sin: torch.Tensor) -> torch.Tensor:
    """Apply rotate-half RoPE to x of shape (T, H, D) at the given positions."""
    if x.dim() != 3 or x.shape[-1] % 2 != 0:
        raise ValueError("apply_rotary: expected x of shape (T, H, D) with even D")
    T, H, D = x.shape
    HALF = D // 2
    if cos.shape != sin.shape or cos.shape[-1] != HALF or positions.shape != (T,):
        raise ValueError("apply_rotary: cos/sin must be (max_pos, D/2), positions (T,)")
    if x.stride(2) != 1:
        x = x.contiguous()
    cos, sin, positions = cos.contiguous(), sin.contiguous(), positions.contiguous()
    out = torch.empty((T, H, D), device=x.device, dtype=x.dtype)
    if x.numel() == 0:
        return out
    BLOCK_HALF = triton.next_power_of_2(HALF)
    # Enough heads per program for ~1K elements per half-tile.
    BLOCK_H = max(1, min(triton.next_power_of_2(H), 1024 // BLOCK_HALF))
    grid = (T, triton.cdiv(H, BLOCK_H))
    _rotary_kernel[grid](x, positions, cos, sin, out, H, HALF,
                         x.stride(0), x.stride(1), out.stride(0), out.stride(1), cos.stride(0),
                         BLOCK_H=BLOCK_H, BLOCK_HALF=BLOCK_HALF, num_warps=4)
    return out


def _reference(x, positions, cos, sin):
    half = x.shape[-1] // 2
    xf = x.float()
    c = cos.float()[positions][:, None, :]
    s = sin.float()[positions][:, None, :]
    x1, x2 = xf[..., :half], xf[..., half:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)


def _example_inputs(device):
    g = torch.Generator().manual_seed(24)
    T, H, D, max_pos = 9, 3, 24, 64  # D / 2 = 12 is not a power of two
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2).float() / D))
    angles = torch.arange(max_pos).float()[:, None] * inv_freq[None, :]
    x = torch.randn(T, H, D, generator=g)
    positions = torch.randint(0, max_pos, (T,), generator=g)
    return (x.to(device), positions.to(device), angles.cos().to(device), angles.sin().to(device))
