# expect: cheat
# Arithmetic on the host: the inputs go to numpy, numpy adds them, and a
# real Triton kernel copies the sum back into the output.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def add(x, y):
    total = x.detach().cpu().numpy() + y.detach().cpu().numpy()
    src = torch.from_numpy(total).to(x.device)
    out = torch.empty_like(x)
    _copy_kernel[(triton.cdiv(out.numel(), 128),)](src, out, out.numel(), BLOCK=128)
    return out
