"""Outputs as plain data: what the code under test returned, made safe to
save and compare.

Tensors go to the host (large ones as a sample, see Sample), containers
keep their shape, a tensor subclass is kept as it is (the judge's safe
loader then refuses it) and any other object becomes a marker naming its
class.  Nothing here imports the code under test or decides anything.
"""
import collections
import hashlib

import torch

# The functions that decide, bound before any code under test is imported:
# code that replaces torch.equal cannot make its outputs look unchanged.
_equal, _isnan = torch.equal, torch.isnan

# A tensor of more bytes than this is kept as a Sample: the judge compares
# it at SAMPLE_POINTS positions, fixed by its shape and where it sits in
# the outputs, and by its sums; whole outputs of several GiB took minutes
# to save and compare.
FULL_BYTES = 32 << 20
# The same for a performance case's outputs, whose cases are many and
# large: whole, they made the outputs file hundreds of MiB to write, hash
# and read back for every candidate.
PERF_FULL_BYTES = 4 << 20
SAMPLE_POINTS = 1 << 20
SUM_PIECE = 1 << 26


def sample_positions(numel, salt, device="cpu"):
    """SAMPLE_POINTS flat positions of a tensor of numel elements, the same
    for every run given the same salt: one in each of SAMPLE_POINTS equal
    spans that tile the tensor to its last element, at a pseudo-random
    place in its span (a multiplicative hash of the span's number), so
    that every region of the tensor is looked at."""
    n = min(numel, SAMPLE_POINTS)
    seed = int.from_bytes(hashlib.sha256(salt.encode()).digest()[:7], "little")
    i = torch.arange(n, dtype=torch.int64, device=device)
    start = i * numel // n
    width = (i + 1) * numel // n - start
    mixed = ((i + seed) * 0x9E3779B1 + (seed >> 13)) & 0x7FFFFFFFFFFF
    return start + (mixed >> 11) % width


def sample(t, salt):
    """A large tensor as a dict the judge knows: shape, dtype, the values
    at sample_positions, and float64 sums of the values and their
    magnitudes (NaN and infinities counted apart).  The positions are not
    kept: the shape and the salt fix them, and the judge compares values
    at like positions only."""
    flat = t.detach().reshape(-1)
    out = {"__sample__": True, "shape": tuple(t.shape), "dtype": str(t.dtype),
           "values": flat[sample_positions(flat.numel(), salt, flat.device)].to("cpu")}
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    floating = t.is_floating_point() or t.is_complex()
    wide = torch.complex128 if t.is_complex() else torch.float64
    # Summed on the device where the process uses one, a host tensor's
    # pieces copied there: on the host, with the few threads each of many
    # jobs gets, the sums took longer than the run that made the tensor.
    where = flat.device
    if where.type == "cpu" and torch.cuda.is_available() and torch.cuda.is_initialized():
        where = torch.device("cuda")
    total = torch.zeros((), dtype=wide, device=where)
    absolute = torch.zeros((), dtype=torch.float64, device=where)
    nan = torch.zeros((), dtype=torch.int64, device=where)
    inf = torch.zeros((), dtype=torch.int64, device=where)
    # In pieces: a float64 copy of a whole output of several GiB does not
    # fit beside it.  Read once at the end.
    for i in range(0, flat.numel(), SUM_PIECE):
        piece = flat[i:i + SUM_PIECE].to(where)
        if floating:
            finite = torch.isfinite(piece)
            nan += torch.isnan(piece).sum()
            inf += finite.numel() - finite.sum()
            piece = torch.where(finite, piece, torch.zeros((), dtype=piece.dtype, device=piece.device))
            del finite
        total += piece.sum(dtype=wide)
        absolute += piece.abs().sum(dtype=torch.float64)
        del piece
    out["sum"], out["abssum"] = float(total.real), float(absolute)
    if floating:
        out["nan"], out["inf"] = int(nan), int(inf - nan)
    return out


def is_sample(x):
    return isinstance(x, dict) and x.get("__sample__") is True


def portable(x, notes, own=None, path="", host=True, depth=0, full=FULL_BYTES):
    """x as plain data (see the module's docstring); notes gets
    "tensor_subclass" and "foreign_object" (an object of a class that own,
    the module under test, defines).  With host False tensors stay where
    they are, whole."""
    if depth > 50:
        raise RecursionError("outputs nested too deeply")
    if isinstance(x, torch.Tensor):
        if type(x) not in (torch.Tensor, torch.nn.Parameter):
            notes.add("tensor_subclass")
            return x
        if not host:
            return x.detach().clone()
        if x.numel() * x.element_size() > full:
            return sample(x, path)
        return x.detach().to("cpu").clone()
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes, torch.dtype)):
        return x
    if isinstance(x, torch.Size):
        return tuple(int(v) for v in x)
    if isinstance(x, (dict, collections.OrderedDict)):
        return {(k if isinstance(k, (str, int, float, bool)) else repr(k)):
                portable(v, notes, own, f"{path}[{k!r}]", host, depth + 1, full) for k, v in x.items()}
    if isinstance(x, tuple) and type(x) is not tuple and hasattr(x, "_fields"):
        return tuple(portable(v, notes, own, f"{path}[{i}]", host, depth + 1, full) for i, v in enumerate(x))
    if type(x) in (list, tuple):
        return type(x)(portable(v, notes, own, f"{path}[{i}]", host, depth + 1, full) for i, v in enumerate(x))
    try:
        import numpy as np
        if isinstance(x, np.ndarray):
            return portable(torch.from_numpy(x.copy()), notes, own, path, host, depth, full)
        if isinstance(x, np.generic):
            return x.item()
    except ImportError:
        pass
    cls = type(x)
    if own is not None and getattr(cls, "__module__", "") == own:
        notes.add("foreign_object")
    return {"__opaque__": f"{cls.__module__}.{cls.__qualname__}"}


def is_opaque(x):
    return isinstance(x, dict) and "__opaque__" in x


def nbytes(x):
    """The bytes of the tensors in x (in dicts, lists and tuples)."""
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, dict):
        return sum(nbytes(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(nbytes(v) for v in x)
    return 0


def main_dtype(x):
    """The element type of the most bytes among x's floating and 8-bit
    tensors, as torch names it ("float16"), or None: the type whose peak
    the roofline holds a case against."""
    by_type = {}
    for t in tensors(x):
        if t.dtype.is_floating_point or t.dtype in (torch.int8, torch.uint8):
            name = str(t.dtype).replace("torch.", "")
            by_type[name] = by_type.get(name, 0) + t.numel() * t.element_size()
    return max(by_type, key=by_type.get) if by_type else None


def tensors(x, depth=0):
    """Every tensor in x (in dicts, lists and tuples, a few levels down)."""
    if isinstance(x, torch.Tensor):
        yield x
    elif depth < 4 and isinstance(x, dict):
        for v in x.values():
            yield from tensors(v, depth + 1)
    elif depth < 4 and isinstance(x, (list, tuple)):
        for v in x:
            yield from tensors(v, depth + 1)


def plain_tensors(x):
    """No tensor subclass anywhere in x."""
    return all(type(t) in (torch.Tensor, torch.nn.Parameter) for t in tensors(x))


def equal(a, b):
    """Two tensors hold the same values (NaN where the other has NaN),
    compared in pieces: the inputs of some performance cases take many
    GiB, and whole temporaries of their size do not fit beside them."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() > SUM_PIECE and a.is_contiguous() and b.is_contiguous():
        fa, fb = a.reshape(-1), b.reshape(-1)
        return all(equal(fa[i:i + SUM_PIECE], fb[i:i + SUM_PIECE])
                   for i in range(0, fa.numel(), SUM_PIECE))
    if _equal(a, b):
        return True
    if a.is_floating_point() or a.is_complex():
        return _equal(a.nan_to_num(0.0), b.nan_to_num(0.0)) and _equal(_isnan(a), _isnan(b))
    return False


def leaves(x, pos=""):
    """(position, tensor) of every tensor in nested lists, tuples and dicts."""
    if isinstance(x, torch.Tensor):
        yield pos, x
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            yield from leaves(v, f"{pos}.{i}" if pos else str(i))
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from leaves(v, f"{pos}.{k}" if pos else str(k))


def changed_inputs(x, master):
    """The tensors of an input copy x that a call changed, against the
    inputs it was copied from."""
    if x is None or master is None:
        return []
    ref = dict(leaves(master))
    out = []
    for pos, t in leaves(x):
        m = ref.get(pos)
        if m is not None and m.shape == t.shape and not equal(t.detach(), m.detach()):
            out.append((pos, t))
    return out


def case_outputs(out, x, master, key, notes):
    """A performance case's outputs: what the call returned, and the
    inputs it changed."""
    got = {"ret": portable(out, notes, path=f"perf{key}", full=PERF_FULL_BYTES)}
    changed = changed_inputs(x, master)
    if changed:
        got["args"] = {pos: portable(t, notes, path=f"perf{key}.{pos}", full=PERF_FULL_BYTES)
                       for pos, t in changed}
    return got


class Refused(Exception):
    """An outputs file that the safe loader will not read."""


def load(path):
    """An outputs file read with torch's safe loader: plain tensors and
    Python values only."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any refusal of the safe loader
        raise Refused("outputs hold objects other than plain tensors and Python values "
                      f"(refused by the safe loader: {str(exc).splitlines()[0][:200]})") from None
