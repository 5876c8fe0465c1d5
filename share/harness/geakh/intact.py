"""The libraries a job's code runs beside, verified unchanged: torch's and
Triton's functions and numpy's, and the methods of torch.Tensor and
torch.nn.Module, as they were before the code was loaded.

The judge compares a side-by-side timing, and the reference's own calls,
only where the code under test has not replaced what they call, however
it did so (an assignment, setattr with a name made at run time, a
module's dictionary).  A module's attribute counts where it was callable
(its plain values, such as a flag set on first use, change legitimately);
a class's attributes count all, added ones too (an added method
shadows an inherited one).

The reference's own modules, where the reference runs beside the code
(its side of the timing), are watched too from when the harness loads
them (watch): their functions, kernels, classes and the modules they
name, their classes' attributes, and names added that shadow a builtin.
What the reference's own calls change there is theirs: each call made
through source.on_reference_cache takes what changed before it as the
code's and what changes during it as the reference's.
"""
import builtins
import importlib
import types

import torch

MODULES = ("torch", "torch.nn.functional", "torch.cuda", "torch.testing", "torch.linalg",
           "torch.fft", "triton", "triton.language", "triton.testing", "numpy")
CLASSES = (torch.Tensor, torch.nn.Module)


def _modules():
    out = []
    for name in MODULES:
        try:
            out.append((name, importlib.import_module(name)))
        except ImportError:
            pass
    return out


def snapshot():
    """What the watched modules and classes hold now."""
    mods = {name: {k: v for k, v in vars(m).items() if callable(v)} for name, m in _modules()}
    classes = {c.__name__: dict(vars(c)) for c in CLASSES}
    return mods, classes


def changed(snap):
    """The names (module.attribute) replaced or removed since snap, and
    the class attributes added, and the same of the reference's modules
    (watch); sorted."""
    if snap is None:
        return sorted(set(_reference_changes()))
    mods, classes = snap
    out = []
    for name, m in _modules():
        now = vars(m)
        for k, v in mods.get(name, {}).items():
            if now.get(k, None) is not v:
                out.append(f"{name}.{k}")
    for c in CLASSES:
        was, now = classes.get(c.__name__, {}), vars(c)
        for k in set(was) | set(now):
            if was.get(k, None) is not now.get(k, None):
                out.append(f"torch.{c.__name__}.{k}")
    return sorted(set(out) | set(_reference_changes()))


SNAP = None


# The reference's modules: [module, what it held at its last snapshot],
# and what the code under test changed there (its names).
WATCHED = []
FOUND = set()


def _held(v):
    return callable(v) or isinstance(v, types.ModuleType)


def _namespace(mod):
    name = mod.__name__
    own = {k: v for k, v in vars(mod).items() if _held(v)}
    classes = {k: dict(vars(v)) for k, v in vars(mod).items()
               if isinstance(v, type) and getattr(v, "__module__", None) == name}
    return own, classes, set(vars(mod))


def watch(mod):
    """Watch mod, a module of the reference's side, from now on."""
    WATCHED.append([mod, _namespace(mod)])


def _reference_changes():
    out = set(FOUND)
    for mod, (own, classes, names) in WATCHED:
        name, now = mod.__name__, vars(mod)
        for k, v in own.items():
            if now.get(k, None) is not v:
                out.add(f"{name}.{k}")
        for k in now:
            if k not in names and hasattr(builtins, k) and not k.startswith("__"):
                out.add(f"{name}.{k}")
        for k, was in classes.items():
            cls = now.get(k)
            cur = vars(cls) if isinstance(cls, type) else {}
            for a in set(was) | set(cur):
                if was.get(a, None) is not cur.get(a, None):
                    out.add(f"{name}.{k}.{a}")
    return out


def reference_begins():
    """Before a call of the reference's: what changed since its last
    call is the code's."""
    FOUND.update(_reference_changes())


def reference_ends():
    """After it: what its own call changed is the reference's."""
    for w in WATCHED:
        w[1] = _namespace(w[0])


def take():
    global SNAP
    SNAP = snapshot()
