# SPDX-License-Identifier: MIT
"""Seeded dropout (training-mode forward): ``out = x * keep / (1 - p)`` where
``keep`` is a Bernoulli(1 - p) mask drawn per element, for ``x`` of any shape
and floating dtype, a drop probability ``p`` in [0, 1) and an integer
``seed``; the output has the shape and dtype of ``x``. The mask is not
stored: element i's random number is ``tl.rand(seed, i)``, a counter-based
Philox draw that depends only on (seed, i), never on block size or launch
order, so the same seed regenerates the same mask in the backward pass.
Performance idea: generating randoms in registers avoids writing and reading
a mask tensor; the kernel moves only ``x`` and ``out`` through memory.
"""

import torch
import triton
import triton.language as tl

ENTRY = "dropout"


@triton.jit
def _dropout_kernel(x_ptr, out_ptr, n_elements, p, scale, seed, BLOCK_SIZE: tl.constexpr):
    """Apply dropout to one BLOCK_SIZE chunk using counter-based randoms."""
    pid = tl.program_id(axis=0)
    # int32 element indices are the Philox counters (tensors < 2**31 elements).
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    r = tl.rand(seed, offsets)  # uniform in [0, 1), one per element
    keep = r > p
    out = tl.where(keep, x * scale, 0.0)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def dropout(x: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    """Return x with elements zeroed with probability p and survivors scaled by 1/(1-p)."""
    if not 0.0 <= p < 1.0:
        raise ValueError("dropout: p must be in [0, 1)")
    x = x.contiguous()
    n = x.numel()
    if n >= 2 ** 31:
        raise ValueError("dropout: tensor too large for int32 random counters")
    out = torch.empty_like(x)
    if n == 0:
        return out
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _dropout_kernel[grid](x, out, n, float(p), 1.0 / (1.0 - p), int(seed),
                          BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out


def _philox_uniform(seed, n):
    """Plain-torch Philox-4x32-10 matching tl.rand(seed, i) for i in [0, n)."""
    mask32 = 0xFFFFFFFF

    def mul_hi_lo(a, b):
        # 32 x 32 -> 64-bit product from 16-bit halves of b: every partial
        # product fits in int64 without overflow.
        p_lo = a * (b & 0xFFFF)
        p_hi = a * (b >> 16)
        mid = (p_lo >> 16) + p_hi
        return mid >> 16, ((mid & 0xFFFF) << 16) | (p_lo & 0xFFFF)

    c0 = torch.arange(n, dtype=torch.int64)
    c1 = torch.zeros_like(c0)
    c2 = torch.zeros_like(c0)
    c3 = torch.zeros_like(c0)
    k0, k1 = seed & mask32, (seed >> 32) & mask32
    for _ in range(10):
        hi_b, lo_b = mul_hi_lo(0xCD9E8D57, c2)
        hi_a, lo_a = mul_hi_lo(0xD2511F53, c0)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0 = (k0 + 0x9E3779B9) & mask32
        k1 = (k1 + 0xBB67AE85) & mask32
    # Reinterpret as int32, fold negatives onto [0, 2**31) and scale to [0, 1).
    v = torch.where(c0 >= 2 ** 31, c0 - 2 ** 32, c0)
    v = torch.where(v < 0, -v - 1, v)
    return v.to(torch.float32) * 4.6566127342e-10


def _reference(x, p, seed):
    r = _philox_uniform(int(seed), x.numel()).reshape(x.shape).to(x.device)
    scale = torch.tensor(1.0 / (1.0 - p), dtype=torch.float32)
    return torch.where(r > p, x.float() * scale, 0.0).to(x.dtype)


def _example_inputs(device):
    g = torch.Generator().manual_seed(31)
    x = torch.randn(3, 700, generator=g)
    return (x.to(device), 0.3, 1234)


TOLERANCE = dict(atol=1e-6, rtol=1e-6)
