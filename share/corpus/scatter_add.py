# SPDX-License-Identifier: MIT
"""Index scatter-add along rows: ``out = base.clone(); out[index[i], :] += src[i, :]``
for every i, i.e. ``torch.index_add(base, 0, index, src)``. ``base`` has shape
(R, D), ``src`` has shape (N, D) and ``index`` is an integer tensor of shape
(N,) with values in [0, R) that may repeat; the result is a new (R, D) tensor
of ``base``'s dtype (fp32 recommended). Typical uses are embedding gradients
and MoE/graph message aggregation. Performance idea: each program handles a
(BLOCK_N source rows x BLOCK_D features) tile and accumulates it into the
destination with ``tl.atomic_add``, so rows that share an index are combined
correctly without sorting, and no atomics are issued for masked lanes. The
summation order of colliding rows is not fixed, so results can differ in the
last bits between runs.
"""

import torch
import triton
import triton.language as tl

ENTRY = "index_add"


@triton.jit
def _index_add_kernel(out_ptr, index_ptr, src_ptr, N, D, stride_o, stride_s,
                      BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    """Atomically add a BLOCK_N x BLOCK_D tile of src into the indexed rows of out."""
    pid_n = tl.program_id(axis=0)
    pid_d = tl.program_id(axis=1)
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    r_mask = rows < N
    mask = r_mask[:, None] & (cols[None, :] < D)

    dest = tl.load(index_ptr + rows, mask=r_mask, other=0).to(tl.int64)
    vals = tl.load(src_ptr + rows[:, None].to(tl.int64) * stride_s + cols[None, :],
                   mask=mask, other=0.0)
    # Relaxed atomics suffice: only the final sum matters, not the order.
    tl.atomic_add(out_ptr + dest[:, None] * stride_o + cols[None, :], vals, mask=mask,
                  sem="relaxed")


def index_add(base: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """Return ``base.index_add(0, index, src)`` computed with atomic adds."""
    if base.dim() != 2 or src.dim() != 2 or src.shape[1] != base.shape[1]:
        raise ValueError("index_add: expected base (R, D) and src (N, D)")
    if index.shape != (src.shape[0],) or src.dtype != base.dtype:
        raise ValueError("index_add: index must be (N,) and src must match base's dtype")
    out = base.contiguous().clone()
    src, index = src.contiguous(), index.contiguous()
    N, D = src.shape
    if N == 0 or D == 0:
        return out
    BLOCK_D = min(256, triton.next_power_of_2(D))
    BLOCK_N = max(1, min(32, 2048 // BLOCK_D))
    grid = (triton.cdiv(N, BLOCK_N), triton.cdiv(D, BLOCK_D))
    _index_add_kernel[grid](out, index, src, N, D, out.stride(0), src.stride(0),
                            BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D, num_warps=4)
    return out


def _reference(base, index, src):
    return base.index_add(0, index, src)


def _example_inputs(device):
    g = torch.Generator().manual_seed(26)
    base = torch.randn(10, 33, generator=g)
    index = torch.randint(0, 10, (57,), generator=g)  # many collisions per row
    src = torch.randn(57, 33, generator=g)
    return (base.to(device), index.to(device), src.to(device))


TOLERANCE = dict(atol=1e-5, rtol=1e-5)  # atomic accumulation order varies
