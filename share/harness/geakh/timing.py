"""The timing of a run's performance cases, alone on the device.

Each case in turn: every autotuner's choices are forgotten (so that the
code tunes on this case, as it asks, outside the timed calls; the
reference's timing instead takes the choices its first timing made), two
warm-up calls are made (the first one's outputs are kept, and the launches
of the code's own kernels counted: there must be some), then the timed
calls (bench.Bench), of which one, drawn by the run's nonce, keeps its
outputs too.  The judge compares the kept outputs with the reference's
afterwards, so code that behaves while checked and not while timed fails
there.  timing.json gets each case's median, minimum and maximum, its
autotuner choices and launches, a probe of the device before and after
(bench.Bench.probe), and the names of timing functions found replaced.
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


def run(job, plan):
    reps = max(3, int(plan.get("reps") or 20))
    warmup = max(1, int(plan.get("warmup") or 2))
    skip = set(map(str, plan.get("skip") or []))
    pins = plan.get("pins")
    timer = bench.Bench()
    rng = random.Random(job.nonce)
    entry.STATE.mode = "off"
    # The interpreter cannot time configurations: it takes the first.
    autotune.set_policy("first" if job.device == "cpu" else ("pin",) if pins else "full", pins)
    cases, kept = [], {}
    result = {"nonce": job.nonce, "cases": cases, "reps": reps}
    t0 = time.monotonic()
    result["probe_before"] = timer.probe()

    def visit(key, make, call, meta, host, master):
        k = str(key)
        if k in skip:
            return None
        autotune.forget()
        case = {"key": k}
        cases.append(case)
        COUNTER.active = True
        before, searches = COUNTER.count, autotune.STATE.searches
        outs = []
        for w in range(warmup):
            guard.reseed(job.spec.get("seeds", [42])[0])
            x = make(False) if make is not None else None
            _, _, out = timer.timed(lambda: call(x))
            if w == 0:
                outs.append(_kept(out, x, master, k))
            del out, x
        case["launches"] = COUNTER.count - before
        case["searches"] = autotune.STATE.searches - searches
        COUNTER.active = False
        pick = rng.randrange(reps)
        samples = []
        keep = []
        for r in range(reps):
            guard.reseed(job.spec.get("seeds", [42])[0])
            x = make(False) if make is not None else None
            ev, wall, out = timer.timed(lambda: call(x))
            samples.append((ev, wall))
            if r == pick:
                outs.append(_kept(out, x, master, k))
            keep = (keep + [x, out])[-4:] if bench.room_for(out) else []
            del out, x
        del keep
        times = bench.series_ms(samples)
        case.update(ms=statistics.median(times), min_ms=min(times), max_ms=max(times),
                    choices=autotune.choices())
        kept[k] = outs
        if job.device != "cpu":
            torch.cuda.empty_cache()
        return case["ms"], case["min_ms"], case["max_ms"]

    try:
        job.program.cases(visit)
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
