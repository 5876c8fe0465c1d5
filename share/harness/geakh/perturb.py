"""Varied conditions for the calibration's perturbed runs (plan key
"perturb"): a race between a kernel's programs can be decided alike on
every run made under the same conditions (where its memory lies, what
else the device is doing) and otherwise under others, so the runs of
the reference in one process, however many, need not show all that
races.  A perturbed run moves its allocations (a pad of random size
taken before each test run and performance case) and launches work of
random size on another stream just before each of the code's kernels,
so that the kernel's programs start on a device already partly busy.

A perturbed process also runs every kernel with its programs in reverse
(reverse_programs): where programs write one place, the device lets the
last to start win far more often than not, so runs in the usual order
show only the writes that start close together, and the interpreter,
which runs programs one after another, shows none.  Program i of n doing
program n-1-i's work computes the same where the programs are
independent, and flips the winner wherever they are not.

Nothing here runs for a candidate; only the order runs on the CPU.
"""
import os
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


def reverse_programs(cache_dir):
    """Kernels compiled from here on in this process number their programs
    from the last along each axis.  Their binaries go to cache_dir alone:
    the compile cache's keys do not know of the change, and a reversed
    binary must never serve a run in the usual order."""
    from triton.language.semantic import TritonSemantic
    os.makedirs(cache_dir, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    usual = TritonSemantic.program_id

    def program_id(self, axis):
        pid = usual(self, axis)
        b = self.builder
        last = b.create_sub(b.create_get_num_programs(axis), b.get_int32(1))
        return self.tensor(b.create_sub(last, pid.handle), pid.type)
    TritonSemantic.program_id = program_id
