"""Varied conditions for the calibration's perturbed runs (plan key
"perturb"): a race between a kernel's programs can be decided alike on
every run made under the same conditions (where its memory lies, what
else the device is doing) and otherwise under others, so the runs of
the reference in one process, however many, need not show all that
races.  A perturbed run moves its allocations (a pad of random size
taken before each test run and performance case) and launches work of
random size on another stream just before each of the code's kernels,
so that the kernel's programs start on a device already partly busy.

Nothing here runs for a candidate, and nothing here runs on the CPU: the
interpreter runs a kernel's programs one after another.
"""
import random

import torch

# The most the concurrent work touches: long enough to overlap a kernel
# of a few hundred microseconds, small beside the device's memory.
NOISE_BYTES = 256 << 20
PAD_UNIT = 512


class Perturb:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.stream = torch.cuda.Stream()
        self.noise = torch.zeros(NOISE_BYTES // 4, dtype=torch.float32, device="cuda")
        self.pad = None

    def shift(self):
        """A new pad, so that what the run allocates next lands elsewhere."""
        self.pad = None
        n = self.rng.randrange(0, 48) * (2 << 20) + self.rng.randrange(0, 4096) * PAD_UNIT
        if n:
            self.pad = torch.empty(n, dtype=torch.uint8, device="cuda")

    def before_launch(self):
        """Work on the other stream that starts with the next kernel: it
        waits for what the caller's stream has queued so far."""
        n = self.rng.choice((0, 1 << 14, 1 << 18, 1 << 22, 1 << 24, NOISE_BYTES // 4))
        if not n:
            return
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            self.noise[:n].add_(1.0)


STATE = {"perturb": None}


def start(seed):
    """Perturbed runs from here on in this process (a GPU's only)."""
    if torch.cuda.is_available():
        STATE["perturb"] = Perturb(seed)


def shift():
    if STATE["perturb"] is not None:
        STATE["perturb"].shift()


def before_launch():
    if STATE["perturb"] is not None:
        STATE["perturb"].before_launch()
