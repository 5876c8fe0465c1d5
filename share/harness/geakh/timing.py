"""Time the candidate against the reference on the GPU, in one process,
interleaved (A B B A ...), on the task's performance inputs.

Every timed call gets a fresh clone of its inputs (made outside the timed
window; the last two are kept alive, where the device has room, so an
address cannot be reused), L2 is flushed with a buffer larger than the
device's L2, the whole device is synchronised before and after, and the
time is the event time, or the synchronised wall time where that is much
larger (see series_ms), so that work left on a side stream or a thread is
not missed.  Results go to timing.json with the run's nonce.

geak-eval runs this in two processes: a check stage beside other jobs
(outputs on the performance inputs, which compiles and autotunes what the
timing needs into the shared compile cache), then the timing alone on the
device, which therefore spends its exclusive time timing, not compiling.
"""
import contextlib
import json
import math
import os
import statistics
import sys
import time
import types
import weakref

import torch

from . import guard, judge, run

REF_MODULE = "geak_eval.data.TritonBench.data.TritonBench_G_v1"


# Bytes after each input tensor that a kernel reading past the end finds.
GUARD_BYTES = 256 << 10


def guarded(t, poison):
    """A copy of t followed in memory by a guard zone: zeros, or the
    poison.  Some perf scripts give kernels inputs shorter than they read
    (a one-element scale indexed per block, rows indexed past the last):
    without the zone those reads find whatever the allocator put there,
    which differs from run to run.  With it, the candidate and the
    reference read the same zeros, and a run with the poison there shows
    which output elements depend on it."""
    if t.requires_grad or t.numel() == 0 or not t.is_contiguous():
        return t.clone()
    n = t.numel()
    with torch.no_grad():
        buf = torch.empty(n + max(1, GUARD_BYTES // t.element_size()), dtype=t.dtype, device=t.device)
        if poison:
            guard.fill_poison(buf[n:])
        else:
            buf[n:].zero_()
        buf[:n].copy_(t.reshape(-1))
    return buf[:n].view(t.shape)


def clone(x, poison=False):
    if isinstance(x, torch.Tensor):
        return guarded(x, poison)
    if isinstance(x, tuple):
        return tuple(clone(v, poison) for v in x)
    if isinstance(x, list):
        return [clone(v, poison) for v in x]
    if isinstance(x, dict):
        return {k: clone(v, poison) for k, v in x.items()}
    return x


def fresh(inp, poison=False):
    """A clone of inp for a checked call, with the device idle when the
    call starts, as before a timed call (Bench.one), so that every checked
    call of either side starts alike: where racing writes decide an
    output, a kernel queued behind the clone's copies can race otherwise
    than one that starts on an idle device, and the candidate's launches
    alone pay for the launch counter's bookkeeping."""
    x = clone(inp, poison=poison)
    torch.cuda.synchronize()
    return x


@contextlib.contextmanager
def calling(what):
    """An error raised inside says where (run.error_info shows it), unless
    one raised deeper already does."""
    try:
        yield
    except Exception as exc:
        if not getattr(exc, "__notes__", None):
            note_on(exc, what)
        raise


def note_on(exc, text):
    """exc.add_note(text), on Pythons older than 3.11 too."""
    try:
        exc.__notes__ = list(getattr(exc, "__notes__", None) or []) + [text]
    except AttributeError:  # an exception type that takes no attributes
        pass


def plain_tensors(x):
    if isinstance(x, torch.Tensor):
        return type(x) in (torch.Tensor, torch.nn.Parameter)
    if isinstance(x, (list, tuple)):
        return all(plain_tensors(v) for v in x)
    if isinstance(x, dict):
        return all(plain_tensors(v) for v in x.values())
    return True


class Bench:
    """The timing loop, with its functions bound before any code under test
    is imported (so that replacing them afterwards changes nothing here)."""

    def __init__(self):
        self.sync = torch.cuda.synchronize
        self.Event = torch.cuda.Event
        self.elapsed = torch.cuda.Event.elapsed_time
        self.now = time.perf_counter
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
        self.flush_buf = torch.empty(max(2 * l2, 256 << 20) // 4, dtype=torch.int32, device="cuda")
        self.patched_names = []

    def _timed(self, call):
        """(event ms, synchronised wall ms, result) of call(), with L2
        flushed and the whole device idle before it."""
        self.flush_buf.zero_()
        self.sync()
        e0, e1 = self.Event(enable_timing=True), self.Event(enable_timing=True)
        t0 = self.now()
        e0.record()
        out = call()
        e1.record()
        self.sync()
        wall = (self.now() - t0) * 1e3
        return self.elapsed(e0, e1), wall, out

    def one(self, fn, inp):
        """A sample (see series_ms) of fn on a fresh clone of inp, its
        output and the clone."""
        x = clone(inp)
        ev, wall, out = self._timed(lambda: fn(x))
        return (ev, wall), out, x

    def time_callable(self, fn, reps, warmup=2):
        """(median, min, max) ms of fn() with the same hygiene as one()."""
        for _ in range(warmup):
            fn()
        self.sync()
        return spread(series_ms([self._timed(fn)[:2] for _ in range(reps)]))

    def time_pair(self, fa, fb, reps):
        """Two (median, min, max) ms, of fa() and fb() called alternately
        (A B, then B A, ...), so that whatever else the host is doing at
        the time weighs on both alike; warmed up by the caller."""
        got = {fa: [], fb: []}
        self.sync()
        for k in range(reps):
            for fn in ((fa, fb) if k % 2 == 0 else (fb, fa)):
                got[fn].append(self._timed(fn)[:2])
        return spread(series_ms(got[fa])), spread(series_ms(got[fb]))

    def check_untouched(self):
        names = []
        if torch.cuda.synchronize is not self.sync:
            names.append("torch.cuda.synchronize")
        if torch.cuda.Event.elapsed_time is not self.elapsed:
            names.append("torch.cuda.Event.elapsed_time")
        if time.perf_counter is not self.now:
            names.append("time.perf_counter")
        return names


def series_ms(samples):
    """The times of a series of (event ms, wall ms) samples of one
    function: event times, unless the median call's synchronised wall
    time is more than twice its event time plus 0.05 ms (work the events
    on the current stream did not see, on a side stream or a thread),
    then wall times.  Deciding on the medians keeps a call that the host
    was slow to return from (a busy CPU) from switching clocks alone,
    which for a kernel of some 30 us takes a fraction of a millisecond."""
    ev = statistics.median(e for e, _ in samples)
    wall = statistics.median(w for _, w in samples)
    if wall > 2 * ev + 0.05:
        return [max(e, w) for e, w in samples]
    return [e for e, _ in samples]


def spread(times):
    return statistics.median(times), min(times), max(times)


class Tunings:
    """Every Triton autotuner that has run in this process.  Many
    autotuned kernels key their search on arguments that do not change
    between performance inputs (chunk_cumsum_kernel's key is empty), so
    the configuration found on the first input, where every candidate
    configuration may cost little more than its launch, decides the
    timing of the largest ones.  Each side then draws its own
    configuration by chance, and a reference timed against itself came
    out at 0.74x and 1.62x.  measure therefore forgets every search
    before each input: both sides tune on it, outside the timed calls."""

    def __init__(self):
        self.tuners = weakref.WeakSet()
        self.searches = 0
        self.planned = {}  # (side, kernel, key) -> configuration text
        self.served = weakref.WeakSet()  # tuners given the plan since the last forget

    def install(self):
        try:
            from triton.runtime import autotuner
        except ImportError:
            return
        tunings = self
        orig = autotuner.Autotuner.run

        def run(self, *args, _orig=orig, **kwargs):
            tunings.tuners.add(self)
            tunings._take_planned(self)
            before = set(self.cache)
            try:
                return _orig(self, *args, **kwargs)
            finally:
                new = [k for k in list(self.cache) if k not in before]
                if new:  # a search ran: its timings are for these keys
                    tunings.searches += 1
                    timed = dict(getattr(self, "configs_timings", None) or {})
                    self._geak_timings = {**getattr(self, "_geak_timings", {}),
                                          **{k: timed for k in new}}
        autotuner.Autotuner.run = run

    def forget(self, plan=None):
        """Every search forgotten; plan (as made() gave it) is taken in
        their place by the tuners of the same side, kernel and key, those
        of modules imported since too."""
        for tuner in list(self.tuners):
            tuner.cache.clear()
            tuner._geak_timings = {}
        self.planned = dict(plan or {})
        self.served = weakref.WeakSet()

    def made(self):
        """The choices since the last forget, as {(side, kernel, key):
        configuration text}; side is "cand" for the candidate's kernels
        (the candidate's and the reference's often share names)."""
        return {(_side(tuner), _kernel_name(tuner), key): str(config)
                for tuner in list(self.tuners) for key, config in list(tuner.cache.items())}

    def _take_planned(self, tuner):
        # Once per tuner: this runs on every launch, timed calls too.
        if not self.planned or tuner in self.served:
            return
        self.served.add(tuner)
        side, name = _side(tuner), _kernel_name(tuner)
        for (s, k, key), text in self.planned.items():
            own = _own_config(tuner, text) if (s, k) == (side, name) and key not in tuner.cache else None
            if own is not None:
                dict.__setitem__(tuner.cache, key, own)  # planned as it was: no cache rule applies

    def choices(self):
        """Every autotuner's choices so far as [kernel, key, configuration],
        as text: the reference's second process avoids them (see
        prefer_runners_up)."""
        return [[_kernel_name(tuner), repr(key), str(config)]
                for tuner in list(self.tuners) for key, config in list(tuner.cache.items())]

    @contextlib.contextmanager
    def _swapped(self, pick):
        """Every autotuner's choices replaced, for what runs inside, by
        pick(tuner, key, chosen) where that gives another configuration;
        yields whether any was."""
        saved = []
        for tuner in list(self.tuners):
            for key, chosen in list(tuner.cache.items()):
                other = pick(tuner, key, chosen)
                if other is not None and other is not chosen:
                    saved.append((tuner, key, chosen))
                    tuner.cache[key] = other
        try:
            yield bool(saved)
        finally:
            for tuner, key, chosen in saved:
                tuner.cache[key] = chosen

    def runners_up(self):
        """Every autotuner's choices swapped, for what runs inside, for
        the fastest other configuration its last search timed; yields
        whether any was swapped.  Configurations that differ only in
        warps or tile sizes add in another order, and where a kernel's
        outputs are ill-conditioned (chunked gated attention: sums of
        exponentials that cancel) that can move them past the tolerance:
        the reference retuned is as much the reference as the first.
        Each key takes the runner-up of its own search: a tuner's
        configs_timings holds only its last, and a configuration timed on
        one shape can fault on another."""
        return self._swapped(lambda tuner, key, chosen: runner_up(
            getattr(tuner, "_geak_timings", {}).get(key) or {}, chosen))

    def as_candidate_tuned(self):
        """The reference's autotuners set, for what runs inside, to the
        choices the candidate's made for the kernel of the same name on
        the same key, where that is one of the reference's own
        configurations (the candidate's kernels are those of its file,
        guard.LAUNCHES.watches); yields whether any was set.  A search
        among many configurations whose times are close picks any of
        several, and the runner-up is only one of them."""
        theirs = {(k, key): text for (side, k, key), text in self.made().items() if side == "cand"}

        def pick(tuner, key, chosen):
            if _side(tuner) == "cand":
                return None
            return _own_config(tuner, theirs.get((_kernel_name(tuner), key)))
        return self._swapped(pick)


def _kernel_name(tuner):
    return getattr(getattr(tuner, "base_fn", None), "__name__", None) or "?"


def _side(tuner):
    """"cand" for an autotuner of the candidate's file (see
    guard.LAUNCHES.watch), else "ref"."""
    return "cand" if guard.LAUNCHES.watches(getattr(tuner, "base_fn", None)) else "ref"


def _own_config(tuner, text):
    """The tuner's configuration shown as text (another tuner's choice,
    as Tunings.choices shows it), or None."""
    if text is None:
        return None
    return next((c for c in getattr(tuner, "configs", []) if str(c) == text), None)


def runner_up(timings, chosen):
    """The fastest configuration of a search's timings other than chosen
    that ran (a finite time), or None."""
    ran = [c for c, t in timings.items() if c is not chosen and _finite(t)]
    return min(ran, key=lambda c: _first(timings[c]), default=None)


def _first(t):
    return t[0] if isinstance(t, (list, tuple)) else t


def _finite(t):
    try:
        return math.isfinite(float(_first(t)))
    except (TypeError, ValueError, IndexError):
        return False


class _RunnerUpCache(dict):
    """An autotuner's cache that stores, for the choice its search made,
    the fastest other configuration that search timed on the same
    arguments (so one that runs on them), unless the choice differs from
    the one the first process made there (first: {(kernel, key): config}
    as text, see Tunings.choices)."""

    def __init__(self, tuner, items, first):
        super().__init__(items)
        self.tuner = tuner
        self.first = first

    def __setitem__(self, key, best):
        other = runner_up(getattr(self.tuner, "_geak_timed", None) or {}, best)
        theirs = self.first.get((_kernel_name(self.tuner), repr(key)))
        if theirs is not None and theirs != str(best):
            other = None
        super().__setitem__(key, best if other is None else other)


def prefer_runners_up(avoid=None):
    """Every autotuner, for the rest of the process, runs another
    configuration than the reference's first process chose (avoid: its
    Tunings.choices; where it has none, another than this process's own
    search chose): the reference's second process does, so that where
    its outputs depend on the tuning (see Tunings.runners_up) the judge
    sees the two disagree and leaves those elements out.  A search whose
    timings tie picks by chance, so the runner-up of this process's
    choice was the first process's choice in half the processes."""
    try:
        from triton.runtime import autotuner
    except ImportError:
        return
    first = _by_kernel_and_key(avoid)
    run, bench = autotuner.Autotuner.run, autotuner.Autotuner._bench

    def _bench(self, *args, config, _orig=bench, **kwargs):
        t = _orig(self, *args, config=config, **kwargs)
        self._geak_timed[config] = t
        return t

    def _run(self, *args, _orig=run, **kwargs):
        if not isinstance(self.cache, _RunnerUpCache):
            self.cache = _RunnerUpCache(self, self.cache, first)
        self._geak_timed = {}
        return _orig(self, *args, **kwargs)
    autotuner.Autotuner._bench = _bench
    autotuner.Autotuner.run = _run


def _by_kernel_and_key(choices):
    """Choices as Tunings.choices gives them, as {(kernel, key): config};
    anything else in the list is ignored."""
    return {(c[0], c[1]): c[2] for c in choices or []
            if isinstance(c, list) and len(c) == 3 and all(isinstance(x, str) for x in c)}


class _TheirChoiceCache(dict):
    """An autotuner's cache that stores, for the choice its search made,
    the configuration another process's autotuner of the same kernel
    chose on the same key, where that is one of this autotuner's own
    (theirs: {(kernel, key): config} as text)."""

    def __init__(self, tuner, items, theirs):
        super().__init__(items)
        self.tuner = tuner
        self.theirs = theirs

    def __setitem__(self, key, best):
        own = _own_config(self.tuner, self.theirs.get((_kernel_name(self.tuner), repr(key))))
        super().__setitem__(key, best if own is None else own)


def tune_as(theirs):
    """Every autotuner, for the rest of the process, takes the choices of
    theirs (a candidate's Tunings.choices) where they name one of its own
    configurations for the same kernel and key.  The reference so tuned
    is as much the reference as its own search's choice: where a test
    launches a tuned kernel on a grid of its own (dequantize_matmul),
    which elements are written depends on the configuration."""
    try:
        from triton.runtime import autotuner
    except ImportError:
        return
    chosen = _by_kernel_and_key(theirs)
    run = autotuner.Autotuner.run

    def _run(self, *args, _orig=run, **kwargs):
        if not isinstance(self.cache, _TheirChoiceCache):
            self.cache = _TheirChoiceCache(self, self.cache, chosen)
        return _orig(self, *args, **kwargs)
    autotuner.Autotuner.run = _run


TUNINGS = Tunings()

# Warm-up and repetition (ms) of each configuration in a quick search.
QUICK_SEARCH_MS = (1, 5)


def quick_searches():
    """Autotuner searches, for the rest of the process, that time each
    configuration for a few milliseconds instead of 125 (a CUDA-graph
    search too): the correctness runs and the check stage want outputs
    and compiled kernels, not the fastest configuration, and their
    searches took minutes on scripts with many configurations and shapes
    (matrix_vector_multip's check: 48 on 18 shapes, on each side; the
    ROCm layernorm and softmax tests: 100-270 s a process, beside other
    jobs).  Any configuration's outputs must pass; the timing searches
    again, alone, as the kernel asks."""
    try:
        from triton import testing
        from triton.runtime import autotuner
    except ImportError:
        return
    warmup, rep = QUICK_SEARCH_MS

    def bench(kernel_call, quantiles):
        return testing.do_bench(kernel_call, warmup=warmup, rep=rep, quantiles=quantiles)
    autotuner.Autotuner.do_bench = property(lambda self: bench)


def empty_poisoned(on):
    """Memory from torch.empty poisoned, unless the task runs without the
    poison (its reference fails on poisoned memory: geak-eval's
    "no_poison" note); then guard zones hold zeros in every run."""
    return guard.PoisonEmpty() if on else contextlib.nullcontext()


RESAMPLES = 6  # more calls of a reference whose outputs differ from the candidate's


def device_usable():
    """Whether the device still runs work after an error (a fault in a
    kernel leaves the process's CUDA context unusable)."""
    try:
        torch.cuda.synchronize()
        return float(torch.ones(1, device="cuda").add_(1).sum()) == 2.0
    except Exception:  # noqa: BLE001 - any failure means no
        return False


def second_opinions(ref, inp, seed, poison, first=True, retuned=True):
    """More outputs of the reference on inp, each on a fresh copy of it
    and on memory poisoned as the other checked calls' was: when first
    and retuned, one with its runners-up configurations (see
    Tunings.runners_up; none when no autotuned kernel has another, or the
    call fails with it) and one with the candidate's choices
    (Tunings.as_candidate_tuned; none likewise), then RESAMPLES with its
    own.  A retuned call that leaves the device unusable (an illegal
    memory access ends the process's CUDA context) raises RetunedFault:
    geak-eval runs the stage again without retuned calls.  Kernels that
    scatter to colliding places give another winner on most calls, so two
    calls show only a part of what races; the outputs are all kept until
    the last call is made, so that each lands elsewhere in memory."""
    outs = []
    for tuned in (TUNINGS.runners_up, TUNINGS.as_candidate_tuned) if first and retuned else ():
        with tuned() as swapped:
            try:
                if swapped:
                    with empty_poisoned(poison):
                        guard.reseed(seed)
                        out = judge_portable(ref(fresh(inp)))
                        torch.cuda.synchronize()
                    outs.append(out)
            except Exception as exc:  # noqa: BLE001 - no opinion from it, then
                if not device_usable():
                    raise RetunedFault(f"the reference with other autotuner choices faulted: "
                                       f"{type(exc).__name__}: {str(exc)[:300]}") from None
    with empty_poisoned(poison):
        for _ in range(RESAMPLES):
            guard.reseed(seed)
            outs.append(judge_portable(ref(fresh(inp))))
    return outs


def measure(bench, cand, ref, inputs, reps, warmup, seed, tol, spent, tuned, notes, poison=True,
            retuned=True):
    """Per input: the median of reps interleaved calls of each.  The
    outputs of the first two timed calls of each are compared as soon as
    both sides have made them, so a candidate that behaves when checked
    and cuts corners when timed is caught here, in the process that timed
    it.  spent gets the seconds of the untimed ("warmup": the poisoned
    run, compiles, autotuning, warm-up calls) and the timed part (less
    that comparison); tuned counts each side's autotuner searches (one
    per input and autotuned kernel, see Tunings); notes gets
    judge.SPREAD_NOTE where the timed outputs passed only as racing
    outputs (see compare_or_resample; the candidate's further outputs
    there are made as its timed calls are).  retuned: see
    second_opinions."""
    rows = []
    for i, inp in enumerate(inputs):
        keep = []
        t0 = time.monotonic()
        TUNINGS.forget()
        for fn, side in ((cand, "candidate"), (ref, "reference")):  # compile and tune untimed
            guard.LAUNCHES.active = fn is cand
            before, searches = guard.LAUNCHES.count, TUNINGS.searches
            for _ in range(warmup):
                guard.reseed(seed)
                with calling(f"in the {side}'s warm-up call on performance input {i}"):
                    bench.one(fn, inp)
            if fn is cand and guard.LAUNCHES.count == before:
                raise run_cheat(f"no Triton kernel of the candidate launched on performance input {i}")
            tuned[side] = tuned.get(side, 0) + TUNINGS.searches - searches
        guard.LAUNCHES.active = False
        # The reference once on poisoned memory: what it leaves unwritten
        # is not compared.  The candidate never runs on poisoned memory
        # here, so it cannot tell timed calls from checked ones by that.
        with empty_poisoned(poison), \
                calling(f"in the reference's call on poisoned memory on performance input {i}"):
            guard.reseed(seed)
            unwritten = judge_portable(ref(clone(inp, poison=poison)))
            torch.cuda.synchronize()  # a fault here is said to be here
        t1 = time.monotonic()
        spent["warmup"] = spent.get("warmup", 0.0) + t1 - t0
        ms_c, ms_r = [], []
        seen = {cand: [], ref: []}
        drawn = []

        def another(inp=inp):
            guard.reseed(seed)
            out = bench.one(cand, inp)[1]
            drawn.append(out)  # so that the next lands elsewhere
            return judge_portable(out)
        checked_at = min(1, reps - 1)
        for k in range(reps):
            order = ((cand, ms_c), (ref, ms_r)) if k % 2 == 0 else ((ref, ms_r), (cand, ms_c))
            for fn, acc in order:
                guard.reseed(seed)
                with calling(f"in a timed call on performance input {i}"):
                    t, out, x = bench.one(fn, inp)
                if fn is cand and not plain_tensors(out):
                    raise run_cheat("an output of the timed call is not a plain tensor")
                acc.append(t)
                if k <= checked_at:
                    seen[fn].append(out)
                # Where the device is short of room, addresses may be
                # reused: fast_rope_embedding's largest input (a 16 GiB
                # copy a call) with two calls' kept did not fit on an H200.
                keep = (keep + [x, out])[-4:] if room_for((x, out), 2) else []
                del out, x
            if k != checked_at:
                continue
            # Compared as soon as both sides have made theirs, then let
            # go: held through the series beside its copies, the outputs
            # of fast_rope_embedding's largest input (16 GiB a call) ran
            # an H200 out of memory.
            t2 = time.monotonic()
            with calling(f"in the extra calls on performance input {i}"):
                if check_timed_outputs(i, seen[cand], seen[ref], unwritten, tol,
                                       lambda first: second_opinions(ref, inp, seed, poison, first, retuned),
                                       another):
                    notes.add(judge.SPREAD_NOTE)
            seen, unwritten, drawn[:] = None, None, []
            t1 += time.monotonic() - t2
        spent["timed"] = spent.get("timed", 0.0) + time.monotonic() - t1
        # The next input is made while this one is still bound: not both.
        del keep, another, inp
        rows.append({"shape": i, "ms": statistics.median(series_ms(ms_c)),
                     "ms_ref": statistics.median(series_ms(ms_r))})
    return rows


def check_timed_outputs(i, cand_outs, ref_outs, poisoned, tol, others=None, another=None):
    """The candidate's timed outputs against the reference's, elements
    where the reference's own runs disagree (two timed, one on poisoned
    memory) or leave memory unwritten left out; where they differ
    nonetheless, also those where it disagrees with more runs of itself
    (others(first): see second_opinions; another(): one more output of
    the candidate, see compare_or_resample).  Empties cand_outs and
    ref_outs: each output goes once copied for the judge, so that the
    largest (fast_rope_embedding's, 16 GiB) are not held twice over."""
    rtol, atol = tol
    if len(ref_outs) < 2:
        return
    c, r = [], []
    for outs, portable in ((cand_outs, c), (ref_outs, r)):
        while outs:
            portable.append(judge_portable(outs.pop(0)))
    # Where the poisoned run left NaN the reference wrote nothing (or NaN):
    # those elements hold whatever memory held, and the poison itself
    # may be what the timed reference runs found there afterwards.
    mask = judge.union(judge.unstable(r[0], r[1], rtol, atol),
                       judge.unstable(poisoned, r[0], rtol, atol), judge.nan_where(poisoned))

    return compare_or_resample(list(zip(c, r)), mask, r[0], others or (lambda first: []), tol,
                               f"performance input {i}, timed call", another,
                               judge.count(judge.unstable(r[0], r[1], rtol, atol)))


RESAMPLE_ROUNDS = 8
# The fewest outputs of the candidate that judge.unlike_races sees where a
# difference stays: pairs' own, then more from another().
CANDIDATE_DRAWS = 6


def room_for(out, copies=4):
    """Whether the device has room for copies more outputs like out and a
    reserve of an eighth of its memory, for one more output (or a timed
    call's copy and output) kept alive only so that the next call lands
    elsewhere: on an H200 the largest case of
    destindex_copy (2 GiB of outputs a call, whose inputs were kept too)
    ran a job alone out of its 140 GiB."""
    try:
        free, total = torch.cuda.mem_get_info()
    except Exception:  # noqa: BLE001 - no figures (the CPU mode): room
        return True
    return free > copies * run.nbytes(out) + total // 8


def compare_or_resample(pairs, mask, base, others, tol, where, another=None, spread=0):
    """Each (candidate's, reference's) output of pairs compared, masked;
    where they differ, again with the elements where more outputs of the
    reference (others(first): see second_opinions) disagree with base left
    out too, for as many rounds as each finds such elements and the
    difference stays, up to RESAMPLE_ROUNDS: a race between two values
    leaves an element looking stable in k calls with probability 2^(1-k),
    and a perf script can race at thousands of elements.  A reference that
    agrees with itself costs one round.  A difference that stays passes
    where the candidate's outputs race as the reference's do
    (judge.unlike_races; spread: the most elements at which the
    reference's runs that made mask differ; the rows where the reference
    races left out whole, see judge.rows_of): True then.  Otherwise it is
    a Mismatch at where.

    The candidate's outputs judged so are pairs' own and, where another
    is given, one more output of it (another(), on fresh memory) in each
    round, between the reference's, and more after the last round up to
    CANDIDATE_DRAWS in all, while the device has room for them (room_for):
    the winner of a race depends on where the buffers lie and on what else
    the device runs at the time, so outputs made back to back share their
    winners, and on an H200 a candidate's two such outputs differed from
    50 outputs of the reference at the same 380 elements, where outputs
    spread over the rounds race as the reference's own do."""
    def compare(m):
        for a, b in pairs:
            judge.compare(judge.masked(a, m), judge.masked(b, m), *tol)
    try:
        compare(mask)
        return False
    except judge.Mismatch as exc:
        last = exc
    draws = [a for a, _ in pairs]
    for round_no in range(RESAMPLE_ROUNDS):
        masks = [judge.unstable(base, o, *tol) for o in others(round_no == 0)]
        if another and room_for(base):
            draws.append(another())
        spread = max([spread] + [judge.count(m) for m in masks])
        grown = judge.union(*masks)
        if grown is None:
            break
        mask = judge.union(mask, grown)
        try:
            compare(mask)
            return False
        except judge.Mismatch as exc:
            last = exc
    while spread and another and len(draws) < CANDIDATE_DRAWS and room_for(base):
        draws.append(another())
    rows = judge.rows_of(mask)
    b = judge.masked(base, rows)
    why = judge.unlike_races([(judge.masked(d, rows), b) for d in draws], *tol, spread)
    if why is None:
        return True
    if spread:
        last = f"{last} ({why})"
    raise Mismatch(f"{where}: {last}") from None


class Cheat(Exception):
    pass


def run_cheat(msg):
    return Cheat(msg)


class DeviceInputs:
    """A perf script's inputs, made on the host as the script makes them
    and moved to the device one at a time as they are used: all of one
    script's inputs at once took 137 GiB of an H200.  host holds them as
    made (the scripts' bandwidth and FLOP figures read only their
    shapes)."""

    def __init__(self, host, to_device):
        self.host = host
        self.to_device = to_device

    def __len__(self):
        return len(self.host)

    def __iter__(self):
        for x in self.host:
            yield self.to_device(x)


def load_tbg(spec, d):
    """The candidate as module <name>, the reference under GEAK-eval's
    package path, and the perf script's Performance_Metrics subclass."""
    name = spec["name"]
    cpath = os.path.join(d, name + ".py")
    imports = run.test_imports(spec.get("test"), name)
    with open(cpath, "w") as fp:
        fp.write(run.strip_tests(spec["code"]) + imports)
    rdir = os.path.join(d, "ref")
    os.makedirs(rdir, exist_ok=True)
    rpath = os.path.join(rdir, name + ".py")
    with open(rpath, "w") as fp:
        fp.write(spec["reference"].rstrip("\n") + "\n" + imports)
    ppath = os.path.join(d, name + "_perf.py")
    with open(ppath, "w") as fp:
        fp.write(spec["perf"])
    sys.path.insert(0, d)
    import geak_eval.data.TritonBench.data.TritonBench_G_v1 as pkg  # noqa: F401
    ref_mod = run.load_module(REF_MODULE + "." + name, rpath)
    guard.LAUNCHES.watch(cpath)
    cand_mod = run.load_module(name, cpath)
    perf = run.load_module(name + "_perf", ppath)
    from geak_eval.perf.performance_utils import Performance_Metrics
    classes = [v for v in vars(perf).values() if isinstance(v, type)
               and issubclass(v, Performance_Metrics) and v is not Performance_Metrics]
    if not classes:
        raise RuntimeError("the perf script defines no Performance_Metrics subclass")
    pm = classes[0]()
    guard.reseed(spec.get("seeds", [42])[0])
    pm.get_input_tensors()
    cand, ref = both_sides(pm.call_op, vars(perf), cand_mod, ref_mod)
    return cand_mod, cand, ref, DeviceInputs(pm.input_tensors, pm.to_cuda), pm


def both_sides(call_op, script, cand_mod, ref_mod):
    """The perf script's call_op as each side's call: the names it imports
    from either module (custom_add, custom_add_ref) are bound, before each
    call, to the candidate's objects for one side and the reference's for
    the other.  GEAK-eval calls call_op for the candidate and call_op_ref
    for the reference, and in all but two of the 184 scripts the two differ
    only in those names.  In those two they differ in the work: in
    chunk_retention call_op passes an initial state that call_op_ref
    leaves out (no kernel could match), and apply_penalty's second
    definition of call_op calls the reference, so the candidate was never
    run and its speedup was the reference's against the candidate's."""
    home = {}
    for mod in (cand_mod, ref_mod):
        for attr, v in vars(mod).items():
            if callable(v) and not isinstance(v, types.ModuleType):
                home.setdefault(id(v), attr)
    # Both modules are alive, so an id found in home is that very object.
    names = {k: home[id(v)] for k, v in script.items() if id(v) in home}
    sides = []
    for mod in (cand_mod, ref_mod):
        binding = {k: getattr(mod, a) for k, a in names.items() if hasattr(mod, a)}

        def call(inp, binding=binding):
            script.update(binding)
            return call_op(inp)
        sides.append(call)
    return sides


def load_plain(spec, d):
    name = spec["name"]
    entry = spec.get("entry") or name
    cpath = os.path.join(d, name + ".py")
    with open(cpath, "w") as fp:
        fp.write(spec["code"])
    rpath = os.path.join(d, "geak_reference.py")
    with open(rpath, "w") as fp:
        fp.write(spec["reference"])
    ppath = os.path.join(d, "geak_perf_cases.py")
    with open(ppath, "w") as fp:
        fp.write(spec["perf"])
    sys.path.insert(0, d)
    ref = run.load_module("geak_reference", rpath)
    guard.LAUNCHES.watch(cpath)
    cand = run.load_module(name, cpath)
    perf = run.load_module("geak_perf_cases", ppath)
    guard.reseed(spec.get("seeds", [42])[0])
    cases = [tuple(c) if isinstance(c, (list, tuple)) else (c,) for c in perf.perf_inputs()]
    fc, fr = getattr(cand, entry), getattr(ref, entry)
    return cand, (lambda a: fc(*a)), (lambda a: fr(*a)), cases, perf


def check_perf_outputs(spec, cand, ref, inputs, seed, notes, poison=True, retuned=True):
    """One checked call per performance input: the outputs must agree here
    too (GEAK-eval's flow checks only these).  As in the correctness run,
    memory from torch.empty starts as NaN; elements where two runs of the
    reference disagree, or where a run without the poison but with
    poisoned guard zones after its inputs disagrees (the reference reads
    memory it does not own, as some perf scripts' inputs make it do), are
    not compared.  The reference runs first on each input, then the
    candidate: where racing writes decide an output (perf scripts that
    scatter to colliding rows, or store a block wider than their output),
    the winner can change between the first, cold call and later ones, and
    the candidate must not be the only cold one.  Where they differ
    nonetheless, more runs of the reference, one with its autotuners'
    runners-up (see second_opinions), leave out the elements that depend
    on its tuning or on the winner of a race too; a difference that stays
    passes where the candidate races as the reference does (see
    compare_or_resample), noted in notes.  A reference that fails on an
    input before the candidate has run on it raises ReferenceFailed (the
    perf script is broken for any candidate), unless the device is left
    unusable.  retuned: see second_opinions."""
    rtol, atol = judge.tolerance(spec)
    for i, inp in enumerate(inputs):
        kept = []
        with empty_poisoned(poison):
            guard.reseed(seed)
            b2 = judge_portable(reference_first(ref, inp, i))
            guard.reseed(seed)
            with calling(f"in the candidate's checked call on performance input {i}"):
                a = judge_portable(cand(fresh(inp)))
            guard.reseed(seed)
            with calling(f"in the reference's checked call on performance input {i}"):
                b1 = judge_portable(ref(fresh(inp)))
        # Each output goes once compared: four of a script's largest
        # (fast_rope_embedding: 16 GiB each) and the comparisons' own
        # memory did not fit on an H200.
        ref_masks = [judge.unstable(b1, b2, rtol, atol)]
        del b2
        guard.reseed(seed)
        with calling(f"in the reference's call on performance input {i} with guard zones"):
            b3 = judge_portable(ref(fresh(inp, poison=poison)))
            torch.cuda.synchronize()
        ref_masks.append(judge.unstable(b1, b3, rtol, atol))
        del b3
        mask = judge.union(*ref_masks)

        def another(inp=inp):
            with empty_poisoned(poison):
                guard.reseed(seed)
                out = cand(fresh(inp))
                kept.append(out)  # so that the next lands elsewhere
                return judge_portable(out)
        # More runs only on a difference: a runner-up could fault where
        # its search did not look and take the process with it.
        with calling(f"in the extra calls on performance input {i}"):
            if compare_or_resample([(a, b1)], mask, b1,
                                   lambda first: second_opinions(ref, inp, seed, poison, first, retuned),
                                   (rtol, atol), f"performance input {i}", another,
                                   max(map(judge.count, ref_masks))):
                notes.add(judge.SPREAD_NOTE)
        # The next input is made while this one is still bound: not both.
        del kept, a, b1, ref_masks, mask, another, inp
        # Four calls' outputs per input stay in torch's cache otherwise,
        # out of reach of the other jobs on the GPU: sixteen such jobs ran
        # each other out of memory on an H200.
        torch.cuda.empty_cache()


def reference_first(ref, inp, i):
    """The reference's first call on input i, on a fresh copy of it; a
    failure that leaves the device usable is ReferenceFailed."""
    try:
        return ref(fresh(inp))
    except Exception as exc:  # noqa: BLE001 - told apart below
        if not device_usable():
            note_on(exc, f"in the reference's first call on performance input {i}")
            raise
        raise ReferenceFailed(f"the reference itself fails on performance input {i}: "
                              f"{type(exc).__name__}: {str(exc)[:500]}") from None


def judge_portable(x):
    """Outputs as plain data for judge.compare, left on the device: the
    comparisons run there (a copy to the host and a float64 comparison
    on the CPU of every output would take longer than the timing)."""
    notes = set()
    out = run.portable(x, "", notes, host=False)
    if notes:
        raise Cheat("an output of the checked call is not plain data")
    return out


def forget_modules(d):
    """Both files are named after the task, so pytest would import the
    second under the first's module name and run the first's code again:
    every module loaded from the job directory goes before each run."""
    root = os.path.realpath(d) + os.sep
    for key, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if isinstance(path, str) and os.path.realpath(path).startswith(root):
            del sys.modules[key]


class Pairing:
    """ROCm files time themselves, one case after another, so the two
    sides' cases cannot be interleaved by calling both files at once.
    Instead the candidate's file runs first and keeps each case's op (its
    inputs with it, up to a quarter of the device's memory), and the
    reference's file, run next, times its op for the same case
    alternately with the kept one.  A case that could not be kept, or
    whose kept op failed when called again (it used a buffer that a later
    case replaced), is timed on its own in the candidate's next run.

    Each side's autotuners search once per case, on its first call there
    (see Tunings), and every later call of that case, the kept op's in
    the reference's run included, takes those choices: a full search
    costs seconds (a CUDA-graph search replays each configuration for
    100 ms ten times), and searching on every call made rmsnorm_fwd's 42
    cases run six searches each, past six minutes on an H200."""

    def __init__(self, bench, reps, searches):
        self.bench, self.reps = bench, reps
        self.searches = searches  # side -> autotuner searches
        self.kept = {}
        self.alone = set()
        self.cand_ms = {}  # key -> medians measured against the reference
        self.paired = 0
        self.budget = torch.cuda.get_device_properties(0).total_memory // 4
        self.base = 0
        self.tuned = {}  # key -> both sides' choices there (Tunings.made)

    def start_candidate(self):
        self.kept.clear()
        self.base = torch.cuda.memory_allocated()

    def _calls(self, side, fn, times=1):
        before = TUNINGS.searches
        for _ in range(times):
            fn()
        self.searches[side] = self.searches.get(side, 0) + TUNINGS.searches - before

    def _tuned_here(self, key):
        self.tuned[key] = {**self.tuned.get(key, {}), **TUNINGS.made()}

    def candidate(self, fn, key):
        # One counted call, then the launch hook off: it costs the
        # candidate's launches alone, and must not be timed.
        TUNINGS.forget(self.tuned.get(key))
        guard.LAUNCHES.active = True
        self._calls("candidate", fn)
        guard.LAUNCHES.active = False
        self.bench.sync()
        self._tuned_here(key)
        if key not in self.alone and torch.cuda.memory_allocated() - self.base <= self.budget:
            self.kept[key] = fn
            return None
        return self.bench.time_callable(fn, self.reps)

    def reference(self, fn, key):
        TUNINGS.forget(self.tuned.get(key))
        other = self.kept.pop(key, None)
        self._calls("reference", fn, 1 if other is None else 2)
        self._tuned_here(key)
        if other is None:
            return self.bench.time_callable(fn, self.reps)
        try:
            self._calls("candidate", other, 2)
        except Exception:  # noqa: BLE001 - timed on its own instead
            self.alone.add(key)
            return self.bench.time_callable(fn, self.reps, warmup=0)
        mine, theirs = self.bench.time_pair(fn, other, self.reps)
        self.cand_ms.setdefault(key, []).append(theirs[0])
        self.paired += 1
        return mine


def rocm_perf(spec, d, bench, reps, progress, stage, tuned):
    """ROCm files time themselves in test_performance through
    PytestBenchmarker: run the candidate's and the reference's file under
    pytest, alternately (C R C R), with geak-eval's timer in place of
    do_bench, the reference's cases timed against the candidate's (see
    Pairing), results paired by op and parameters.  The check stage runs
    each once with every benchmark called once (compiling what the timing
    will need); it returns no rows.  Returns (rows, cases paired); tuned
    gets each side's autotuner searches in the timing."""
    import pytest
    from geak_eval.perf.ROCm import performance_utils_pytest as pu
    name = spec["name"]
    files = {}
    for role, code in (("ref", spec["reference"]), ("cand", spec["code"])):
        sub = os.path.join(d, role)
        os.makedirs(sub, exist_ok=True)
        test = spec.get("cand_test") if role == "cand" else None
        text, last = run.assemble(code, test or spec.get("test", ""))
        files[role] = os.path.join(sub, name + ".py")
        with open(files[role], "w") as fp:
            fp.write(text)
        if role == "cand":
            guard.LAUNCHES.watch(files[role], last)
    pairing = Pairing(bench, reps, tuned)
    if stage == "check":
        roles = ("ref", "cand")
        timers = {"ref": lambda fn, key: (fn(), bench.sync(), (1.0, 1.0, 1.0))[2]}
        timers["cand"] = timers["ref"]
    else:
        roles = ("cand", "ref", "cand", "ref")
        timers = {"cand": pairing.candidate, "ref": pairing.reference}
    got = {"ref": {}, "cand": {}}
    failed = {"ref": 0, "cand": 0}
    for i, role in enumerate(roles):
        pu._RESULTS.clear()
        pu.TIMER = timers[role]
        if role == "cand":
            pairing.start_candidate()
        forget_modules(d)
        guard.reseed(spec.get("seeds", [42])[0])
        code = pytest.main([files[role], "-q", "-p", "no:cacheprovider", "--noconftest",
                            "--import-mode=importlib", "-k", "test_performance",
                            "--rootdir", os.path.dirname(files[role])])
        failed[role] += int(code) != 0
        for op, rows in pu._RESULTS.items():
            for row in rows:
                got[role].setdefault(pu.case_key(op, row["params"]), []).append(row)
        if i == 1 and stage == "check":
            progress()
    pairing.kept.clear()
    if not got["cand"] and guard.LAUNCHES.count == 0:
        raise Cheat("no Triton kernel of the candidate launched in test_performance")
    cand_ms = {key: [x["ms"] for x in rows if x["ms"] is not None] + pairing.cand_ms.get(key, [])
               for key, rows in got["cand"].items()}
    missing = sorted(key for key in got["ref"] if not cand_ms.get(key))
    if missing or failed["cand"] > failed["ref"]:
        raise RuntimeError(f"test_performance failed for the candidate ({len(missing)} cases "
                           "missing); see stdout")
    if stage == "check":
        return None, 0
    rows = []
    for i, key in enumerate(sorted(got["ref"])):
        c, r = got["cand"][key], got["ref"][key]
        row = {"shape": i, "ms": statistics.median(cand_ms[key]),
               "ms_ref": statistics.median(x["ms"] for x in r)}
        for src, dst in (("GB/s", "gbps"), ("TFLOPS", "tflops")):
            # bytes (or flops) = rate x time, the same for both sides
            known = [x for x in r + c if isinstance(x.get(src), (int, float)) and x["ms"]]
            if known and row["ms"]:
                row[dst] = known[0][src] * known[0]["ms"] / row["ms"]
        rows.append(row)
    return rows, pairing.paired


def main(d, nonce, progress, req, ready=None):
    """stage "check" (the outputs on the performance inputs, compiling
    everything the timing needs; run beside other jobs), "time" (the
    timing alone on the device, its outputs compared as it goes), or
    "both" in one process.  ready, when given, is called once set up,
    before anything is timed: it returns when the GPU is ours alone."""
    with open(os.path.join(d, "job.json")) as fp:
        spec = json.load(fp)
    stage = req.get("stage", "both")
    guard.LAUNCHES.install()
    guard.LAUNCHES.hold_nothing()
    TUNINGS.install()
    if stage == "check":
        quick_searches()
    bench = Bench()
    result = {"nonce": nonce, "stage": stage}
    spent, tuned, notes = {}, {}, set()
    result["spent"] = spent
    result["autotune_searches"] = tuned
    t0 = time.monotonic()
    reps = int(req.get("reps", 20))
    poison = req.get("poison", True) is not False
    retuned = req.get("retuned", True) is not False
    try:
        if spec["suite"] == "rocm":
            if ready and stage == "time":
                ready()  # pytest sets up and times in one go
            launched = guard.LAUNCHES.count
            result["shapes"], result["paired"] = rocm_perf(spec, d, bench, reps, progress, stage, tuned)
            result["patched"] = bench.check_untouched()
            result["launches"] = guard.LAUNCHES.count - launched
            raise _Done()
        loader = load_tbg if spec["suite"] == "tbg" else load_plain
        _, cand, ref, inputs, meta = loader(spec, d)
        spent["setup"] = time.monotonic() - t0
        seed = spec.get("seeds", [42])[0]
        if stage != "time":
            check_perf_outputs(spec, cand, ref, inputs, seed, notes, poison, retuned)
            # The timing has no first call: it searches again on every
            # input (see Tunings), so it keeps the allowance for
            # compiles and the job's together.
            progress()
        launched = guard.LAUNCHES.count
        if launched == 0 and stage != "time":
            raise Cheat("no Triton kernel of the candidate launched on the performance inputs")
        if stage == "check":
            result["launches"] = launched
            raise _Done()
        if ready:
            ready()
        rows = measure(bench, cand, ref, inputs, reps, max(1, int(req.get("warmup", 2))), seed,
                       judge.tolerance(spec), spent, tuned, notes, poison, retuned)
        launched = guard.LAUNCHES.count
        for row, inp in zip(rows, getattr(inputs, "host", inputs)):
            for key, fn in (("gbps", "get_gbps"), ("tflops", "get_tflops")):
                f = getattr(meta, fn, None) or getattr(meta, key, None)
                if callable(f):
                    try:
                        row[key] = float(f(inp, row["ms"]))
                    except Exception:  # noqa: BLE001 - an optional figure
                        pass
        result["shapes"] = rows
        result["patched"] = bench.check_untouched()
        result["launches"] = launched
    except _Done:
        pass
    except Mismatch as exc:
        result["error"] = {"kind": "mismatch", "message": str(exc)}
    except RetunedFault as exc:
        result["error"] = {"kind": "retuned_fault", "message": str(exc)}
    except ReferenceFailed as exc:
        result["error"] = {"kind": "reference", "message": str(exc)}
    except Cheat as exc:
        result["error"] = {"kind": "cheat", "message": str(exc)}
    except BaseException as exc:  # noqa: B902
        result["error"] = run.error_info(exc)
    for key in spent:
        spent[key] = round(spent[key], 3)
    result["notes"] = sorted(notes)
    tmp = os.path.join(d, "timing.json.tmp")
    with open(tmp, "w") as fp:
        json.dump(result, fp)
    os.replace(tmp, os.path.join(d, "timing.json"))


class Mismatch(Exception):
    pass


class RetunedFault(Exception):
    """A call of the reference with other autotuner choices than its own
    faulted (see second_opinions)."""


class ReferenceFailed(Exception):
    """The reference itself fails on a performance input: the task's perf
    script cannot be run, whatever the candidate."""


class _Done(Exception):
    """The ROCm path has filled the result."""
