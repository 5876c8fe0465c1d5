"""timing.compare_or_resample on made-up outputs of a reference that
races at three random elements of a 500-wide tail on every call and whose
winner at element 5 almost never changes, against a candidate whose first
output has the rare winner (element 7 instead of 5):

    sticky_draws.py spread|sticky

spread: its next output has the rare winner too, as one made right after
it does (the winner depends on where the buffers lie and on what else
the device runs), but the later ones have the usual winner, as outputs
made apart from each other do; it passes (prints True).  sticky: every
output of the candidate has the rare winner, as a value that is wrong
everywhere does; it fails (prints the mismatch)."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

import torch  # noqa: E402

from geakh import timing  # noqa: E402

draw = torch.Generator().manual_seed(1)
usual, rare = torch.zeros(1000), torch.zeros(1000)
usual[5] = rare[7] = 1


def raced(out):
    out = out.clone()
    out[500 + torch.randint(500, (3,), generator=draw)] = 1
    return out


def reference_runs(first):
    return [raced(usual) for _ in range(6)]


def candidate(sticky):
    made = []

    def another():
        made.append(1)
        return raced(rare if sticky or len(made) == 1 else usual)
    return another


sticky = sys.argv[1] == "sticky"
try:
    print(timing.compare_or_resample([(raced(rare), usual)], None, usual, reference_runs,
                                     (1e-3, 1e-3), "input 0", candidate(sticky), 1))
except timing.Mismatch as exc:
    print(exc)
