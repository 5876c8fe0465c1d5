"""CPU mode: run code written for a GPU under Triton's interpreter.

Tensors asked for on 'cuda' are made on the CPU, `.cuda()` and the device
queries answer as if one GPU were there, and synchronisation is a no-op.
A TorchFunctionMode catches every torch function and tensor method that
takes a device, which covers factories, `.to()` and `.new_*()`.
"""
import contextlib
import time

import torch
from torch.overrides import TorchFunctionMode

from . import guard


def _host(dev):
    if isinstance(dev, torch.device):
        return torch.device("cpu") if dev.type == "cuda" else dev
    if isinstance(dev, str) and dev.startswith("cuda"):
        return "cpu"
    if isinstance(dev, int) and not isinstance(dev, bool):
        return "cpu"
    return dev


class CudaOnCpu(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs:
            kwargs["device"] = _host(kwargs["device"])
        if func is torch.Tensor.to:
            args = tuple(_host(a) if isinstance(a, (str, torch.device)) else a for a in args)
        out = func(*args, **kwargs)
        if guard.POISON["on"] and func in guard.EMPTY_FUNCS:
            guard.fill_poison(out)
        return out


class _FakeStream:
    def __init__(self, *a, **k):
        pass

    def synchronize(self):
        pass

    def wait_stream(self, *a):
        pass

    def record_event(self, *a):
        return _FakeEvent()

    cuda_stream = 0

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _FakeEvent:
    """An event that records the host's clock: the CPU has no device
    timeline, and every operation has ended when the next begins."""

    def __init__(self, *a, **k):
        self.t = 0.0

    def record(self, *a):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def wait(self, *a):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


class _Props:
    name = "cpu (Triton interpreter)"
    major, minor = 9, 0
    multi_processor_count = 4
    total_memory = 16 << 30
    L2_cache_size = 4 << 20
    warp_size = 32
    gcnArchName = ""


def install():
    """Enter the device mapping for the rest of the process; while
    guard.poisoned is on, every tensor made by torch.empty and its kin
    starts as NaN (or a fixed pattern).  Autotuners take their first
    configuration (geakh.autotune's "first" policy): the interpreter cannot
    time them."""
    cuda = torch.cuda
    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.Tensor.is_cuda = property(lambda self: True)
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.set_device = lambda *a, **k: None
    cuda.synchronize = lambda *a, **k: None
    cuda.device = lambda *a, **k: contextlib.nullcontext()
    cuda.get_device_name = lambda *a, **k: _Props.name
    cuda.get_device_capability = lambda *a, **k: (_Props.major, _Props.minor)
    cuda.get_device_properties = lambda *a, **k: _Props()
    cuda.current_stream = lambda *a, **k: _FakeStream()
    cuda.default_stream = lambda *a, **k: _FakeStream()
    cuda.Stream = _FakeStream
    cuda.stream = lambda *a, **k: contextlib.nullcontext()
    cuda.Event = _FakeEvent
    cuda.empty_cache = lambda: None
    cuda.manual_seed = lambda s: None
    cuda.manual_seed_all = lambda s: None
    cuda.max_memory_allocated = lambda *a, **k: 0
    cuda.memory_allocated = lambda *a, **k: 0
    cuda.reset_peak_memory_stats = lambda *a, **k: None
    cuda._get_device_index = lambda *a, **k: 0
    from . import bench
    bench.rebind()
    CudaOnCpu().__enter__()
