"""The timing of a run's performance cases, alone on the device, the
reference's operation on each case called alternately with the code's.

Both sides run in this process, on the same inputs, one call of each in
turn (A B, then B A, ...), so that whatever the device and the host do
at the time (clocks, load) weighs on both alike; timings of the two made
in separate processes a minute apart differed by up to 30% on an H200.
The reference is loaded from its own file, beside the code, and its
kernels are not the code's (their launches are not counted for it).

Each case in turn: every autotuner's choices are forgotten, so that the
code's tuners search afresh on this case (autotune's "full" rule),
outside the timed calls: a tuner keyed on nothing that changes between
cases would otherwise keep the choice made on its first case, by noise
where the configurations tie there, and the two sides' choices would
differ by chance.  The reference's tuners take the choices pinned for
them on the case (those its first timing's search made there, which the
result reports) and search where none is.  Two warm-up calls of each
side follow (the code's first one keeps its outputs, and its launches
are counted: there must be some), then the timed calls (bench.Bench), of
which one of the code's, drawn by the run's nonce, keeps its outputs
too; the code's launches among them are counted, in all (a timed call
that launches none of its kernels returns what it did not compute).
The judge compares the kept outputs with the reference's afterwards, so
code that behaves while checked and not while timed fails there.  timing.json gets each case's medians, minimum and maximum, the
autotuner choices and launches, a probe of the device before and after
(bench.Bench.probe), the names of timing functions found replaced, and
the seconds spent in autotuner searches, in the timed series and in the
profile.  A plan's kernel_profile names a case profiled once it is timed
(kprofile), and the profiler that reads its kernels' hardware counters
then (counters).
"""
import json
import os
import random
import statistics
import time

import torch

from . import autotune, bench, counters, entry, guard, intact, kprofile, launches, proto, values
from .errors import error_info

COUNTER = launches.COUNTER

# A side's timed calls on a case stop at about SERIES_MS of device time,
# as Triton's do_bench does, but never below MIN_REPS calls: the calls of
# a heavy kernel vary little, and each one holds the GPU alone.
SERIES_MS = 100.0
MIN_REPS = 5


def reps_for(reps, checked_ms):
    """The timed calls a side makes on a case whose synchronised calls
    took checked_ms (event ms per side): at most reps."""
    slowest = max(checked_ms, default=0.0)
    if slowest <= 0:
        return reps
    return max(min(MIN_REPS, reps), min(reps, int(SERIES_MS / slowest)))


class Sides:
    """The code's and the reference's calls on one case."""

    def __init__(self, timer, make, seed):
        self.timer, self.make, self.seed = timer, make, seed

    def fresh(self, seeded=True, shift=0):
        """The case's inputs, copied anew; seeded, the generators too, as
        for a call whose outputs are kept (a reseed costs about 2 ms on a
        GPU, more than many a timed call); shift, their floating-point
        tensors rolled by that many elements along their last dimension
        (new contents of the same values, see changed)."""
        if seeded:
            guard.reseed(self.seed)
        x = self.make(False) if self.make is not None else None
        if shift:
            changed(x, shift)
        return x

    def call(self, fn):
        """One call, the device synchronised before and after it:
        ((event ms, wall ms), inputs, output)."""
        x = self.fresh()
        ev, wall, out = self.timer.timed(lambda: fn(x))
        return (ev, wall), x, out

    def series(self, fns, reps, keep_at=None, hold_ms=0.0, shift=0):
        """reps calls of each of fns, alternately (A B, then B A, ...),
        queued, the device held hold_ms before each: per fn its event
        times; and the (inputs, output) of the first fn's call number
        keep_at.  Call i's inputs are rolled by shift + i + 1."""
        order = []
        for r in range(reps):
            order += fns if r % 2 == 0 else fns[::-1]
        first = [i for i, fn in enumerate(order) if fn is fns[0]]
        keep = {first[keep_at]} if keep_at is not None else set()
        # Every call but the kept one on inputs of new contents: nothing
        # keyed on what the inputs hold, or where, lasts from one to the next.
        shifted = lambda i: lambda: self.fresh(False, shift + i + 1)  # noqa: E731
        times, kept = self.timer.queued([(self.fresh if i in keep else shifted(i), fn)
                                         for i, fn in enumerate(order)], keep, hold_ms)
        per = [[t for fn2, t in zip(order, times) if fn2 is fn] for fn in fns]
        return per, next(iter(kept.values()), None)


def _trusted_queue(queued, with_ref, alone):
    """What the reference's synchronised call took the host to queue (ms):
    this series' second side's, or its timing alone's; None without one.
    Never the code's: a hold long enough for the code's host work would
    hide that work."""
    if with_ref:
        return queued[1]
    return alone.get("queue_ms") if alone else None


# A case whose reference took this many times the code's is timed again
# (see _recheck); the judge keeps its speedup where the two agree.
RECHECK_SPEEDUP = 5.0


def _recheck(sides, fns, n, hold):
    """A large speedup timed again: the reference first this time (B A,
    then A B, ...), every call on inputs of contents unlike the first
    series' (rolled further); its medians."""
    per, _ = sides.series(fns[::-1], n, hold_ms=hold, shift=2 * n + 1)
    ms_ref, ms = statistics.median(per[0]), statistics.median(per[1])
    return {"ms": ms, "ms_ref": ms_ref, "reps": n}


def changed(x, shift):
    """x's floating-point tensors (nested in lists, tuples and dicts too)
    rolled in place by shift elements along their last dimension: the same
    values, so still valid inputs, at other places."""
    if isinstance(x, torch.Tensor):
        if (x.is_floating_point() or x.is_complex()) and x.dim() > 0 and x.shape[-1] > 1 \
                and not x.requires_grad:
            with torch.no_grad():
                x.copy_(torch.roll(x, shift % x.shape[-1], dims=x.dim() - 1))
    elif isinstance(x, (list, tuple)):
        for v in x:
            changed(v, shift)
    elif isinstance(x, dict):
        for v in x.values():
            changed(v, shift)


def _stats(times):
    return statistics.median(times), min(times), max(times)


def _hidden(sample):
    """A synchronised call whose wall time is more than twice its event
    time plus 0.05 ms did work the events did not see."""
    ev, wall = sample
    return wall > 2 * ev + 0.05


def _hides_work(retake, checked, tries=5):
    """Whether the code's synchronised calls did work the events did not
    see where the reference's did not.  A first sample that looks clean
    decides; one that looks hidden is retaken (retake(i) samples side i
    again) and the sides judged by their least wall and least event
    times: a host descheduled within one call looks like hidden work
    once, work kept from the events does so on every call.  The sides'
    retakes alternate, so that a host busy for a while weighs on both."""
    if not _hidden(checked[0]):
        return False
    samples = [[first] for first in checked]
    for _ in range(tries - 1):
        for i, got in enumerate(samples):
            got.append(retake(i))
    best = [(min(ev for ev, _ in got), min(wall for _, wall in got)) for got in samples]
    return _hidden(best[0]) and not (len(best) > 1 and _hidden(best[1]))


def run(job, plan, prepared=0.0):
    """The timing, on go; prepared: the seconds spent before the go making
    the reference's side (tasks.Program.prepare)."""
    reps = max(3, int(proto.need(plan, proto.PLAN_REPS, "the timing plan")))
    warmup = max(1, int(proto.need(plan, proto.PLAN_WARMUP, "the timing plan")))
    skip = set(map(str, plan.get(proto.PLAN_SKIP) or []))
    profile_key = str((plan.get(proto.PLAN_KERNEL_PROFILE) or {}).get(proto.PLAN_CASE))
    seed = job.spec.get(proto.JOB_SEEDS, [42])[0]
    timer = bench.Bench()
    rng = random.Random(job.nonce)  # which timed call keeps its outputs
    entry.STATE.mode = "off"
    ours = lambda tuner: COUNTER.owns(getattr(tuner, "base_fn", None))  # noqa: E731
    theirs = lambda tuner: not ours(tuner)  # noqa: E731
    pins = plan.get(proto.PLAN_PINS) if isinstance(plan.get(proto.PLAN_PINS), dict) else {}
    # The interpreter cannot time configurations: it takes the first.
    policy = "first" if job.device == "cpu" else ("pin",)
    cases, kept, alone = [], {}, {}
    spent = {proto.SPENT_TUNING: 0.0, proto.SPENT_TIMED: 0.0, proto.SPENT_PROFILE: 0.0,
             proto.SPENT_PREPARE: prepared, "setup": None}
    result = {proto.NONCE: job.nonce, proto.TIMING_CASES: cases, "reps": reps, "spent": spent}
    t0 = time.monotonic()
    tuned0 = autotune.STATE.search_s
    result["probe_before"] = timer.probe()

    def visit(key, make, call, meta, host, master, ref=None, alone_ref=False):
        k = str(key)
        if spent["setup"] is None:
            spent["setup"] = time.monotonic() - t0
        if k in skip:
            return None
        autotune.forget()
        autotune.set_policy(policy, pins.get(k), pinned=theirs)
        sides = Sides(timer, make, seed)
        if alone_ref:  # a reference's case that could not wait for the code's
            for _ in range(warmup):
                (ev, _), _, _ = sides.call(call)
            queue = timer.queue_ms  # the last warm-up's
            t_series = time.monotonic()
            times = sides.series([getattr(call, "unwrapped", call)], reps_for(reps, [ev]),
                                 hold_ms=timer.hold_ms(queue))[0][0]
            spent[proto.SPENT_TIMED] += time.monotonic() - t_series
            alone[k] = dict(zip(("ms", "min_ms", "max_ms"), _stats(times)),
                            choices=autotune.choices(theirs), queue_ms=queue)
            return alone[k]["ms"], alone[k]["min_ms"], alone[k]["max_ms"]
        case = {proto.CASE_KEY: k}
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
        # The warm-up calls loaded the reference's kernels (from its cache,
        # see source.on_reference_cache): the calls timed take it bare.
        fns = [call, getattr(ref, "unwrapped", ref)] if ref is not None else [call]
        # One synchronised call a side, then the queued series, held by
        # what the reference's call took the host to queue (bench).
        checked, queued = [], []
        for fn in fns:
            checked.append(sides.call(fn)[0])
            queued.append(timer.queue_ms)
        hold = timer.hold_ms(_trusted_queue(queued, ref is not None, alone.get(k)))
        case["hold_ms"] = round(hold, 4)
        case["reps"] = n = reps_for(reps, [ev for ev, _ in checked])
        t_series = time.monotonic()
        COUNTER.timed = 0
        try:
            per, (x, out) = sides.series(fns, n, rng.randrange(n), hold)
        finally:
            case["timed_launches"], COUNTER.timed = COUNTER.timed, None
        spent[proto.SPENT_TIMED] += time.monotonic() - t_series
        outs.append(_kept(out, x, master, k))
        del x, out
        # The CPU mode has no device timeline to hide work from.
        case["hidden_work"] = job.device != "cpu" and \
            _hides_work(lambda i: sides.call(fns[i])[0], checked)
        case[proto.CASE_MS], case["min_ms"], case["max_ms"] = _stats(per[0])
        if ref is not None:
            case[proto.CASE_MS_REF], case["min_ms_ref"], case["max_ms_ref"] = _stats(per[1])
            case[proto.CASE_REF_CHOICES] = autotune.choices(theirs)
        elif k in alone:
            case[proto.CASE_MS_REF] = alone[k]["ms"]
            case[proto.CASE_REF_CHOICES] = alone[k]["choices"]
        case["choices"] = autotune.choices(ours)
        if ref is not None and case[proto.CASE_MS] > 0 and \
                case[proto.CASE_MS_REF] >= RECHECK_SPEEDUP * case[proto.CASE_MS]:
            t_series = time.monotonic()
            case["recheck"] = _recheck(sides, fns, n, hold)
            spent["recheck"] = spent.get("recheck", 0.0) + time.monotonic() - t_series
        kept[k] = outs
        if k == profile_key:  # after its timing, never inside it
            t_prof = time.monotonic()
            result[proto.TIMING_KERNEL_PROFILE] = _profiled(job, k, sides, call, timer, plan, case["choices"])
            spent[proto.SPENT_PROFILE] += time.monotonic() - t_prof
        guard.release_cached(job.device)
        return case[proto.CASE_MS], case["min_ms"], case["max_ms"]

    try:
        job.program.cases(visit, with_reference=bool(proto.need(plan, proto.PLAN_REFERENCE,
                                                                "the timing plan")))
        # A fault of the last queued calls surfaces at the next use of
        # the device: it is the timing's, not the probe's.
        result["probe_after"] = timer.probe()
    except Exception as exc:  # noqa: BLE001
        result["error"] = error_info(exc, job.own_files())
    result[proto.TIMING_CASES_TOTAL] = job.program.cases_total
    result["untouched"] = timer.untouched()
    result["replaced"] = intact.changed(intact.SNAP)
    job.hooks["timed"]()  # what follows needs no GPU alone
    result["seconds"] = spent[proto.SPENT_ALONE] = round(time.monotonic() - t0, 3)
    spent[proto.SPENT_TUNING] = autotune.STATE.search_s - tuned0
    for k in spent:
        spent[k] = round(spent[k] or 0.0, 3)
    torch.save(kept, os.path.join(job.dir, proto.FILE_TIMED_PT))
    tmp = os.path.join(job.dir, proto.FILE_TIMING + ".tmp")
    with open(tmp, "w") as fp:
        json.dump(result, fp)
    os.replace(tmp, os.path.join(job.dir, proto.FILE_TIMING))


def _profiled(job, k, sides, call, timer, plan, choices):
    """Case k's kernel profile, and the hardware counters where the plan
    names the profiler that reads them."""
    try:
        prof = kprofile.run(job, k, sides.fresh, call, timer.sync)
    except Exception as exc:  # noqa: BLE001 - the timing stands without it
        prof = {"available": False, "case": k,
                "message": f"the profiler failed: {type(exc).__name__}: {exc}"}
    want = (plan.get(proto.PLAN_KERNEL_PROFILE) or {}).get(proto.PLAN_COUNTERS)
    if not isinstance(want, dict):
        return prof
    if not want.get(proto.PLAN_NCU_PATH):
        counted = {"available": False, "message": str(want.get(proto.PLAN_NCU_MESSAGE) or "no profiler")}
    else:
        try:
            counted = counters.run(job, k, want[proto.PLAN_NCU_PATH], choices,
                                   float(proto.need(want, proto.PLAN_NCU_TIMEOUT, "the counters plan")))
        except Exception as exc:  # noqa: BLE001 - as above
            counted = {"available": False, "tool": "ncu",
                       "message": f"reading the counters failed: {type(exc).__name__}: {exc}"}
    return counters.merge(prof, counted)


def _kept(out, x, master, key):
    notes = set()
    got = values.case_outputs(out, x, master, key, notes)
    if notes or not values.plain_tensors(out):
        return {"__opaque__": "an output of a timed call that is not plain data"}
    return got
