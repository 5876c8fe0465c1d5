"""Varied conditions for the calibration's perturbed runs (plan key
"perturb"): a race between a kernel's programs can be decided alike on
every run made under the same conditions (where its memory lies, what
else the device is doing) and otherwise under others, so the runs of
the reference in one process, however many, need not show all that
races.  A perturbed run moves its allocations (a pad of random size
taken before each test run and performance case) and launches work of
random size on another stream just before each of the code's kernels,
so that the kernel's programs start on a device already partly busy.

A perturbed process also changes the order its kernels' programs run in
(see Order): where programs write one place, the device lets the last to
start win far more often than not, so runs in the usual order show only
the writes that start close together, and the interpreter, which runs
programs one after another, shows none.

Nothing here runs for a candidate; only the order runs on the CPU, where
the interpreter takes it as the device does.
"""
import math
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


STATE = {"perturb": None, "order": None}


def start(seed):
    """Perturbed runs from here on in this process (a GPU's only)."""
    if torch.cuda.is_available():
        STATE["perturb"] = Perturb(seed)


def shift():
    """A run or a performance check begins."""
    if STATE["perturb"] is not None:
        STATE["perturb"].shift()
    if STATE["order"] is not None:
        STATE["order"].next_run()


def before_launch():
    if STATE["perturb"] is not None:
        STATE["perturb"].before_launch()


# Program order modes, the first word of Order's buffer.
USUAL, REVERSED, ONE = 0, 1, 2
# A launch of at most this many programs can run them one at a time (a
# launch each, some tens of microseconds apiece); a larger one runs in
# reverse or in the usual order.
SERIAL_MAX = 8192


class Order:
    """The order the programs of the process's launches run in.  Every
    kernel compiled in the process reads it from a buffer at a fixed
    address, [mode, x, y, z, nx, ny, nz]: mode USUAL, REVERSED (program i
    of n along each axis does program n-1-i's work), or ONE (the launch's
    single program is program (x, y, z) of a grid (nx, ny, nz)).

    Launches of the code's kernels alternate between reversed and usual
    order, and each run or performance check starts in the other order
    from the one before it: a launch at the same place in every run (the
    repeat of a run's first call, say) takes both orders, whatever number
    of launches a run makes.  The first two launches of a kernel on a grid
    of at most SERIAL_MAX programs run its programs one at a time instead,
    once in each order, so that each program's writes land before the next
    one starts: where two programs write one place, one order keeps the
    first one's value and the other the last one's, whatever the device's
    scheduling would have done (once each is all it takes: one program at
    a time, a kernel computes the same on the same inputs).  Reversing
    alone flips the programs that start far apart; those that run side by
    side (a grid smaller than the device) race by timing, which no order
    of starting changes.  Any other launch runs reversed."""

    def __init__(self, device):
        self.device = device
        self.buf = torch.zeros(8, dtype=torch.int32, device=device)
        self.addr = self.buf.data_ptr()
        self.launches = 0  # this run's
        # 1 where this run's first launch runs in the usual order; the
        # first run (next_run flips it) starts reversed.
        self.phase = 1
        self.serial = {}  # (kernel, grid) -> launches made a program at a time
        self.buf[0].fill_(REVERSED)

    def next_run(self):
        self.phase ^= 1
        self.launches = self.phase

    def launch(self, run, kernel, args, kwargs):
        self.launches += 1
        grid = _grid(kernel, args, kwargs)
        key = (id(kernel), grid)  # the kernel lives as long as the process
        done = self.serial.get(key, 0)
        if grid is None or not 0 < math.prod(grid) <= SERIAL_MAX or done >= 2:
            self.buf[0].fill_(REVERSED if self.launches % 2 else USUAL)
            try:
                return run(kernel, *args, **kwargs)
            finally:
                self.buf[0].fill_(REVERSED)
        self.serial[key] = done + 1
        nx, ny, nz = grid
        words = [(ONE, x, y, z, nx, ny, nz) for z in range(nz) for y in range(ny) for x in range(nx)]
        if done == 0:
            words.reverse()
        # One copy to the device, then a copy on the device before each
        # program's launch: a copy from the host would wait for the
        # device every time.
        table = torch.tensor(words, dtype=torch.int32, device=self.device)
        one = dict(kwargs, grid=(1, 1, 1))
        out = None
        try:
            for row in table:
                self.buf[:7].copy_(row)
                out = run(kernel, *args, **one)
        finally:
            self.buf[0].fill_(REVERSED)
        return out


def _grid(kernel, args, kwargs):
    """The launch's grid as three sizes, its function of the arguments
    resolved as Triton resolves it; None where it cannot be."""
    grid = kwargs.get("grid")
    try:
        if callable(grid):
            sig = kernel.signature
            bound = sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
            bound.apply_defaults()
            grid = grid(dict(bound.arguments))
        grid = tuple(int(g) for g in grid)
    except Exception:  # noqa: BLE001 - any grid Triton would take and this cannot
        return None
    if not 1 <= len(grid) <= 3 or min(grid) < 0:
        return None
    return grid + (1,) * (3 - len(grid))


def order_programs(cache_dir, device):
    """Kernels compiled from here on in this process take their program
    order from an Order (the launches of the code's own, see launch).
    Their binaries go to cache_dir alone: the compile cache's keys do not
    know of the change, and such a binary must never serve another
    process."""
    from triton._C.libtriton import ir
    from triton.language import core as tl
    from triton.language.semantic import TritonSemantic
    os.makedirs(cache_dir, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = cache_dir
    order = STATE["order"] = Order(device)
    usual_pid, usual_count = TritonSemantic.program_id, TritonSemantic.num_programs

    def word(self, i):
        b = self.builder
        ptr = b.create_int_to_ptr(b.get_int64(order.addr + 4 * i), tl.pointer_type(tl.int32).to_ir(b))
        return b.create_load(ptr, ir.CACHE_MODIFIER.NONE, ir.EVICTION_POLICY.NORMAL, True)

    def program_id(self, axis):
        pid = usual_pid(self, axis)
        b = self.builder
        mode = word(self, 0)
        last = b.create_sub(b.create_get_num_programs(axis), b.get_int32(1))
        v = b.create_select(b.create_icmpEQ(mode, b.get_int32(REVERSED)),
                            b.create_sub(last, pid.handle), pid.handle)
        v = b.create_select(b.create_icmpEQ(mode, b.get_int32(ONE)), word(self, 1 + axis), v)
        return self.tensor(v, pid.type)

    def num_programs(self, axis):
        n = usual_count(self, axis)
        b = self.builder
        v = b.create_select(b.create_icmpEQ(word(self, 0), b.get_int32(ONE)), word(self, 4 + axis), n.handle)
        return self.tensor(v, n.type)
    TritonSemantic.program_id = program_id
    TritonSemantic.num_programs = num_programs


def launch(run, kernel, args, kwargs):
    """run(kernel, *args, **kwargs), a launch of the code's kernel, in the
    process's program order."""
    if STATE["order"] is None:
        return run(kernel, *args, **kwargs)
    return STATE["order"].launch(run, kernel, args, kwargs)
