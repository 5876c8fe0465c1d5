"""The timer: one operation, alone on the device, the median of its calls.

Before each call the whole device is synchronised and L2 is flushed by
zeroing a buffer larger than it; the start event is recorded behind the
flush, so the host launches the call's first kernel while the flush runs
and its launch is not what is timed.  After the call the device is
synchronised again.  Each call gets a fresh copy of its inputs, made
outside the timed window; the last two copies and outputs are kept alive,
where the device has room, so that an address cannot be reused between
calls.  The time of a call is its event time, or its synchronised wall
time (less the flush) where the median of those is far above the events'
(work on another stream or a thread, which the events do not see).

The functions used here are bound when the harness is imported, before
any code under test is, and checked to be the same ones afterwards
(untouched).
"""
import os
import statistics
import time

import torch

from . import values


# The timer's functions, as they are when the harness is imported: before
# any code under test is.  The CPU mode's device mapping binds its own
# (rebind), before it runs any.
_BOUND = {}


def rebind():
    _BOUND.update(sync=torch.cuda.synchronize, Event=torch.cuda.Event,
                  elapsed=torch.cuda.Event.elapsed_time, now=time.perf_counter)


rebind()


class Bench:
    def __init__(self):
        self.sync = _BOUND["sync"]
        self.Event = _BOUND["Event"]
        self.elapsed = _BOUND["elapsed"]
        self.now = _BOUND["now"]
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
        # Twice L2, and 256 MiB at least, so that the flush outlasts the
        # host's launch of a call's first kernel (the CPU mode, which
        # times nothing that counts, flushes its made-up L2 only).
        size = 2 * l2 if os.environ.get("TRITON_INTERPRET") == "1" else max(2 * l2, 256 << 20)
        self.flush_buf = torch.empty(size // 4, dtype=torch.int32, device="cuda")
        self.flush_ms = 0.0
        self.flush_ms = self._flush_time()

    def _flush_time(self):
        times = []
        for _ in range(5):
            self.sync()
            t0 = self.now()
            self.flush_buf.zero_()
            self.sync()
            times.append((self.now() - t0) * 1e3)
        return statistics.median(times)

    def timed(self, call):
        """(event ms, wall ms less the flush, result) of call()."""
        self.sync()
        e0, e1 = self.Event(enable_timing=True), self.Event(enable_timing=True)
        t0 = self.now()
        self.flush_buf.zero_()
        e0.record()
        out = call()
        e1.record()
        self.sync()
        wall = (self.now() - t0) * 1e3 - self.flush_ms
        return self.elapsed(e0, e1), wall, out


    def probe(self):
        """What the device and the host do now, for telling a later timing
        from an earlier one: the flush's bandwidth (ms) and a tiny
        launch's synchronised wall time (ms), medians of a few."""
        small = torch.zeros(1, device="cuda")
        walls, flush = [], []
        for _ in range(20):
            ev, wall, _ = self.timed(lambda: small.add_(1))
            walls.append(wall)
            self.sync()
            e0, e1 = self.Event(enable_timing=True), self.Event(enable_timing=True)
            e0.record()
            self.flush_buf.zero_()
            e1.record()
            self.sync()
            flush.append(self.elapsed(e0, e1))
        return {"flush_ms": statistics.median(flush), "launch_ms": statistics.median(walls)}

    def untouched(self):
        names = []
        if torch.cuda.synchronize is not self.sync:
            names.append("torch.cuda.synchronize")
        if torch.cuda.Event.elapsed_time is not self.elapsed:
            names.append("torch.cuda.Event.elapsed_time")
        if time.perf_counter is not self.now:
            names.append("time.perf_counter")
        return names


def series_ms(samples):
    """The times of a series of (event ms, wall ms) samples: event times,
    unless the median wall time is more than twice the median event time
    plus 0.05 ms (work the events did not see), then the larger of the two
    per call.  Deciding on the medians keeps one call that the host was
    slow to return from from switching clocks alone."""
    ev = statistics.median(e for e, _ in samples)
    wall = statistics.median(w for _, w in samples)
    if wall > 2 * ev + 0.05:
        return [max(e, w) for e, w in samples]
    return [e for e, _ in samples]


def room_for(out, copies=2):
    """Whether the device has room for copies more outputs like out and a
    reserve of an eighth of its memory."""
    try:
        free, total = torch.cuda.mem_get_info()
    except Exception:  # noqa: BLE001 - no figures (the CPU mode): room
        return True
    return free > copies * values.nbytes(out) + total // 8
