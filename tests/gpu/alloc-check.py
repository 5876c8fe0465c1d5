"""On a GPU: guard.fill_free fills the blocks the caching allocator keeps
free, so that a block handed out again holds the fill and not what was
left in it, without reserving memory; and a perturbed process (perturb)
moves its allocations and launches beside work on another stream.
Prints one line per check and exits 1 if any fails.

  GEAK_SHAREDIR=share python3 tests/gpu/alloc-check.py
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", "share"), "harness"))
from geakh import guard, perturb  # noqa: E402

failed = 0


def check(what, ok):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += not ok


sizes = (3 << 9, 300 << 10, 3 << 20, 37 << 20)
for n in sizes:
    t = torch.full((n,), 7, dtype=torch.uint8, device="cuda")
    del t
torch.cuda.synchronize()
reserved = torch.cuda.memory_reserved()
t0 = time.perf_counter()
guard.fill_free(True)
torch.cuda.synchronize()
spent = time.perf_counter() - t0
check(f"fill_free reserves nothing new ({reserved} -> {torch.cuda.memory_reserved()} bytes)",
      torch.cuda.memory_reserved() == reserved)
# Compared on the host: a comparison on the device would allocate (and
# write) blocks beside the one checked, which the next check takes.
for n in sizes:
    t = torch.empty(n, dtype=torch.uint8, device="cuda")
    check(f"a freed block of {n} bytes comes back filled with 0xFF", bool((t.cpu() == 0xFF).all()))
    del t
guard.fill_free(False)
x = torch.empty(37 << 20, dtype=torch.uint8, device="cuda")
check("unpoisoned, it comes back zeroed", bool((x.cpu() == 0).all()))
del x
print(f"fill_free took {spent * 1e3:.2f} ms")

perturb.start(1)
addrs = set()
for _ in range(8):
    perturb.shift()
    y = torch.empty(1 << 20, device="cuda")
    addrs.add(y.data_ptr())
    perturb.before_launch()
    y.fill_(1.0)
    del y
torch.cuda.synchronize()
check(f"perturbed allocations land at {len(addrs)} places in 8 runs", len(addrs) > 1)
sys.exit(1 if failed else 0)
