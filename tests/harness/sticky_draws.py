"""timing.compare_or_resample on made-up outputs of racing references,
against candidates whose outputs differ from all of the reference's at
some element:

    sticky_draws.py spread|sticky|row|elsewhere

spread, sticky: a 1000-element output that races at three random
elements of a 500-wide tail on every call and whose winner at element 5
almost never changes.  The candidate's first output has the rare winner
(element 7 instead of 5).  spread: its next output has it too, as one
made right after it does (the winner depends on where the buffers lie
and on what else the device runs), the later ones the usual winner, as
outputs made apart from each other do; it passes (prints True).  sticky:
every output has the rare winner, as a value that is wrong everywhere
does; it fails (prints the mismatch).

row, elsewhere: a 100 x 10 output whose row 50 is written by racing
writers: on every call of the reference one of its elements 4 to 9 gets
the other writer's value, element 3 never.  row: the candidate's element
(50, 3) has the other writer's value on every call, as interleaved
stores of the two writers can give; the row races, so it passes.
elsewhere: the same at (20, 3), in a row where nothing races; it fails."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

import torch  # noqa: E402

from geakh import timing  # noqa: E402

draw = torch.Generator().manual_seed(1)
case = sys.argv[1]


def pick(n, low=0):
    return low + torch.randint(n, (1,), generator=draw)


if case in ("spread", "sticky"):
    usual, rare = torch.zeros(1000), torch.zeros(1000)
    usual[5] = rare[7] = 1

    def raced(out):
        out = out.clone()
        out[500 + torch.randint(500, (3,), generator=draw)] = 1
        return out
    first = raced(rare)

    def candidate_output(k):
        return raced(rare if case == "sticky" or k == 1 else usual)
else:
    usual = torch.zeros(100, 10)
    rare = usual.clone()
    rare[50 if case == "row" else 20, 3] = 1

    def raced(out):
        out = out.clone()
        out[50, pick(6, 4)] = 1
        return out
    first = raced(rare)

    def candidate_output(k):
        return raced(rare)


def reference_runs(first):
    return [raced(usual) for _ in range(6)]


def candidate():
    made = []

    def another():
        made.append(1)
        return candidate_output(len(made))
    return another


try:
    print(timing.compare_or_resample([(first, usual)], None, usual, reference_runs,
                                     (1e-3, 1e-3), "input 0", candidate(), 1))
except timing.Mismatch as exc:
    print(exc)
