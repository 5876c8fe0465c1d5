"""Where the arithmetic ran: the torch operations a call of the task's
entry points runs outside the launches of the code's kernels, and the
floating-point data it takes off the device.

A Watch (a TorchDispatchMode) is entered around each watched call
(entry.Call) and stands aside while a kernel launches or an autotuner
times one (launches.py, autotune.py): what it sees is what the code's
own Python does between launches.  It records each operation that is not
allowed (the list in share/harness/torch-ops-allowed.txt, and any
operation whose tensors are all integer or boolean), and counts the
floating-point elements that leave for the host (a copy to the CPU, a
Python number, numpy(), tolist()) or come from it (a tensor made of
host data).  The judge fails a candidate whose calls do more of either
than the reference does (see judge.Judge.check_outside).
"""
import os
import time

import torch
# The first operation under a dispatch mode imports torch._dynamo (a
# second or two); imported with this module, it is paid once by the
# process that forks the jobs and their runs, not by each of them.
import torch._dynamo  # noqa: F401
from torch.utils._python_dispatch import TorchDispatchMode

# The list of allowed operations, beside the harness's package.
ALLOWED_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "torch-ops-allowed.txt")


def _read_allowed(path):
    names = set()
    with open(path) as fp:
        for line in fp:
            line = line.split("#", 1)[0].strip()
            if line:
                names.add(line)
    return frozenset(names)


ALLOWED = _read_allowed(ALLOWED_FILE)
# Operations that move data between the host and the device, counted
# apart rather than judged as arithmetic.
TO_HOST_OPS = frozenset({"_local_scalar_dense"})
FROM_HOST_OPS = frozenset({"lift_fresh", "lift_fresh_copy", "lift"})

WATCH = None  # the Watch of the call in progress, or None
SPENT = [0.0]  # seconds the watches added to the job's calls, in all


def _name(func):
    return getattr(func, "__name__", str(func)).split(".")[0]


def _tensors(x, out):
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _tensors(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _tensors(v, out)
    return out


def _floating(t):
    return t.is_floating_point() or t.is_complex()


def _float_elements(ts):
    return sum(t.numel() for t in ts if _floating(t))


class Watch(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = {}        # operation name -> times run
        self.to_host = 0     # floating-point elements taken off the device
        self.from_host = 0   # and made into tensors from host data
        self.paused = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        t0 = time.perf_counter()
        out = func(*args, **(kwargs or {}))
        t1 = time.perf_counter()
        if not self.paused:
            self._note(func, args, kwargs or {}, out)
        # What the watch costs: all but the operation itself.
        SPENT[0] += time.perf_counter() - t0 - (t1 - t0)
        return out

    def _note(self, func, args, kwargs, out):
        name = _name(func)
        ins = _tensors(list(args) + list(kwargs.values()), [])
        outs = _tensors(out, [])
        if name in TO_HOST_OPS:
            self.to_host += _float_elements(ins)
            return
        if name in FROM_HOST_OPS:
            self.from_host += _float_elements(outs)
            return
        if name in ("_to_copy", "copy_", "to") and ins and outs:
            src = ins[-1] if name == "copy_" else ins[0]
            dst = ins[0] if name == "copy_" else outs[0]
            if src.device.type != "cpu" and dst.device.type == "cpu":
                self.to_host += _float_elements([src])
        if name in ALLOWED:
            return
        if not any(_floating(t) for t in ins + outs):
            return  # index and length arithmetic
        self.ops[name] = self.ops.get(name, 0) + 1

    def record(self):
        return {"ops": sorted(self.ops), "to_host": self.to_host, "from_host": self.from_host}


def begin():
    """A Watch entered for the call now starting, or None where one is
    already in force."""
    global WATCH
    if WATCH is not None:
        return None
    WATCH = Watch()
    WATCH.__enter__()
    return WATCH


def end(watch):
    """watch left; its record."""
    global WATCH
    if watch is None:
        return None
    try:
        watch.__exit__(None, None, None)
    finally:
        WATCH = None
    return watch.record()


class aside:
    """Inside, the call's Watch records nothing: a launch's own argument
    handling, the interpreter's work, an autotuner's timing."""

    def __enter__(self):
        self.watch = WATCH
        if self.watch is not None:
            self.watch.paused += 1
        return self

    def __exit__(self, *exc):
        if self.watch is not None:
            self.watch.paused -= 1
        return False


def _counted(orig, floats):
    def method(self, *args, **kwargs):
        w = WATCH
        if w is not None and not w.paused and isinstance(self, torch.Tensor) and _floating(self):
            w.to_host += floats(self)
        return orig(self, *args, **kwargs)
    method.__name__ = getattr(orig, "__name__", "method")
    method.__doc__ = getattr(orig, "__doc__", None)
    return method


def install():
    """Count what numpy() and tolist() take to the host (neither runs an
    operation the Watch sees); __array__ goes through numpy()."""
    if getattr(torch.Tensor, "_geak_outside", False):
        return
    for attr in ("numpy", "tolist"):
        setattr(torch.Tensor, attr, _counted(getattr(torch.Tensor, attr), lambda t: t.numel()))
    torch.Tensor._geak_outside = True
