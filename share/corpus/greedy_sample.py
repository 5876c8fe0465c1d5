# SPDX-License-Identifier: MIT
"""Greedy (argmax) token sampling without top-k: for logits of shape
(batch, vocab) return, per row, the index of the largest logit as int64 of
shape (batch,); ties resolve to the smallest index, like ``torch.argmax``.
Rows may be vocabulary-sized (100K+), much longer than one block.
Performance idea: one program per row streams the row in BLOCK_V chunks and
keeps, per lane, the best value and its index seen so far, which is a
compare-and-select per element with no cross-lane reduction inside the loop.
Only after the loop does it reduce once: the row maximum, then the smallest
index among lanes holding it. No probabilities, sorting or top-k buffers are
ever materialised.
"""

import torch
import triton
import triton.language as tl

ENTRY = "greedy_sample"


@triton.jit
def _greedy_sample_kernel(logits_ptr, out_ptr, V, stride_row, BLOCK_V: tl.constexpr):
    """Find the first index of the maximum logit in one row."""
    row = tl.program_id(axis=0).to(tl.int64)
    row_ptr = logits_ptr + row * stride_row
    lanes = tl.arange(0, BLOCK_V)

    best_val = tl.full((BLOCK_V,), float("-inf"), dtype=tl.float32)
    best_idx = tl.zeros((BLOCK_V,), dtype=tl.int32)
    for start in tl.range(0, V, BLOCK_V):
        cols = start + lanes
        x = tl.load(row_ptr + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        # Strictly greater: a lane keeps its earlier (smaller) index on ties.
        better = x > best_val
        best_val = tl.where(better, x, best_val)
        best_idx = tl.where(better, cols, best_idx)

    row_max = tl.max(best_val, axis=0)
    # Among lanes that hold the maximum, the smallest column is the first one.
    candidates = tl.where(best_val == row_max, best_idx, V)
    token = tl.min(candidates, axis=0)
    tl.store(out_ptr + row, token.to(tl.int64))


def greedy_sample(logits: torch.Tensor) -> torch.Tensor:
    """Return ``logits.argmax(dim=-1)`` for a (batch, vocab) tensor without NaNs."""
    if logits.dim() != 2 or logits.shape[1] == 0:
        raise ValueError("greedy_sample: expected logits of shape (batch, vocab)")
    if logits.stride(1) != 1:
        logits = logits.contiguous()
    B, V = logits.shape
    out = torch.empty((B,), device=logits.device, dtype=torch.int64)
    if B == 0:
        return out
    BLOCK_V = min(1024, triton.next_power_of_2(V))
    _greedy_sample_kernel[(B,)](logits, out, V, logits.stride(0), BLOCK_V=BLOCK_V, num_warps=4)
    return out


def _reference(logits):
    return logits.argmax(dim=-1)


def _example_inputs(device):
    g = torch.Generator().manual_seed(34)
    logits = torch.randn(4, 3000, generator=g)  # three chunks of 1024, last partial
    logits[1, 100] = logits[1, 2500] = 50.0     # tie across different lanes
    logits[2, 7] = logits[2, 7 + 1024] = 50.0   # tie within one lane
    logits[3, 2999] = 60.0                      # maximum in the masked tail chunk
    return (logits.to(device=device, dtype=torch.bfloat16),)
