"""The timing of a run's performance cases, alone on the device, the
reference's operation on each case called alternately with the code's.

Both sides run in this process, on the same inputs, one call of each in
turn (A B, then B A, ...), so that whatever the device and the host do
at the time (clocks, load) weighs on both alike; timings of the two made
in separate processes a minute apart differed by up to 30% on an H200.
The reference is loaded from its own file, beside the code, and its
kernels are not the code's (their launches are not counted for it).

Each case in turn: every autotuner's choices are forgotten, so that the
code tunes on this case as it asks, outside the timed calls; the
reference's tuners take the choices pinned for them (those its first
timing's full search made, which the result reports) and search where
none is.  Two warm-up calls of each side follow (the code's first one
keeps its outputs, and its launches are counted: there must be some),
then the timed calls (bench.Bench), of which one of the code's, drawn by
the run's nonce, keeps its outputs too.  The judge compares the kept
outputs with the reference's afterwards, so code that behaves while
checked and not while timed fails there.  timing.json gets each case's
medians, minimum and maximum, the autotuner choices and launches, a
probe of the device before and after (bench.Bench.probe), and the names
of timing functions found replaced.
"""
import json
import os
import random
import statistics
import time

import torch

from . import autotune, bench, entry, guard, launches, values
from .errors import error_info

COUNTER = launches.COUNTER


class Sides:
    """The code's and the reference's calls on one case, timed in turn."""

    def __init__(self, timer, make, seed, keep_at):
        self.timer, self.make, self.seed, self.keep_at = timer, make, seed, keep_at
        self.kept = []    # (x, out) pairs kept alive, so addresses are not reused

    def call(self, fn):
        guard.reseed(self.seed)
        x = self.make(False) if self.make is not None else None
        ev, wall, out = self.timer.timed(lambda: fn(x))
        return (ev, wall), x, out

    def hold(self, x, out):
        self.kept = (self.kept + [x, out])[-4:] if bench.room_for(out) else []


def _stats(samples):
    times = bench.series_ms(samples)
    return statistics.median(times), min(times), max(times)


def run(job, plan):
    reps = max(3, int(plan.get("reps") or 20))
    warmup = max(1, int(plan.get("warmup") or 2))
    skip = set(map(str, plan.get("skip") or []))
    seed = job.spec.get("seeds", [42])[0]
    timer = bench.Bench()
    rng = random.Random(job.nonce)
    entry.STATE.mode = "off"
    ours = lambda tuner: COUNTER.owns(getattr(tuner, "base_fn", None))  # noqa: E731
    theirs = lambda tuner: not ours(tuner)  # noqa: E731
    # The interpreter cannot time configurations: it takes the first.
    autotune.set_policy("first" if job.device == "cpu" else ("pin",), plan.get("pins"), pinned=theirs)
    cases, kept, alone = [], {}, {}
    result = {"nonce": job.nonce, "cases": cases, "reps": reps}
    t0 = time.monotonic()
    result["probe_before"] = timer.probe()

    def visit(key, make, call, meta, host, master, ref=None, alone_ref=False):
        k = str(key)
        if k in skip:
            return None
        autotune.forget()
        sides = Sides(timer, make, seed, rng.randrange(reps))
        if alone_ref:  # a reference's case that could not wait for the code's
            for _ in range(warmup):
                sides.call(call)
            samples = [sides.call(call)[0] for _ in range(reps)]
            alone[k] = dict(zip(("ms", "min_ms", "max_ms"), _stats(samples)),
                            choices=autotune.choices(theirs))
            return alone[k]["ms"], alone[k]["min_ms"], alone[k]["max_ms"]
        case = {"key": k}
        cases.append(case)
        outs = []
        COUNTER.active = True
        before, searches = COUNTER.count, autotune.STATE.searches
        for w in range(warmup):
            _, x, out = sides.call(call)
            if w == 0:
                outs.append(_kept(out, x, master, k))
            del x, out
        case["launches"] = COUNTER.count - before
        case["searches"] = autotune.STATE.searches - searches
        COUNTER.active = False
        for _ in range(warmup if ref is not None else 0):
            sides.call(ref)
        mine, other = [], []
        for r in range(reps):
            order = ((call, mine), (ref, other)) if r % 2 == 0 else ((ref, other), (call, mine))
            for fn, acc in order:
                if fn is None:
                    continue
                sample, x, out = sides.call(fn)
                acc.append(sample)
                if fn is call and r == sides.keep_at:
                    outs.append(_kept(out, x, master, k))
                sides.hold(x, out)
                del x, out
        sides.kept = []
        case["ms"], case["min_ms"], case["max_ms"] = _stats(mine)
        if other:
            case["ms_ref"], case["min_ms_ref"], case["max_ms_ref"] = _stats(other)
            case["ref_choices"] = autotune.choices(theirs)
        elif k in alone:
            case["ms_ref"] = alone[k]["ms"]
            case["ref_choices"] = alone[k]["choices"]
        case["choices"] = autotune.choices(ours)
        kept[k] = outs
        if job.device != "cpu":
            torch.cuda.empty_cache()
        return case["ms"], case["min_ms"], case["max_ms"]

    try:
        job.program.cases(visit, with_reference=bool(plan.get("reference", True)))
    except Exception as exc:  # noqa: BLE001
        result["error"] = error_info(exc, job.own_files())
    result["probe_after"] = timer.probe()
    result["untouched"] = timer.untouched()
    result["seconds"] = round(time.monotonic() - t0, 3)
    torch.save(kept, os.path.join(job.dir, "timed.pt"))
    tmp = os.path.join(job.dir, "timing.json.tmp")
    with open(tmp, "w") as fp:
        json.dump(result, fp)
    os.replace(tmp, os.path.join(job.dir, "timing.json"))


def _kept(out, x, master, key):
    notes = set()
    got = values.case_outputs(out, x, master, key, notes)
    if notes or not values.plain_tensors(out):
        return {"__opaque__": "an output of a timed call that is not plain data"}
    return got
