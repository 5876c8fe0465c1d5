#!/bin/sh
# What a run's outputs file costs to make, write, hash and read back, for
# performance cases shaped as relu_triton_kernel's (one float32 vector
# each of 2^12 to 2^27 elements, the large ones kept as samples): the
# format as it is against the same samples with their positions stored
# too (as they were), measured in the same run.  The judge reads the file
# and hashes it once per part, the run writes and hashes it once.
#
#   tests/bench/outputs-file.sh [LARGEST_LOG2]     (default 27)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${GEAK_SHAREDIR:=$top/share}" "${GEAK_PYTHON:=$top/.venv/bin/python}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/geak-bench.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
cd "$GEAK_SHAREDIR/harness" || exit 1
OMP_NUM_THREADS=1 exec "$GEAK_PYTHON" - "${1:-27}" "$dir" <<'PY'
import hashlib
import os
import statistics
import sys
import time

import torch

from geakh import values

top, where = int(sys.argv[1]), sys.argv[2]
torch.manual_seed(0)
notes = set()
t0 = time.perf_counter()
perf = {}
for k, e in enumerate(range(12, top + 1)):
    x = torch.rand(1 << e)
    perf[str(k)] = [values.case_outputs(torch.relu(x), (x,), (x.clone(),), str(k), notes)]
made = time.perf_counter() - t0


def with_positions(x, path=""):
    """The same outputs with each sample's positions stored beside it."""
    if values.is_sample(x):
        n = 1
        for d in x["shape"]:
            n *= d
        return dict(x, idx=values.sample_positions(n, path))
    if isinstance(x, dict):
        return {k: with_positions(v, path) for k, v in x.items()}
    if isinstance(x, list):
        return [with_positions(v, path) for v in x]
    return x


def cost(data, name):
    """Seconds to save and hash (the run), and to hash and load (the
    judge), medians of three; the file's MiB."""
    path = os.path.join(where, name)
    write, read = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        torch.save(data, path)
        with open(path, "rb") as fp:
            hashlib.sha256(fp.read()).hexdigest()
        write.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with open(path, "rb") as fp:
            hashlib.sha256(fp.read()).hexdigest()
        values.load(path)
        read.append(time.perf_counter() - t0)
    return os.path.getsize(path) / 2**20, statistics.median(write), statistics.median(read)


now = cost({"runs": [], "perf": perf}, "now.pt")
before = cost({"runs": [], "perf": with_positions(perf)}, "before.pt")
print(f"cases: {len(perf)} (2^12 to 2^{top} float32 elements), sampled above "
      f"{values.PERF_FULL_BYTES >> 20} MiB; made in {made:.2f} s")
print(f"{'':18} {'MiB':>8} {'write+hash s':>13} {'hash+load s':>12}")
for label, (mib, w, r) in (("with positions", before), ("as it is", now)):
    print(f"{label:18} {mib:8.1f} {w:13.3f} {r:12.3f}")
print(f"ratio (with positions / as it is): size {before[0] / now[0]:.2f}x, "
      f"write {before[1] / now[1]:.2f}x, read {before[2] / now[2]:.2f}x")
PY
