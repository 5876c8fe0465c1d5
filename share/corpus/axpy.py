# SPDX-License-Identifier: MIT
"""Scaled vector addition with a broadcast scalar: ``out = alpha * x + y``.
``x`` and ``y`` are tensors of identical shape and dtype (any rank, fp16, bf16
or fp32); ``alpha`` is a Python number broadcast to every element; the output
has the shape and dtype of ``x``. Performance idea: a scalar argument travels
to the kernel by value in a register, so one compiled kernel serves every
alpha without recompiling, and no broadcast tensor is ever materialised in
memory. The arithmetic is done in fp32 and rounded once on store, which is
both faster and more accurate than half-precision fused multiply-adds.
"""

import torch
import triton
import triton.language as tl

ENTRY = "axpy"


@triton.jit
def _axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, n_elements, BLOCK_SIZE: tl.constexpr):
    """Compute alpha * x + y for one BLOCK_SIZE chunk of the flattened tensors."""
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # the final chunk may be partial
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    # alpha arrives as an fp32 scalar; the multiply-add fuses into one FMA.
    out = alpha * x + y
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def axpy(alpha: float, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Return ``alpha * x + y`` for same-shape tensors and a scalar ``alpha``."""
    if x.shape != y.shape or x.dtype != y.dtype:
        raise ValueError("axpy: x and y must have the same shape and dtype")
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    BLOCK_SIZE = 2048 if x.element_size() <= 2 else 1024  # ~4 KiB per operand
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _axpy_kernel[grid](x, y, out, float(alpha), n, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out


def _reference(alpha, x, y):
    return (alpha * x.float() + y.float()).to(x.dtype)


def _example_inputs(device):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, 777, generator=g).to(device=device, dtype=torch.float16)
    y = torch.randn(5, 777, generator=g).to(device=device, dtype=torch.float16)
    return (-0.75, x, y)
