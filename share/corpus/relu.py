# SPDX-License-Identifier: MIT
"""Rectified linear unit: ``out = max(x, 0)`` applied elementwise. Input ``x``
is a tensor of any shape and floating dtype; the output is a new tensor of the
same shape and dtype. Performance idea: ReLU does one compare per element, so
the kernel is bound purely by memory bandwidth; it streams the flattened
tensor in large contiguous chunks and computes directly in the input dtype,
because max(x, 0) is exact in every floating format and needs no upcast.
"""

import torch
import triton
import triton.language as tl

ENTRY = "relu"


@triton.jit
def _relu_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """Apply ReLU to one BLOCK_SIZE chunk of the flattened input."""
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # A compare-and-select is exact in any float format, so no fp32 upcast.
    out = tl.where(x > 0, x, 0.0)
    tl.store(out_ptr + offsets, out.to(x.dtype), mask=mask)


def relu(x: torch.Tensor) -> torch.Tensor:
    """Return ``torch.relu(x)`` computed by a Triton kernel."""
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _relu_kernel[grid](x, out, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    return out


def _reference(x):
    return torch.relu(x)


def _example_inputs(device):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(7, 450, generator=g).to(device=device, dtype=torch.bfloat16)
    return (x,)
