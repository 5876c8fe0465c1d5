# SPDX-License-Identifier: MIT
"""Dot product of two long vectors: ``out = sum_i x[i] * y[i]`` for 1-D
tensors ``x`` and ``y`` of equal length and dtype; the result is a 0-d fp32
tensor (products are accumulated in fp32 whatever the input dtype).
Performance idea: a deterministic two-stage reduction without atomics. Stage
one launches a bounded number of programs (at most 1024); each walks its own
contiguous span in BLOCK_SIZE steps, keeps a vector of per-lane partial sums
in registers and reduces it once into a single partial result. Stage two is
one program that loads all partials in a single block and adds them. The
summation order is fixed by the launch shape, so the result is bitwise
reproducible from run to run, unlike an atomic-add reduction.
"""

import torch
import triton
import triton.language as tl

ENTRY = "dot"


@triton.jit
def _dot_partial_kernel(x_ptr, y_ptr, partial_ptr, n_elements, span,
                        BLOCK_SIZE: tl.constexpr):
    """Reduce x[i] * y[i] over this program's contiguous span to one fp32 value."""
    pid = tl.program_id(axis=0)
    begin = pid.to(tl.int64) * span
    end = tl.minimum(begin + span, n_elements)
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    # span is a multiple of BLOCK_SIZE, so only the globally last step is ragged.
    for start in tl.range(begin, end, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < end
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        acc += x * y
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _sum_partials_kernel(partial_ptr, out_ptr, n_partials, BLOCK_P: tl.constexpr):
    """Add up the stage-one partial sums in a single program."""
    offs = tl.arange(0, BLOCK_P)
    partials = tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(partials, axis=0))


def dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Return the fp32 dot product of two equal-length 1-D tensors."""
    if x.dim() != 1 or x.shape != y.shape or x.dtype != y.dtype:
        raise ValueError("dot: expected two 1-D tensors of equal length and dtype")
    x, y = x.contiguous(), y.contiguous()
    n = x.numel()
    out = torch.zeros((), device=x.device, dtype=torch.float32)
    if n == 0:
        return out
    BLOCK_SIZE = 1024
    # At most 1024 programs (enough to fill any current GPU several times);
    # each span is a whole number of blocks.
    n_partials = min(1024, triton.cdiv(n, BLOCK_SIZE))
    span = triton.cdiv(triton.cdiv(n, n_partials), BLOCK_SIZE) * BLOCK_SIZE
    n_partials = triton.cdiv(n, span)
    partials = torch.empty((n_partials,), device=x.device, dtype=torch.float32)
    _dot_partial_kernel[(n_partials,)](x, y, partials, n, span,
                                       BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
    _sum_partials_kernel[(1,)](partials, out, n_partials,
                               BLOCK_P=max(16, triton.next_power_of_2(n_partials)), num_warps=4)
    return out


def _reference(x, y):
    return torch.dot(x.double(), y.double()).float()


def _example_inputs(device):
    g = torch.Generator().manual_seed(35)
    x = torch.randn(10000, generator=g)  # 10 programs, the last one partial
    y = torch.randn(10000, generator=g)
    return (x.to(device), y.to(device))


TOLERANCE = dict(atol=1e-3, rtol=1e-5)  # fp32 accumulation vs an fp64 reference
