"""What runs beside the code under test to keep its runs comparable and
its process tied to its worker: seeding, poisoned memory, the parent's
death (the sandbox, Landlock included, is sandbox.py's).

These live in the process that runs untrusted code, so a determined
candidate could subvert them; the verdict is made by judge.py from
outputs, in another process.
"""
import contextlib
import ctypes
import os
import random
import threading

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

# ---- seeding -----------------------------------------------------------

def reseed(seed):
    random.seed(seed)
    np.random.seed(seed % (1 << 32))
    torch.manual_seed(seed)
    if not _cpu_mode() and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(seed)


def drop_absent_seeding():
    """torch.manual_seed seeds every kind of device torch knows; for a
    kind this machine lacks (XPU, MTIA) it queues the seed for a device
    that never starts, with a formatted stack of the caller (a stat of
    every frame's file): milliseconds a seed, inside a test's deep stack
    tens of them, where tests and the harness seed hundreds of times.
    Seeding those absent kinds becomes a no-op."""
    for kind in ("xpu", "mtia"):
        mod = getattr(torch, kind, None)
        try:
            absent = mod is not None and not mod.is_available()
        except Exception:  # noqa: BLE001 - a build that cannot say: leave it
            absent = False
        if absent:
            for name in ("manual_seed", "manual_seed_all"):
                if hasattr(mod, name):
                    setattr(mod, name, lambda seed: None)


def _cpu_mode():
    return os.environ.get("TRITON_INTERPRET") == "1"


# Random draws a host-side input maker makes (a TritonBench perf script's
# torch.rand and kin without a device): on the GPU they take milliseconds
# where the host's generator, which runs on one thread, took seconds.
HOST_DRAWS = frozenset((torch.rand, torch.randn, torch.randint))


class DeviceDraws(TorchFunctionMode):
    """Inside, the draws of HOST_DRAWS meant for the host are made on the
    device: the same values for every run seeded alike on the same kind
    of device.  They stay there up to KEEP_BYTES in all (copying them to
    the host and back cost more than drawing them), and the rest is
    copied to the host, where a perf script keeps its inputs."""
    KEEP_BYTES = 4 << 30

    def __init__(self, keep=True, keep_bytes=None):
        super().__init__()
        self.limit = self.KEEP_BYTES if keep_bytes is None else keep_bytes
        self.kept = 0 if keep else self.limit + 1

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        device = kwargs.get("device")
        if func not in HOST_DRAWS or kwargs.get("generator") is not None or \
                kwargs.get("out") is not None or \
                (device is not None and torch.device(device).type != "cpu"):
            return func(*args, **kwargs)
        drawn = func(*args, **{**kwargs, "device": "cuda"})
        size = drawn.numel() * drawn.element_size()
        if self.kept + size > self.limit:
            return drawn.to("cpu")
        self.kept += size
        return drawn


def drawn_on_device(device, keep=True, keep_bytes=None):
    """A context in which host-side random draws are made on device (kept
    there, up to keep_bytes if given, unless keep is False; nothing
    changes on the CPU)."""
    if device == "cpu" or not torch.cuda.is_available():
        return contextlib.nullcontext()
    return DeviceDraws(keep, keep_bytes)


# ---- allocator poisoning -----------------------------------------------

def poison(device):
    """Leave NaN in memory the allocator will hand out next, so that an
    output that is never written shows up as NaN rather than as whatever
    the reference left behind."""
    sizes = (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26)
    if device == "cpu":
        sizes = sizes[:4]
    held = []
    for n in sizes:
        t = torch.empty(n // 4, dtype=torch.float32, device=device)
        t.fill_(float("nan"))
        held.append(t)
    del held


# Inside, no torch function mode (FilledEmpty among them) sees a call.
_NO_MODES = getattr(torch._C, "DisableTorchFunction", contextlib.nullcontext)

# The most cached blocks fill_free fills, the largest first; the
# allocator serves requests of up to SMALL bytes from its small pool.
FILL_BLOCKS = 256
SMALL = 1 << 20


def fill_free(poisoned):
    """Fill the device memory torch's allocator keeps cached but unused on
    this stream (NaN bytes where runs are poisoned, zeros where they are
    not), so that whatever the next call allocates, through any API,
    holds neither an earlier run's values nor garbage: a kernel that
    writes just the values its block already held would look as if it
    wrote nothing.  Blocks are taken by requests of their exact size (a
    small pool's over SMALL bytes in pieces; a large pool's of at most
    SMALL bytes cannot be), so nothing new is reserved."""
    if _cpu_mode() or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return
    stream = torch.cuda.current_stream()
    try:
        segments = torch.cuda.memory_snapshot()
    except RuntimeError:
        return
    held = []
    # Past FilledEmpty, which would fill each block once before this does.
    with torch.no_grad(), _NO_MODES():
        for n in free_sizes(segments, stream.cuda_stream, stream.device.index):
            t = torch.empty(n, dtype=torch.uint8, device=stream.device)
            t.fill_(0xFF if poisoned else 0)
            held.append(t)
    del held


def free_sizes(segments, stream, device):
    """The requests, largest first and FILL_BLOCKS at most, that take the
    free blocks of a memory snapshot's segments (torch.cuda.memory_snapshot)
    that the default pool holds for this stream and device."""
    sizes = []
    for seg in segments:
        if seg.get("stream") != stream or seg.get("device") != device:
            continue
        pool = seg.get("segment_pool_id")
        if pool is not None and tuple(pool) != (0, 0):  # a private pool (CUDA graphs)
            continue
        small = seg.get("segment_type") == "small"
        for b in seg["blocks"]:
            n = b["size"]
            if b["state"] != "inactive" or (not small and n <= SMALL):
                continue
            # A small segment's free block over SMALL is taken in pieces.
            while small and n > SMALL:
                sizes.append(SMALL)
                n -= SMALL
            sizes.append(n)
    return sorted(sizes, reverse=True)[:FILL_BLOCKS]


# ---- uninitialised memory ----------------------------------------------

EMPTY_FUNCS = frozenset(f for f in (
    torch.empty, torch.empty_like, torch.empty_strided, torch.Tensor.new_empty,
    getattr(torch.Tensor, "new_empty_strided", None)) if f is not None)


def fill_poison(t):
    """NaN for floating tensors, a fixed pattern for the others."""
    if not isinstance(t, torch.Tensor) or t.numel() == 0:
        return
    with torch.no_grad():
        if t.is_floating_point() or t.is_complex():
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            t.fill_(torch.iinfo(t.dtype).max if t.dtype != torch.uint8 else 0xA5)


def _zero(t):
    if isinstance(t, torch.Tensor) and t.numel() > 0:
        with torch.no_grad():
            t.zero_()


class FilledEmpty(TorchFunctionMode):
    """Inside, memory from torch.empty and its kin comes filled by fill."""

    def __init__(self, fill):
        super().__init__()
        self.fill = fill

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in EMPTY_FUNCS:
            self.fill(out)
        return out


def zeroed_empties():
    """A context in which memory from torch.empty and its kin starts as
    zeros: inputs made once per process (a perf script's), where an
    output buffer's elements that no kernel writes would otherwise hold
    that process's garbage, different in the candidate's than in the
    reference's."""
    return FilledEmpty(_zero)


# Whether memory handed out by torch.empty and its kin is poisoned now
# (the CPU mode's device mapping reads it too).
POISON = {"on": False}


@contextlib.contextmanager
def poisoned(on, device):
    """Inside, memory from torch.empty and its kin starts as NaN (or a
    fixed pattern), so that an output a kernel never writes cannot pass by
    holding what the reference left there."""
    saved = POISON["on"]
    POISON["on"] = on
    mode = FilledEmpty(fill_poison) if on and device != "cpu" else None
    if mode is not None:
        mode.__enter__()
    try:
        yield
    finally:
        if mode is not None:
            mode.__exit__(None, None, None)
        POISON["on"] = saved


# ---- memory ------------------------------------------------------------

def release_cached(device):
    """Give the device the memory torch's allocator keeps cached but
    unused, where that is more than an eighth of it: a case's inputs and
    outputs stay cached otherwise, out of reach of the other jobs on the
    GPU (sixteen jobs ran each other out of memory on an H200), while
    emptying the cache after every small case costs its time."""
    if device == "cpu":
        return
    try:
        total = torch.cuda.get_device_properties(0).total_memory
        # The nested statistics, not memory_reserved() and
        # memory_allocated(): those flatten every statistic, each time.
        stats = torch.cuda.memory_stats_as_nested_dict()
        cached = stats["reserved_bytes"]["all"]["current"] - stats["allocated_bytes"]["all"]["current"]
        if cached > total // 8:
            torch.cuda.empty_cache()
    except (RuntimeError, KeyError):
        pass


def device_peak_mib(device):
    """The most device memory torch's allocator held in this process, in
    MiB (0 on the CPU): what geak-eval reserves on the GPU for the
    task's runs, from the reference's calibration."""
    if device == "cpu":
        return 0
    try:
        return int(torch.cuda.memory_stats_as_nested_dict()["reserved_bytes"]["all"]["peak"]) >> 20
    except (RuntimeError, KeyError, AssertionError):
        return 0


# ---- threads -----------------------------------------------------------

def python_threads():
    return threading.active_count()


# ---- the parent ----------------------------------------------------------

def die_with_parent():
    """SIGKILL this process when the worker that forked it dies."""
    PR_SET_PDEATHSIG = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)


def become_subreaper():
    """Orphans among this process's descendants (a daemon's first fork
    exiting) come to it instead of to init, to be killed with the job."""
    PR_SET_CHILD_SUBREAPER = 36
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
