"""Launches of the code's own Triton kernels, counted per call.

The hook on JITFunction.run (and the interpreter's InterpretedFunction.run)
sees every launch.  A launch counts for the code under test when its
kernel's source lies in the code's own file, and only once it returned: a
kernel that fails to compile, or raises, launched nothing.  Launches made
while an autotuner times its configurations belong to the search.

While timed calls run, the code's launches are only counted, in all.

Each launch is credited to the call in progress (entry.Call): the storages
it was given, and, where the call watches writes, what those storages held
as each launch started (for the launch that ends an autotuner's search, as
the search started: its launches write the outputs too) and as it ended,
so that an output can be told written by a kernel from one that a kernel
only read or that something else wrote between launches (see
Call.written).  A launch on another stream than the one the call began
on is noted.
"""
import os

import torch

from . import autotune, outside, perturb

_equal = torch.equal  # bound before the code under test can replace it

# A storage of up to this many bytes is fingerprinted whole; a larger one
# at FINGER_POINTS positions.
FINGER_FULL = 64 << 20
FINGER_POINTS = 1 << 18


def fingerprint(storage, copy=True):
    """What a storage holds, for telling whether it changed: its bytes, or
    those at evenly spread positions of a large one; a copy, or (copy
    False) a view, to compare with a copy taken before."""
    n = storage.nbytes()
    if n == 0:
        return None
    raw = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)
    if n > FINGER_FULL:
        raw = raw[::n // FINGER_POINTS]
    return raw.clone() if copy else raw


def same(a, b):
    return a is not None and b is not None and a.shape == b.shape and _equal(a, b)


def _stream_id():
    try:
        return torch.cuda.current_stream().cuda_stream
    except Exception:  # noqa: BLE001 - no device (the CPU mode)
        return 0


class Counter:
    def __init__(self):
        self.files = {}          # path -> last line that counts (None: all)
        self.names = set()       # the code's kernels that launched
        self.count = 0           # launches of the code's kernels, in all
        self.active = True       # off while timed calls run
        self.timed = None        # then, where counted: the code's launches made
        self.call = None         # the call in progress (entry.Call), or None
        self.top_level = None    # called with a launch made outside any call
        self._real = {}          # a code object's file name -> its real path

    def watch(self, path, last_line=None):
        self.files[os.path.realpath(path)] = last_line

    def owns(self, fn):
        """fn (a kernel's function, or a JITFunction) is defined in the
        code's own file, above its last counted line."""
        code = getattr(fn, "__code__", None) or getattr(getattr(fn, "fn", None), "__code__", None)
        if code is None:
            return False
        path = self._real.get(code.co_filename)
        if path is None:  # every launch asks: a path resolved once a job
            path = self._real[code.co_filename] = os.path.realpath(code.co_filename)
        if path not in self.files:
            return False
        last = self.files[path]
        return last is None or code.co_firstlineno <= last

    def install(self):
        from triton.runtime import jit
        classes = [jit.JITFunction]
        try:
            from triton.runtime import interpreter
            classes.append(interpreter.InterpretedFunction)
        except ImportError:
            pass
        counter = self
        for cls in classes:
            if getattr(cls, "_geak_counted", False):
                continue
            orig = cls.run

            def run(self, *args, _orig=orig, **kwargs):
                # A launch's own work is the kernel's, not the code's
                # Python between launches (outside.py).
                with outside.aside():
                    return _run(self, _orig, args, kwargs)

            def _run(self, _orig, args, kwargs):
                if kwargs.get("warmup") or not (counter.active or counter.timed is not None) \
                        or not counter.owns(self):
                    return _orig(self, *args, **kwargs)
                if not counter.active:  # a timed call's
                    counter.timed += 1
                    return _orig(self, *args, **kwargs)
                if autotune.benching():
                    if counter.call is not None:
                        counter.call.searched(_storages(args, kwargs))
                    return _orig(self, *args, **kwargs)
                return counter._launch(self, _orig, args, kwargs)
            cls.run = run
            cls._geak_counted = True

    def _launch(self, kernel, orig, args, kwargs):
        call = self.call
        opened = call is None and self.top_level is not None
        if opened:  # a test that launches a kernel itself: a call of its own
            call = self.top_level(getattr(kernel.fn, "__name__", "?"), args, kwargs)
        storages = _storages(args, kwargs)
        if call is not None:
            call.before_launch(storages, _stream_id())
        perturb.before_launch()
        try:
            out = perturb.launch(orig, kernel, args, kwargs)
        except BaseException:
            if opened:
                call.abandon()
            raise
        self.count += 1
        self.names.add(kernel.fn.__name__)
        if call is not None:
            call.after_launch(storages)
            if opened:
                call.finish(None)
        return out


def _storages(args, kwargs):
    out = []
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor) and a.numel() > 0:
            try:
                out.append(a.untyped_storage())
            except Exception:  # noqa: BLE001 - a tensor without storage
                pass
    return out


COUNTER = Counter()
