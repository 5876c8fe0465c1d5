"""The perturbed calibration's program order (geakh.perturb.Order),
compiled on a GPU: a scatter whose programs collide, as a small launch
(run a program at a time, in reverse, then in the usual order) and a
large one (reversed, then usual), then in the usual order again from the
same compile cache, where the small launch's programs, side by side,
race by timing; and an elementwise kernel, which must not change.

    GEAK_SHAREDIR=share python3 tests/gpu/order-check.py

Prints one line per run and "order: ok" or "order: FAILED".  Without a
GPU it runs in the interpreter, which runs programs one at a time, on
sizes and a SERIAL_MAX 128 times smaller.
"""
import json
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["GEAK_SHAREDIR"], "harness"))
import torch
dev = "cuda" if torch.cuda.is_available() else "cpu"
if dev == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"
os.environ["TRITON_CACHE_DIR"] = sys.argv[1]
from geakh import perturb
# The interpreter runs a program in about a millisecond: sizes that keep
# the same sides of SERIAL_MAX.
scale = 1 if dev == "cuda" else 128
perturb.SERIAL_MAX //= scale
if sys.argv[2] == "order":
    perturb.order_programs(sys.argv[3], dev)
import triton, triton.language as tl


@triton.jit
def scatter(X, I, O, BLOCK: tl.constexpr):
    p = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    offs = p * BLOCK + tl.arange(0, BLOCK)
    tl.store(O + tl.load(I + p) * BLOCK + tl.arange(0, BLOCK), tl.load(X + offs))


@triton.jit
def add(X, Y, O, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(O + offs, tl.load(X + offs) + tl.load(Y + offs))


def late_rows(n, B, grid):
    """Of n programs writing n/2 rows (program i and i + n/2 the same
    row), how many rows the later program's value holds."""
    x = torch.randn(n * B, device=dev)
    idx = (torch.arange(n, device=dev) % (n // 2)).to(torch.int32)
    o = torch.zeros((n // 2) * B, device=dev)
    perturb.launch(type(scatter).run, scatter, (x, idx, o), {"grid": grid, "warmup": False, "BLOCK": B})
    late = x.view(n, B)[n // 2:]
    return int((o.view(-1, B) == late).all(1).sum())


torch.manual_seed(0)
out = {}
large = 16384 // scale
for name, n, grid in (("small", 64, (32, 2)), ("large", large, lambda m: (large,))):
    out[name] = [late_rows(n, 64, grid) for _ in range(2)]
out["half"] = large // 2
x, y = torch.randn((1 << 20) // scale, device=dev), torch.randn((1 << 20) // scale, device=dev)
s = torch.empty_like(x)
perturb.launch(type(add).run, add, (x, y, s), {"grid": (x.numel() // 256,), "warmup": False, "BLOCK": 256})
out["add_ok"] = bool(torch.equal(s, x + y))
print(json.dumps(out))
'''


def run(d, cache, mode, extra):
    path = os.path.join(d, "child.py")
    with open(path, "w") as fp:
        fp.write(CHILD)
    got = subprocess.run([sys.executable, path, cache, mode, extra], capture_output=True, text=True)
    if got.returncode:
        sys.stderr.write(got.stderr[-3000:])
        raise SystemExit(f"order-check: the {mode} run failed")
    return json.loads(got.stdout.strip().splitlines()[-1])


def main():
    with tempfile.TemporaryDirectory() as d:
        cache = os.path.join(d, "cache")
        first = run(d, cache, "usual", "")
        other = run(d, cache, "order", os.path.join(d, "ordered"))
        again = run(d, cache, "usual", "")
    for name, r in (("usual", first), ("ordered", other), ("usual again", again)):
        print(f"{name}: rows the later program won, small launch (32 of 32) {r['small']}, "
              f"large ({r['half']} of {r['half']}) {r['large']}; add exact {r['add_ok']}")
    half = other["half"]
    ok = (other["small"] == [0, 32] and other["large"][0] < half // 2 and other["large"][1] > half // 2
          and first["large"] == again["large"] and all(r["add_ok"] for r in (first, other, again)))
    print("order:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
