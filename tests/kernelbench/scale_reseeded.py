# expect: mismatch
# ModelNew whose parameter is made after another draw: other weights,
# so its outputs differ from the reference's.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, w_ptr, out_ptr, n, dim, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    w = tl.load(w_ptr + offs % dim, mask=mask)
    tl.store(out_ptr + offs, x * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        torch.randn(1)
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _scale[(triton.cdiv(n, 256),)](x, self.weight, out, n, self.weight.numel(), BLOCK=256)
        return out
