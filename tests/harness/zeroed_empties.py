"""guard.zeroed_empties, the context a perf script's inputs are made in:
memory from torch.empty and its kin comes zeroed there, where outside it
holds what was freed last.  Prints "outside: garbage|zeros" and
"inside: zeros|garbage" per function."""
import os
import sys

sys.path.insert(0, os.path.join(os.environ["GEAK_SHAREDIR"], "harness"))
import torch  # noqa: E402

from geakh import guard  # noqa: E402


def freed():
    """Leave 7s in memory the allocator hands out next."""
    t = torch.full((1000,), 7.0)
    del t


def zeros(t):
    return "zeros" if bool((t == 0).all()) else "garbage"


freed()
words = ["outside: " + zeros(torch.empty(1000))]
with guard.zeroed_empties():
    freed()
    a = torch.empty(1000)
    freed()
    b = torch.empty_like(torch.ones(1000), dtype=torch.int32)
    freed()
    c = torch.ones(1).new_empty((1000,))
words.append("inside: " + " ".join(zeros(t) for t in (a, b, c)))
print("; ".join(words))
