"""The one shim over Triton's autotuner.

Every autotuned launch goes through Autotuner.run, which searches once per
key and caches the choice.  The harness needs four things of it, all set
here and nowhere else:

  policy   how a search is made: "full" (each configuration timed for
           SEARCH_MS: the timing), "quick" (for QUICK_MS: correctness
           runs want outputs, and any configuration's must pass), "first" (the
           CPU interpreter, which cannot time: the first configuration),
           ("force", k) (configuration k of every tuner, modulo its count:
           calibration runs the reference under each) and ("pin", choices)
           (the configurations given per kernel and key, to the tuners
           chosen, searching only where none is given: the reference,
           timed beside a candidate, takes the choices of its first full
           search);
  record   the choices made, as [kernel, key, configuration] text, and
           the searches made and the seconds they took, and the kernels
           compiled (or loaded from the compile cache) and the seconds
           that took, searches' compiles included;
  forget   every choice dropped, so that the next launch searches again
           (the timing tunes each side on each case);
  benching whether a search is timing configurations right now (launches
           made then are the search's, not the caller's).

It relies on Autotuner's configs, cache, keys, arg_names and base_fn and on
its prune_configs and _bench methods, as Triton 3 defines them.
"""
import contextlib
import time
import weakref

from . import outside

# Milliseconds of warm-up and of timed calls per configuration searched.
# Triton's own default is (25, 100); a full search runs with the GPU held
# alone, so it takes a tenth: configurations whose medians over that many
# calls differ by less than their noise are a tie, whichever is chosen.
# Both sides of a timing search by the same rule.
SEARCH_MS = (2, 10)
QUICK_MS = (1, 5)


class _State:
    def __init__(self):
        self.policy = "full"
        self.tuners = weakref.WeakSet()
        self.searches = 0
        self.search_s = 0.0  # seconds of the launches that searched
        self.benching = 0
        self.compiles = 0
        self.compile_s = 0.0  # seconds in JITFunction._do_compile
        self.pins = {}  # (kernel, key text) -> configuration text
        self.pinned = None  # which tuners take the pins (None: every one)


STATE = _State()


def kernel_name(tuner):
    return getattr(getattr(tuner, "base_fn", None), "__name__", None) or "?"


def _key(tuner, args, kwargs):
    """The cache key Autotuner.run computes for these arguments."""
    nargs = dict(zip(tuner.arg_names, args))
    every = {**nargs, **kwargs}
    named = {k: v for k, v in every.items() if k in tuner.arg_names}
    key = [named[k] for k in tuner.keys if k in named]
    key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
    return tuple(key)


def _config_text(tuner, text):
    return next((c for c in tuner.configs if str(c) == text), None)


def install():
    """Patch the autotuner once per process (the worker's children inherit
    nothing: each job installs it)."""
    try:
        from triton.runtime import autotuner
    except ImportError:
        return
    cls = autotuner.Autotuner
    if getattr(cls, "_geak_shim", False):
        return
    run, prune, bench = cls.run, cls.prune_configs, cls._bench

    def _run(self, *args, **kwargs):
        STATE.tuners.add(self)
        self._geak_key = _key(self, args, kwargs)
        before = len(self.cache)
        t0 = time.monotonic()
        try:
            return run(self, *args, **kwargs)
        finally:
            if len(self.cache) > before:
                STATE.searches += 1
                STATE.search_s += time.monotonic() - t0

    def _prune(self, kwargs):
        policy = STATE.policy
        if policy == "first":
            return self.configs[:1]
        if isinstance(policy, tuple) and policy[0] == "force":
            return [self.configs[policy[1] % len(self.configs)]]
        if _takes_pin(self):
            return [_config_text(self, STATE.pins[(kernel_name(self), repr(self._geak_key))])]
        return prune(self, kwargs)

    def _bench(self, *args, config, **meta):
        policy = STATE.policy
        if policy == "first" or (isinstance(policy, tuple) and policy[0] == "force"):
            return [0.0, 0.0, 0.0]
        if _takes_pin(self):
            return [0.0, 0.0, 0.0]
        STATE.benching += 1
        try:
            ms = QUICK_MS if policy == "quick" else SEARCH_MS
            with outside.aside():  # the search's timing is Triton's work
                return _timed(self, bench, ms, args, config, meta)
        finally:
            STATE.benching -= 1

    cls.run, cls.prune_configs, cls._bench = _run, _prune, _bench
    cls._geak_shim = True
    _time_compiles()


def _time_compiles():
    """Count JITFunction._do_compile's calls and seconds: a kernel
    compiled, or loaded from the compile cache, for a specialisation this
    process had not launched."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return
    compile_ = getattr(JITFunction, "_do_compile", None)
    if compile_ is None or getattr(compile_, "_geak_timed", False):
        return

    def _do_compile(self, *args, **kwargs):
        t0 = time.monotonic()
        try:
            return compile_(self, *args, **kwargs)
        finally:
            STATE.compiles += 1
            STATE.compile_s += time.monotonic() - t0

    _do_compile._geak_timed = True
    JITFunction._do_compile = _do_compile


def _takes_pin(tuner):
    """Whether the tuner takes a pinned configuration for its key now."""
    policy = STATE.policy
    if not (isinstance(policy, tuple) and policy[0] == "pin"):
        return False
    if STATE.pinned is not None and not STATE.pinned(tuner):
        return False
    text = STATE.pins.get((kernel_name(tuner), repr(getattr(tuner, "_geak_key", None))))
    return text is not None and _config_text(tuner, text) is not None


def _timed(tuner, bench, ms, args, config, meta):
    """Autotuner._bench, its calls timed for ms (warm-up, repetition)."""
    from triton import testing
    warmup, rep = ms
    saved = tuner.__dict__.get("do_bench")
    tuner.do_bench = lambda fn, quantiles: testing.do_bench(fn, warmup=warmup, rep=rep,
                                                            quantiles=quantiles)
    try:
        return bench(tuner, *args, config=config, **meta)
    finally:
        if saved is None:
            del tuner.do_bench
        else:
            tuner.do_bench = saved


def set_policy(policy, pins=None, pinned=None):
    """See the module's docstring; pins: [kernel, key, configuration]
    lists, as choices() gives them; pinned(tuner): which tuners take them
    (the others search as they ask)."""
    STATE.policy = policy
    STATE.pinned = pinned
    if isinstance(policy, tuple) and policy[0] == "pin":
        STATE.pins = {(c[0], c[1]): c[2] for c in pins or []
                      if isinstance(c, list) and len(c) == 3 and all(isinstance(x, str) for x in c)}


def choices(select=None):
    """The choices so far of every tuner (or of those select(tuner) picks),
    as [kernel, key, configuration] text."""
    out = []
    for tuner in list(STATE.tuners):
        if select is not None and not select(tuner):
            continue
        for key, config in list(tuner.cache.items()):
            out.append([kernel_name(tuner), repr(key), str(config)])
    return out


def counts():
    """The number of configurations of every tuner seen, by kernel."""
    return {kernel_name(t): len(t.configs) for t in list(STATE.tuners)}


def forget():
    for tuner in list(STATE.tuners):
        tuner.cache.clear()


def benching():
    return STATE.benching > 0


@contextlib.contextmanager
def policy(p, pins=None, pinned=None):
    saved = STATE.policy, STATE.pins, STATE.pinned
    set_policy(p, pins, pinned)
    try:
        yield
    finally:
        STATE.policy, STATE.pins, STATE.pinned = saved
