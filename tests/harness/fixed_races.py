"""calibrate._fixed_races on made-up runs, for tests/0350-eval-plain.t:
races decided anew on every run (256 random bits; one place of 63 in a
row; one of 65536; a new value at one fixed place) and races decided once
per process (one place of 65536 drawn per process).  Prints how many of
TRIALS were taken for fixed within a process, per kind: "0 0 0 0 TRIALS"
is right.  The draws are
seeded, so the result is the same on every run.

    fixed_races.py TRIALS"""
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

import torch  # noqa: E402

from geakh import calibrate  # noqa: E402


def bits():
    t = torch.zeros(300)
    t[44:] = torch.randint(0, 2, (256,)).float()
    return t


def row():
    t = torch.zeros(64, 64)
    t[5, 1 + random.randrange(63)] = 1
    return t


def sparse():
    t = torch.zeros(65536)
    t[random.randrange(65536)] = 1
    return t


def value():
    t = torch.zeros(1000)
    t[7] = random.random()
    return t


def per_process():
    """A maker of runs that all set the place drawn for their process."""
    place = random.randrange(65536)

    def run():
        t = torch.zeros(65536)
        t[place] = 1
        return t
    return run


def flagged(make_a, make_b, make_r):
    canon = make_a()
    procs = {"A": [canon, make_a()], "B": [make_b()], "R": [make_r() for _ in range(12)]}
    return calibrate._fixed_races(canon, procs, 1e-5, 1e-5)


def main(trials):
    random.seed(1)
    torch.manual_seed(1)
    counts = [sum(flagged(g, g, g) for _ in range(trials)) for g in (bits, row, sparse, value)]
    counts.append(sum(flagged(per_process(), per_process(), per_process()) for _ in range(trials)))
    print(" ".join(map(str, counts)))


if __name__ == "__main__":
    main(int(sys.argv[1]))
