# SPDX-License-Identifier: MIT
"""Cross-entropy loss forward from raw logits:
``loss[i] = logsumexp(logits[i, :]) - logits[i, target[i]]`` for ``logits``
of shape (N, V) (V may be a large vocabulary) and integer ``target`` of shape
(N,); rows whose target equals ``ignore_index`` contribute 0 and are left out
of the mean. Returns the per-row losses (fp32, shape (N,)) for
``reduction="none"``, or a 0-d fp32 tensor for "mean" or "sum". Performance
idea: one program per row streams the logits once in BLOCK_V chunks with an
online log-sum-exp (running max plus a rescaled running sum), so the (N, V)
softmax is never materialised; the target logit is fetched with one scalar
load instead of a one-hot gather.
"""

import torch
import triton
import triton.language as tl

ENTRY = "cross_entropy"


@triton.jit
def _cross_entropy_kernel(logits_ptr, target_ptr, loss_ptr, V, stride_lm, ignore_index,
                          BLOCK_V: tl.constexpr):
    """Compute the cross-entropy loss of one row of logits."""
    row = tl.program_id(axis=0).to(tl.int64)
    row_ptr = logits_ptr + row * stride_lm
    target = tl.load(target_ptr + row)

    # Online log-sum-exp in fp32: m is the running max, s the running sum of
    # exp(x - m); a larger chunk max rescales s instead of restarting.
    m = tl.full((), float("-inf"), dtype=tl.float32)
    s = tl.full((), 0.0, dtype=tl.float32)
    for start in tl.range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(row_ptr + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(s)

    # Ignored rows must not read out of bounds: clamp the index for the load
    # and zero the result afterwards.
    valid = target != ignore_index
    safe_target = tl.where(valid, target, 0)
    target_logit = tl.load(row_ptr + safe_target).to(tl.float32)
    loss = tl.where(valid, lse - target_logit, 0.0)
    tl.store(loss_ptr + row, loss)


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
                  reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy of (N, V) logits against (N,) class indices, like F.cross_entropy."""
    if logits.dim() != 2 or target.shape != (logits.shape[0],):
        raise ValueError("cross_entropy: expected logits (N, V) and target (N,)")
    if logits.stride(1) != 1:
        logits = logits.contiguous()
    target = target.contiguous()
    N, V = logits.shape
    losses = torch.empty((N,), device=logits.device, dtype=torch.float32)
    if N > 0:
        BLOCK_V = min(4096, triton.next_power_of_2(V))
        num_warps = 8 if BLOCK_V >= 2048 else 4
        _cross_entropy_kernel[(N,)](logits, target, losses, V, logits.stride(0), ignore_index,
                                    BLOCK_V=BLOCK_V, num_warps=num_warps)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        # Like PyTorch: average over non-ignored rows only.
        return losses.sum() / (target != ignore_index).sum()
    raise ValueError("cross_entropy: reduction must be 'none', 'mean' or 'sum'")


def _reference(logits, target, ignore_index=-100, reduction="mean"):
    return torch.nn.functional.cross_entropy(logits.float(), target, ignore_index=ignore_index,
                                             reduction=reduction)


def _example_inputs(device):
    g = torch.Generator().manual_seed(15)
    N, V = 13, 5000  # V spans two 4096-wide chunks
    logits = 3.0 * torch.randn(N, V, generator=g)
    target = torch.randint(0, V, (N,), generator=g)
    target[[3, 8]] = -100  # ignored rows
    return (logits.to(device), target.to(device), -100, "mean")


TOLERANCE = dict(atol=1e-5, rtol=1e-5)
