"""Large performance outputs kept as samples, for tests/0360-eval-perf.t:
an output of 2^22 float32 elements made portable as a case's output, saved
and read back with the judge's loader, then compared with the reference's
as the judge compares them.  Prints the sample's keys that hold tensors,
whether the same output passes, whether one wrong at 100 elements passes,
whether one wrong by 1000 at a single element passes (the sums see every
element), and whether the file is under a third of the whole tensor's
bytes (it was not while the positions were kept beside the values).

    sampled.py DIR"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

import torch  # noqa: E402

from geakh import compare, values  # noqa: E402


def kept(t, where, name):
    """t as a case's output, through a file as the judge reads it."""
    got = values.case_outputs(t, None, None, "0", set())
    path = os.path.join(where, name)
    torch.save(got, path)
    return values.load(path), os.path.getsize(path)


def passes(a, b):
    try:
        compare.compare(a, b, 1e-5, 1e-5)
    except compare.Mismatch:
        return "fails"
    return "passes"


where = sys.argv[1]
os.makedirs(where, exist_ok=True)
torch.manual_seed(0)
ref = torch.rand(1 << 22)
canon, size = kept(ref.clone(), where, "canon.pt")
same, _ = kept(ref.clone(), where, "same.pt")
wrong = ref.clone()
wrong[1000:1100] += 1
many, _ = kept(wrong, where, "many.pt")
one = ref.clone()
one[12345] += 1000
single, _ = kept(one, where, "one.pt")
sample = canon["ret"]
print(",".join(sorted(k for k, v in sample.items() if isinstance(v, torch.Tensor))),
      passes(same, canon), passes(many, canon), passes(single, canon),
      size * 3 < ref.numel() * ref.element_size())
