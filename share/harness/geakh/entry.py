"""The task's entry points, wrapped: every call of them is watched.

The entry points are the functions and classes of the task's reference
that its test or perf script uses (for a plain task, task.entry).  The
code under test's objects of those names are replaced, in its module, by
wrappers; a wrapper that is entered while no other call is in progress
opens a Call, which records

  - the launches of the code's own kernels made during the call (see
    launches.py) and whether any ran on another stream than the caller's;
  - which tensor arguments the call changed (each is copied before and
    compared after);
  - for each output (every non-empty tensor returned, and every argument
    changed), whether the code's kernels wrote it: the last change to it
    that the call saw was made during one of their launches (what it
    holds as each launch starts is compared with what the launch before
    left), and nothing changed it after (so a torch result copied over
    a kernel's, before a kernel that only reads it or after the last
    launch, does not count; the memory the allocator keeps cached is
    filled before the call, see guard.fill_free, so that a block cannot
    already hold what is written);
  - the outputs themselves, returned and changed arguments, for the judge.

In "full" mode (correctness runs) the first call of each run is made once
more when the run is over, with its floating-point arguments changed in
place (rolled by one element along their last dimension, so that their
values stay valid), at the same addresses, and its outputs kept as a
probe: code that keys cached results on where its inputs lie returns the
old ones.

In "light" mode (performance cases) only launches and their storages are
recorded.  While timed calls run, the wrappers step aside.
"""
import ast
import time
import weakref

import torch

from . import guard, launches, outside, values

COUNTER = launches.COUNTER


# ---- which names ----------------------------------------------------------

def _is_kernel_def(node):
    for d in getattr(node, "decorator_list", []):
        text = ast.unparse(d)
        if "triton.jit" in text or text.startswith("jit") or "autotune" in text \
                or "heuristics" in text:
            return True
    return False


def _used_names(src):
    try:
        tree = ast.parse(src or "")
    except SyntaxError:
        return set()
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.ImportFrom):
            used.update(a.name for a in node.names)
    return used


def entry_names(reference, *users):
    """Names defined at the top level of the reference (functions and
    classes, not kernels) that the users' code (test part, perf script)
    refers to."""
    try:
        tree = ast.parse(reference or "")
    except SyntaxError:
        return []
    used = set()
    for src in users:
        used |= _used_names(src)
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and not _is_kernel_def(node) and node.name in used:
            names.append(node.name)
    return names


# ---- the calls ------------------------------------------------------------

class State:
    def __init__(self):
        self.mode = "full"      # "full", "light" or "off"
        self.calls = []         # this run's calls, as records (Call.record)
        self.outputs = []       # and their outputs, for the judge
        self.returned = []      # and the tensors each returned (weak references)
        self.probes = []        # the probe of the run's first call
        self.expect = {}        # call index -> argument positions the reference changes
        self.probe_inputs = False  # the probe keeps every argument (the calibration's)
        self.probe_done = False
        self.first = None       # the run's first call: (fn, args, kwargs)

    def begin_run(self):
        self.calls, self.outputs, self.probes, self.returned = [], [], [], []
        self.probe_done = False
        self.first = None


STATE = State()


def _tensor_args(args, kwargs):
    """(position, tensor) for every tensor among the arguments, nested
    ones named by their place ("1", "x", "2.0")."""
    out = []

    def walk(pos, v, depth):
        if isinstance(v, torch.Tensor):
            out.append((pos, v))
        elif depth < 3 and isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(f"{pos}.{i}", x, depth + 1)
        elif depth < 3 and isinstance(v, dict):
            for k, x in v.items():
                walk(f"{pos}.{k}", x, depth + 1)
    for i, a in enumerate(args):
        walk(str(i), a, 0)
    for k, a in kwargs.items():
        walk(k, a, 0)
    return out


def _sync():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


class Call:
    def __init__(self, name, args, kwargs, mode, index, like=None):
        self.name, self.mode, self.index = name, mode, index
        # The call whose expected changes this one keeps: the probe keeps
        # those of the call it repeats.
        self.like = index if like is None else like
        self.returned = []
        self.launches = 0
        self.outside = None     # what ran outside the code's kernels (outside.py)
        self.side_stream = False
        self.stream = launches._stream_id()
        self._forget()
        self.args = _tensor_args(args, kwargs)
        self.snap = []
        if mode == "full":
            _sync()
            guard.fill_free(guard.POISON["on"])
            self.snap = [(pos, t, t.detach().clone()) for pos, t in self.args]
        self.t0 = time.monotonic()

    @staticmethod
    def _key(st):
        return (st.device.type, st.data_ptr(), st.nbytes())

    def _forget(self):
        self.seen = {}       # storage key -> storage, of every launch of the call
        self.before = {}     # storage key -> fingerprint before the launch in progress
        self.after = {}      # storage key -> fingerprint after the last launch that took it
        self.by_kernel = {}  # storage key -> whether the last change seen was a launch's
        self.search = {}     # storage key -> fingerprint before an autotuner's search

    def before_launch(self, storages, stream):
        """What each storage holds as a launch starts: where that is not
        what the last launch left, something else changed it between."""
        if stream != self.stream:
            self.side_stream = True
        if self.mode == "full":
            _sync()
        search, self.search = self.search, {}
        for st in storages:
            k = self._key(st)
            self.seen.setdefault(k, st)
            if self.mode != "full":
                continue
            last = self.after.get(k)
            now = search.get(k)  # the launch that ends a search starts where it began
            if now is None:
                now = last if launches.same(last, launches.fingerprint(st, copy=False)) else \
                    launches.fingerprint(st)
            if last is not None and not launches.same(now, last):
                self.by_kernel[k] = False
            self.before[k] = now

    def searched(self, storages):
        """Storages an autotuner's search is about to give the code's
        kernels: its launches write them too, so the launch that ends the
        search counts from what they held before it."""
        if self.mode != "full":
            return
        new = [st for st in storages if self._key(st) not in self.search]
        if not new:
            return
        _sync()
        for st in new:
            self.search[self._key(st)] = launches.fingerprint(st)

    def after_launch(self, storages):
        self.launches += 1
        if self.mode != "full":
            return
        _sync()
        for st in storages:
            k = self._key(st)
            now = launches.fingerprint(st)
            if not launches.same(self.before.get(k), now):
                self.by_kernel[k] = True
            self.after[k] = now
        self.before = {}

    def written(self, t):
        """Whether tensor t's storage was written by the code's kernels in
        this call: the last change to it that the call saw was made during
        one of their launches, and it holds what that left (see the
        module's docstring)."""
        try:
            st = t.untyped_storage()
        except Exception:  # noqa: BLE001
            return False
        k = self._key(st)
        if k not in self.seen:
            return False
        if self.mode != "full":
            return True
        after = self.after.get(k)
        return self.by_kernel.get(k, False) and launches.same(after, launches.fingerprint(st))

    def changed(self):
        return [(pos, t) for pos, t, copy in self.snap if not values.equal(t.detach(), copy)]

    def finish(self, result):
        """The call's record into STATE (and the outputs with it)."""
        _sync()
        changed = self.changed() if self.mode == "full" else []
        keep = set(pos for pos, _ in changed) | set(STATE.expect.get(self.like, ()))
        if self.index == "probe" and STATE.probe_inputs:
            keep |= set(pos for pos, _ in self.args)
        rec = {"name": self.name, "launches": self.launches, "side_stream": self.side_stream,
               "changed": [pos for pos, _ in changed],
               "ret_written": [self.written(t) for t in values.tensors(result) if t.numel() > 0],
               "args_written": {pos: self.written(t) for pos, t in changed if t.numel() > 0},
               "seconds": round(time.monotonic() - self.t0, 4)}
        if self.outside is not None:
            rec["outside"] = self.outside
        notes = set()
        out = None
        if self.mode == "full":
            out = {"ret": values.portable(result, notes, path=f"call{self.index}.ret"),
                   "args": {pos: values.portable(t, notes, path=f"call{self.index}.{pos}")
                            for pos, t in self.args if pos in keep}}
            rec["notes"] = sorted(notes)
        self._forget()
        self.snap = []
        self.returned = [weakref.ref(t) for t in values.tensors(result)]
        return rec, out

    def abandon(self):
        self._forget()
        self.snap = []


def _open(name, args, kwargs):
    mode = STATE.mode
    call = Call(name, args, kwargs, mode, len(STATE.calls))
    COUNTER.call = call
    return call


def _close(call, result):
    COUNTER.call = None
    rec, out = call.finish(result)
    STATE.calls.append(rec)
    STATE.outputs.append(out)
    STATE.returned.append(call.returned)


def _top_level(name, args, kwargs):
    """A launch made by the test itself, outside any entry point: a call
    of its own (its outputs are the arguments it changed)."""
    if STATE.mode == "off":
        return None
    call = _open(name, args, kwargs)

    class Opened:
        def before_launch(self, storages, stream):
            call.before_launch(storages, stream)

        def after_launch(self, storages):
            call.after_launch(storages)

        def finish(self, result):
            _close(call, result)

        def abandon(self):
            COUNTER.call = None
            call.abandon()
    return Opened()


COUNTER.top_level = _top_level


def _roll(t):
    with torch.no_grad():
        if t.dim() == 0 or t.numel() < 2:
            return
        t.copy_(torch.roll(t.detach().clone(), 1, dims=t.dim() - 1))


def probe_first():
    """The run's first call made again with its floating-point arguments
    changed in place (see the module's docstring), once the run is over;
    its record and outputs go to STATE.probes.  A fault here is the
    probe's: the run's own outputs are kept by then."""
    if STATE.first is None:
        return
    fn, args, kwargs, index = STATE.first
    STATE.first = None
    floats = [t for _, t in _tensor_args(args, kwargs)
              if (t.is_floating_point() or t.is_complex()) and t.numel() > 1 and not t.requires_grad]
    if not floats:
        return
    _sync()
    for t in floats:
        _roll(t)
    call = Call(getattr(fn, "__name__", "?"), args, kwargs, "full", "probe", like=index)
    COUNTER.call = call
    watch = outside.begin()
    try:
        again = fn(*args, **kwargs)
        call.outside = outside.end(watch)
        watch = None
        _sync()
    except Exception as exc:  # noqa: BLE001 - recorded; the judge decides
        outside.end(watch)
        COUNTER.call = None
        call.abandon()
        STATE.probes.append(({"name": call.name, "error": f"{type(exc).__name__}: {str(exc)[:300]}"},
                             None))
        return
    COUNTER.call = None
    rec, out = call.finish(again)
    rec["repeats"] = index
    STATE.probes.append((rec, out))


def wrap(fn, name):
    def entry(*args, **kwargs):
        if STATE.mode == "off" or COUNTER.call is not None:
            return fn(*args, **kwargs)
        call = _open(name, args, kwargs)
        watch = outside.begin()
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            outside.end(watch)
            COUNTER.call = None
            call.abandon()
            raise
        call.outside = outside.end(watch)
        _close(call, result)
        if STATE.mode == "full" and not STATE.probe_done:
            STATE.probe_done = True
            STATE.first = (fn, args, kwargs, call.index)
        return result
    entry.__wrapped__ = fn
    entry.__name__ = getattr(fn, "__name__", name)
    entry.__qualname__ = getattr(fn, "__qualname__", name)
    entry.__doc__ = getattr(fn, "__doc__", None)
    return entry


def install(namespace, names, call_name=None):
    """Replace namespace's objects of these names by watching wrappers:
    functions whole, autograd Functions at apply, modules at forward,
    other classes at __call__ where they have one.  Their calls are
    recorded under their names, or all under call_name (a candidate's
    ModelNew and the reference's Model are the same entry point)."""
    for given in names:
        obj = namespace.get(given)
        name = call_name or given
        if obj is None or getattr(obj, "_geak_entry", False):
            continue
        if isinstance(obj, type):
            if issubclass(obj, torch.autograd.Function):
                orig = obj.apply
                obj.apply = staticmethod(wrap(orig, name))
            elif issubclass(obj, torch.nn.Module) and "forward" in _own_attrs(obj):
                obj.forward = wrap(obj.forward, name)
            elif "__call__" in _own_attrs(obj):
                obj.__call__ = wrap(obj.__call__, name)
            else:
                continue
            obj._geak_entry = True
        elif callable(obj) and not hasattr(obj, "run"):  # not a kernel
            w = wrap(obj, name)
            w._geak_entry = True
            namespace[given] = w


def _own_attrs(cls):
    out = set()
    for c in cls.__mro__:
        if c in (object, torch.nn.Module):
            break
        out.update(vars(c))
    return out


def drop_kept(outputs, kept):
    """The calls' returned values left out of outputs where the test keeps
    every tensor of them in its own outputs (kept): they are compared
    there."""
    ids = {id(t) for _, t in values.leaves(kept)}
    for out, refs in zip(outputs, STATE.returned):
        if out is None or not refs:
            continue
        alive = [r() for r in refs]
        if all(t is not None and id(t) in ids for t in alive):
            out["ret"] = None
