"""What rebuilding Triton's host launcher modules costs a process.

Run three times on one TRITON_CACHE_DIR (see launcher-cost.sh): cold
(everything compiled), warm (everything cached), and warm with the
launcher modules (.so) removed from the cache, as geak-eval's pruning of
a candidate's cache leaves it: the third run's time to its first launch
less the second's is what each job pays to build them again.
"""
import sys
import time

t0 = time.perf_counter()
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _scale(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


x = torch.randn(1 << 20, device="cuda")
y = torch.randn_like(x)
out = torch.empty_like(x)
torch.cuda.synchronize()
t1 = time.perf_counter()
_add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
_scale[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), 2.0, BLOCK=1024)
torch.cuda.synchronize()
t2 = time.perf_counter()
print(f"{sys.argv[1]}: imports {t1 - t0:.2f} s, first launches of two kernels {t2 - t1:.3f} s")
