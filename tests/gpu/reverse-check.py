"""The perturbed calibration's program order, compiled on a GPU: a
scatter whose programs collide, run in the usual order, in reverse, and
in the usual order again from the same compile cache; and an elementwise
kernel, which must not change.

    GEAK_SHAREDIR=share python3 tests/gpu/reverse-check.py

Prints one line per run and "reverse: ok" or "reverse: FAILED".  Without
a GPU it runs in the interpreter, where the order is exact.
"""
import json
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["GEAK_SHAREDIR"], "harness"))
os.environ["TRITON_CACHE_DIR"] = sys.argv[1]
if sys.argv[2] == "reverse":
    from geakh import perturb
    perturb.reverse_programs(sys.argv[3])
import torch
dev = "cuda" if torch.cuda.is_available() else "cpu"
if dev == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"
import triton, triton.language as tl

@triton.jit
def scatter(X, I, O, BLOCK: tl.constexpr):
    p = tl.program_id(0)
    offs = p * BLOCK + tl.arange(0, BLOCK)
    tl.store(O + tl.load(I + p) * BLOCK + tl.arange(0, BLOCK), tl.load(X + offs))

@triton.jit
def add(X, Y, O, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(O + offs, tl.load(X + offs) + tl.load(Y + offs))

torch.manual_seed(0)
n, B = 4096, 64
x = torch.randn(n * B, device=dev)
# Programs 0..2047 and 2048..4095 write the same 2048 rows, far apart in
# the order they start.
idx = (torch.arange(n, device=dev) % (n // 2)).to(torch.int32)
o = torch.zeros((n // 2) * B, device=dev)
scatter[(n,)](x, idx, o, BLOCK=B)
late = x.view(n, B)[n // 2:].reshape(-1)
y = torch.randn(n * B, device=dev)
s = torch.empty_like(x)
add[(n,)](x, y, s, BLOCK=B)
print(json.dumps({"late_rows": int((o.view(-1, B) == late.view(-1, B)).all(1).sum()),
                  "add_ok": bool(torch.equal(s, x + y))}))
'''


def run(cache, mode, extra):
    out = subprocess.run([sys.executable, "-c", CHILD, cache, mode, extra],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    with tempfile.TemporaryDirectory() as d:
        cache, rev = os.path.join(d, "cache"), os.path.join(d, "reversed")
        first = run(cache, "usual", "")
        back = run(cache, "reverse", rev)
        again = run(cache, "usual", "")
    for name, r in (("usual", first), ("reverse", back), ("usual again", again)):
        print(f"{name}: rows won by the later programs {r['late_rows']} of 2048, add exact {r['add_ok']}")
    ok = (first["late_rows"] > 1500 and back["late_rows"] < 548 and again == first
          and all(r["add_ok"] for r in (first, back, again)))
    print("reverse:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
