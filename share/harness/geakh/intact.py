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
"""
import importlib

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
    the class attributes added; sorted."""
    if snap is None:
        return []
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
    return sorted(out)


SNAP = None


def take():
    global SNAP
    SNAP = snapshot()
