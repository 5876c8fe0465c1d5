"""The timer: operations alone on the device, the medians of their calls.

Before each call L2 is flushed by zeroing a buffer larger than it, and
the call gets a fresh copy of its inputs, made outside the timed window
(queued: the copies and the flush are device work between the events);
the start event is recorded behind the flush.  The timed calls are queued
back to back (queued), the host not waiting for the device between them,
so a call's time is the device's, as do_bench's is.  A device that runs
a call faster than the host can queue it waits for the host within the
timed window, and the harness's own overhead on a side (its wrappers, its
launch counter) would count as that side's time: so between the flush
and the start event the device spins (hold) for longer than the host
took to queue the trusted side's call (the reference's) when it was
synchronised alone (timed), and such a call is queued whole by the time
its window opens.  A side that keeps the host busier than that still
waits within its window: host work beyond the reference's counts, as
do_bench counts it.  The last two inputs
and outputs are kept alive so that an address cannot be reused between
calls.  One call of each side, at a place drawn by the run's nonce, is
made with the whole device synchronised before and after it (timed): its
synchronised wall time far above its event time shows work the events do
not see (on another stream, or a thread).

The functions used here are bound when the harness is imported, before
any code under test is, and checked to be the same ones afterwards
(untouched).
"""
import os
import statistics
import time

import torch

# The timer's functions, as they are when the harness is imported: before
# any code under test is.  The CPU mode's device mapping binds its own
# (rebind), before it runs any.
_BOUND = {}


def rebind():
    _BOUND.update(sync=torch.cuda.synchronize, Event=torch.cuda.Event,
                  elapsed=torch.cuda.Event.elapsed_time, now=time.perf_counter,
                  spin=getattr(torch.cuda, "_sleep", None))


# The hold before a queued call: this many times what the host took to
# queue the reference's call alone, and this much more, at most
# HOLD_MAX_MS (a call that waits for the device within itself gains
# nothing from a longer one).
HOLD_SLACK = 2.0
HOLD_EXTRA_MS = 0.02
HOLD_MAX_MS = 2.0


def hold_for(queue_ms, cycles_per_ms):
    """The hold, in ms, for a call the trusted side queued in queue_ms
    (None: no trusted side, no hold), on a device that spins
    cycles_per_ms (0: none)."""
    if queue_ms is None or not cycles_per_ms:
        return 0.0
    return min(HOLD_MAX_MS, HOLD_SLACK * queue_ms + HOLD_EXTRA_MS)


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
        self.queue_ms = 0.0      # what the last timed call took to queue
        self.flush_ms = 0.0      # what its flush took on the device
        self.cycles_per_ms = self._spin_rate()

    def _spin_rate(self):
        """The device's spin cycles per ms, or 0 where it has no spin (the
        CPU mode, whose timings count for nothing)."""
        spin = _BOUND["spin"]
        if spin is None or os.environ.get("TRITON_INTERPRET") == "1":
            return 0.0
        rates = []
        for _ in range(3):
            self.sync()
            e0, e1 = self.Event(enable_timing=True), self.Event(enable_timing=True)
            e0.record()
            spin(1 << 20)
            e1.record()
            self.sync()
            ms = self.elapsed(e0, e1)
            if ms > 0:
                rates.append((1 << 20) / ms)
        return statistics.median(rates) if rates else 0.0

    def hold_ms(self, queue_ms):
        """The spin before each queued call: see the module's docstring."""
        return hold_for(queue_ms, self.cycles_per_ms)

    def _hold(self, ms):
        if ms > 0:
            _BOUND["spin"](int(ms * self.cycles_per_ms))

    def timed(self, call):
        """(event ms, wall ms less the flush, result) of call(); the time
        the host took to queue it goes to queue_ms.  The flush's own time
        is taken by events around it on every call: it varies with what
        else the memory serves, and a wall time less a typical flush would
        carry that variance into the comparison with the events."""
        self.sync()
        ef, e0, e1 = (self.Event(enable_timing=True) for _ in range(3))
        t0 = self.now()
        ef.record()
        self.flush_buf.zero_()
        e0.record()
        tq = self.now()
        out = call()
        self.queue_ms = (self.now() - tq) * 1e3
        e1.record()
        self.sync()
        self.flush_ms = self.elapsed(ef, e0)
        wall = (self.now() - t0) * 1e3 - self.flush_ms
        return self.elapsed(e0, e1), wall, out


    def queued(self, calls, keep=(), hold_ms=0.0):
        """Each call of calls (make, fn) made on fresh inputs from make(),
        L2 flushed before it, the device held hold_ms, queued back to
        back: the host does not wait for the device between calls, so a
        call's time is its device time from its first kernel's start.
        Returns each call's event ms, and {index: (inputs, output)} of the
        calls whose index is in keep, once the device is done with them;
        the last two inputs and outputs stay alive until the next call is
        queued, so that no address is reused."""
        events, kept, held = [], {}, []
        self.sync()
        for i, (make, fn) in enumerate(calls):
            x = make()
            e0, e1 = self.Event(enable_timing=True), self.Event(enable_timing=True)
            self.flush_buf.zero_()
            self._hold(hold_ms)
            e0.record()
            out = fn(x)
            e1.record()
            events.append((e0, e1))
            if i in keep:
                kept[i] = (x, out)
            held = (held + [x, out])[-4:]
            del x, out
        self.sync()
        del held
        return [self.elapsed(e0, e1) for e0, e1 in events], kept

    def probe(self):
        """What the device and the host do now, for telling a later timing
        from an earlier one: the flush's bandwidth (ms) and a tiny
        launch's synchronised wall time (ms), medians of a few."""
        small = torch.zeros(1, device="cuda")
        walls, flush = [], []
        for _ in range(20):
            ev, wall, _ = self.timed(lambda: small.add_(1))
            walls.append(wall)
            flush.append(self.flush_ms)
        return {"flush_ms": statistics.median(flush), "launch_ms": statistics.median(walls)}

    def untouched(self):
        names = []
        if torch.cuda.synchronize is not self.sync:
            names.append("torch.cuda.synchronize")
        if torch.cuda.Event.elapsed_time is not self.elapsed:
            names.append("torch.cuda.Event.elapsed_time")
        if time.perf_counter is not self.now:
            names.append("time.perf_counter")
        if getattr(torch.cuda, "_sleep", None) is not _BOUND["spin"]:
            names.append("torch.cuda._sleep")
        return names
