"""The one comparison rule: a candidate's output against the reference's.

Structure first (dictionary keys, sequence types and lengths, tensor
shapes and dtypes), then values: floating tensors elementwise within
(rtol, atol), NaN where the reference has NaN; integers, booleans and
strings equal.  Elements where the reference disagrees with itself are
left out through a mask (see unstable), and a difference that remains
passes only as the reference's own races would (see unlike_races).
Samples of large tensors (values.sample) compare at their positions and
by their sums.
"""
import math

import torch

from . import proto, values

# (rtol, atol) per suite; see eval-deviations.md.  KernelBench's own:
# 1e-4 for float32, 1e-2 for float16 and bfloat16 (HALF).
TOLERANCE = {"tbg": (1e-3, 1e-3), "rocm": (1e-2, 1e-2), "plain": (1e-3, 1e-3),
             "kernelbench": (1e-4, 1e-4)}
HALF = {"kernelbench": 1e-2}
# The half-precision tolerance of the task being judged (configure).
_half = [None]


def configure(spec):
    """Set this process's half-precision tolerance from the task's suite."""
    _half[0] = HALF.get(spec.get(proto.JOB_SUITE))
# A half-precision output cannot be compared finer than its format holds:
# two correct kernels that add in another order differ in the last bit, and
# a relative 1e-3 is one unit in the last place of float16 and an eighth of
# one of bfloat16.  Such tensors get at least two units.
HALF_ULPS = 2


def tolerance(spec):
    """(rtol, atol) of a job's spec: the task's, else its suite's."""
    tol = spec.get(proto.JOB_TOLERANCE) or {}
    default = TOLERANCE.get(spec.get(proto.JOB_SUITE), (1e-3, 1e-3))
    return float(tol.get("rtol", default[0])), float(tol.get("atol", default[1]))


def dtype_tolerance(dtype, rtol, atol):
    if dtype in (torch.float16, torch.bfloat16):
        floor = max(HALF_ULPS * torch.finfo(dtype).eps, _half[0] or 0.0)
        return max(rtol, floor), max(atol, floor)
    return rtol, atol


class Mismatch(Exception):
    pass


def _where(path):
    return "".join(path) or "output"


def _kind(x):
    if values.is_opaque(x):
        return f"an object of class {x['__opaque__']}"
    if values.is_sample(x):
        return "a tensor"
    return f"a {type(x).__name__}"


def _number(x):
    """An int or float output (a loss, a norm); bool is a flag, not a
    measurement."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _differ(tally, message, n):
    if tally is None:
        raise Mismatch(message)
    tally.append(n)


# Elements compared at once: whole comparisons of outputs of several GiB
# made temporaries of their size.
CHUNK = 1 << 24


def _wide(t):
    """float32 for every float of 32 bits or fewer (exact for the narrower
    ones), float64 and complex as they are."""
    if t.dtype in (torch.float64, torch.complex128, torch.complex64):
        return t
    return t.float()


def _pieces(*ts):
    n = ts[0].numel()
    if n <= CHUNK or not all(t.is_contiguous() for t in ts):
        yield ts
        return
    flat = [t.view(-1) for t in ts]
    for i in range(0, n, CHUNK):
        yield tuple(f[i:i + CHUNK] for f in flat)


def _close(a, b, rtol, atol):
    """isclose of two floating tensors, widened, NaN equal to NaN."""
    out = torch.empty(a.shape, dtype=torch.bool, device=a.device)
    for x, y, o in _pieces(a, b, out):
        o.copy_(torch.isclose(_wide(x), _wide(y), rtol=rtol, atol=atol, equal_nan=True))
    return out


def _difference(a, b):
    """The largest absolute difference where both are finite, and how many
    NaN each holds."""
    worst, nan_a, nan_b = -math.inf, 0, 0
    for x, y in _pieces(a, b):
        xf, yf = _wide(x), _wide(y)
        diff = (xf - yf).abs()[torch.isfinite(xf) & torch.isfinite(yf)]
        if diff.numel():
            worst = max(worst, float(diff.max()))
        nan_a += int(torch.isnan(xf).sum())
        nan_b += int(torch.isnan(yf).sum())
    return (worst if worst > -math.inf else math.nan), nan_a, nan_b


def _equal_where(a, b, rtol, atol):
    """A boolean tensor: where a and b agree (closeness for floats)."""
    if a.is_floating_point() or a.is_complex():
        rtol, atol = dtype_tolerance(a.dtype, rtol, atol)
        return _close(a, b, rtol, atol)
    return a == b


def _compare_tensor(a, b, rtol, atol, path, tally, what="elements"):
    if a.numel() == 0 or torch.equal(a, b):
        return
    if a.dtype == torch.bool or not (a.is_floating_point() or a.is_complex()):
        n = int((a != b).sum())
        _differ(tally, f"{_where(path)}: {n} of {a.numel()} {what} differ", n)
        return
    rt, at = dtype_tolerance(a.dtype, rtol, atol)
    close = _close(a, b, rt, at)
    if bool(close.all()):
        return
    n = int((~close).sum())
    del close
    worst, nan_a, nan_b = _difference(a, b)
    _differ(tally, f"{_where(path)}: {n} of {a.numel()} {what} differ (max abs diff {worst:.3g}, "
            f"NaN {nan_a} vs {nan_b}, rtol {rt:g} atol {at:g})", n)


def _sums_close(a, b, dtype, rtol, atol):
    """The sums of two samples agree as elementwise closeness of every
    element would make them: |sum a - sum b| at most atol per element plus
    rtol of the reference's magnitudes."""
    if a.get("sum") is None or b.get("sum") is None:
        return True
    numel = math.prod(b["shape"])
    if not (dtype.is_floating_point or dtype.is_complex):
        return a["sum"] == b["sum"]
    rt, at = dtype_tolerance(dtype, rtol, atol)
    slack = at * numel + rt * b["abssum"] + 1e-9 * max(1.0, b["abssum"])
    return abs(a["sum"] - b["sum"]) <= slack and a.get("nan") == b.get("nan") \
        and a.get("inf") == b.get("inf")


def _compare_sample(a, b, rtol, atol, path, tally):
    if not values.is_sample(a):
        raise Mismatch(f"{_where(path)}: expected a tensor, got {_kind(a)}")
    if tuple(a["shape"]) != tuple(b["shape"]):
        raise Mismatch(f"{_where(path)}: shape {tuple(a['shape'])}, expected {tuple(b['shape'])}")
    if a["dtype"] != b["dtype"]:
        raise Mismatch(f"{_where(path)}: dtype {a['dtype']}, expected {b['dtype']}")
    _compare_tensor(a["values"], b["values"], rtol, atol, path, tally, "sampled elements")
    if not _sums_close(a, b, b["values"].dtype, rtol, atol):
        _differ(tally, f"{_where(path)}: the sum of its elements is {a['sum']:.6g}, expected "
                f"{b['sum']:.6g} (NaN {a.get('nan')} vs {b.get('nan')})", 1)


def compare(a, b, rtol, atol, path=(), tally=None):
    """Raise Mismatch naming the first difference of candidate a against
    reference b.  With tally (a list), differing values are counted into
    it instead; a difference of structure, shape or type still raises."""
    if values.is_opaque(b):
        if values.is_opaque(a):
            raise Mismatch(f"{_where(path)}: the reference returned an object of class "
                           f"{b['__opaque__']}, which cannot be compared")
        raise Mismatch(f"{_where(path)}: expected {_kind(b)}, got {_kind(a)}")
    if values.is_sample(b):
        return _compare_sample(a, b, rtol, atol, path, tally)
    if isinstance(b, torch.Tensor):
        if not isinstance(a, torch.Tensor):
            raise Mismatch(f"{_where(path)}: expected a tensor, got {_kind(a)}")
        if a.shape != b.shape:
            raise Mismatch(f"{_where(path)}: shape {tuple(a.shape)}, expected {tuple(b.shape)}")
        if a.dtype != b.dtype:
            raise Mismatch(f"{_where(path)}: dtype {a.dtype}, expected {b.dtype}")
        return _compare_tensor(a, b, rtol, atol, path, tally)
    if isinstance(b, dict):
        if not isinstance(a, dict) or values.is_opaque(a) or values.is_sample(a):
            raise Mismatch(f"{_where(path)}: expected a dict, got {_kind(a)}")
        if set(a) != set(b):
            miss, extra = sorted(map(str, set(b) - set(a))), sorted(map(str, set(a) - set(b)))
            raise Mismatch(f"{_where(path)}: keys differ (missing {miss[:5]}, extra {extra[:5]})")
        for k in b:
            compare(a[k], b[k], rtol, atol, path + (f"[{k!r}]",), tally)
        return
    if isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or type(a) is not type(b):
            raise Mismatch(f"{_where(path)}: expected a {type(b).__name__}, got {_kind(a)}")
        if len(a) != len(b):
            raise Mismatch(f"{_where(path)}: length {len(a)}, expected {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, rtol, atol, path + (f"[{i}]",), tally)
        return
    if type(a) is not type(b):
        raise Mismatch(f"{_where(path)}: expected {_kind(b)}, got {_kind(a)}")
    if isinstance(b, float):
        if math.isnan(b) and math.isnan(a):
            return
        if not math.isclose(a, b, rel_tol=rtol, abs_tol=atol):
            _differ(tally, f"{_where(path)}: {a!r}, expected {b!r}", 1)
        return
    if a != b:
        if not _number(b):
            raise Mismatch(f"{_where(path)}: {a!r}, expected {b!r}")
        _differ(tally, f"{_where(path)}: {a!r}, expected {b!r}", 1)


# ---- where the reference disagrees with itself ----------------------------
#
# A mask has the structure of the outputs: None where two runs agree, a
# boolean tensor over a tensor's elements (over a sample's values, in a
# dict {"values": ..., "sum": bool}), True for a number that differs.

def unstable(a, b, rtol, atol):
    """Where two outputs of the reference on the same input disagree, as a
    mask, or None."""
    if _number(a) and _number(b):
        if isinstance(a, float) or isinstance(b, float):
            same = (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rtol, abs_tol=atol)
        else:
            same = a == b
        return None if same else True
    if values.is_sample(a) and values.is_sample(b):
        if tuple(a["shape"]) != tuple(b["shape"]) or a["dtype"] != b["dtype"]:
            return None
        m = unstable(a["values"], b["values"], rtol, atol)
        sums = not _sums_close(a, b, b["values"].dtype, rtol, atol)
        return {"__samplemask__": True, "values": m, "sum": sums} if m is not None or sums else None
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype or a.numel() == 0 or torch.equal(a, b):
            return None
        ok = _equal_where(a, b, rtol, atol)
        return None if bool(ok.all()) else ~ok
    if isinstance(a, dict) and isinstance(b, dict) and not values.is_opaque(a):
        m = {k: unstable(a[k], b[k], rtol, atol) for k in a if k in b}
        return m if any(v is not None for v in m.values()) else None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        m = [unstable(x, y, rtol, atol) for x, y in zip(a, b)]
        return m if any(v is not None for v in m) else None
    return None


def _is_samplemask(m):
    return isinstance(m, dict) and m.get("__samplemask__") is True


def union(*masks):
    """Masks as one: an element is left out when any of them leaves it out."""
    out = None
    for m in masks:
        out = _union2(out, m)
    return out


def _union2(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a | b if a.shape == b.shape else a
    if _is_samplemask(a) and _is_samplemask(b):
        return {"__samplemask__": True, "values": _union2(a["values"], b["values"]),
                "sum": a["sum"] or b["sum"]}
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _union2(a.get(k), b.get(k)) for k in set(a) | set(b)}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [_union2(x, y) for x, y in zip(a, b)]
    return a


def intersection(a, b):
    """The elements two masks both leave out."""
    if a is None or b is None:
        return None
    if a is True or b is True:
        return b if a is True else a
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        m = a & b if a.shape == b.shape else None
        return m if m is not None and bool(m.any()) else None
    if _is_samplemask(a) and _is_samplemask(b):
        v = intersection(a["values"], b["values"])
        s = a["sum"] and b["sum"]
        return {"__samplemask__": True, "values": v, "sum": s} if v is not None or s else None
    if isinstance(a, dict) and isinstance(b, dict):
        m = {k: intersection(a[k], b[k]) for k in a if k in b}
        return m if any(v is not None for v in m.values()) else None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        m = [intersection(x, y) for x, y in zip(a, b)]
        return m if any(v is not None for v in m) else None
    return None


def count(mask):
    """The elements a mask leaves out."""
    if mask is None:
        return 0
    if mask is True:
        return 1
    if isinstance(mask, torch.Tensor):
        return int(mask.sum())
    if _is_samplemask(mask):
        return count(mask["values"]) + int(bool(mask["sum"]))
    if isinstance(mask, dict):
        return sum(count(m) for m in mask.values())
    return sum(count(m) for m in mask)


def rows_of(mask):
    """A mask widened to whole rows (the last dimension of tensors of two or
    more) wherever it holds an element of one: the stores of two racing
    writers of a row can land interleaved, so one element's winner can
    differ from its neighbours' in a way no number of runs shows."""
    if isinstance(mask, torch.Tensor) and mask.dim() >= 2:
        return mask.any(-1, keepdim=True).expand_as(mask).clone()
    if _is_samplemask(mask):
        return mask
    if isinstance(mask, dict):
        return {k: rows_of(m) for k, m in mask.items()}
    if isinstance(mask, list):
        return [rows_of(m) for m in mask]
    return mask


def masked(x, mask):
    """x with the elements under mask replaced by NaN (or 0), so that they
    compare equal to the reference's masked alike."""
    if mask is None:
        return x
    if mask is True and _number(x):
        return float("nan")
    if isinstance(mask, torch.Tensor):
        if not isinstance(x, torch.Tensor) or x.shape != mask.shape:
            return x
        y = x.clone()
        y[mask] = float("nan") if (y.is_floating_point() or y.is_complex()) else 0
        return y
    if _is_samplemask(mask):
        if not values.is_sample(x):
            return x
        y = dict(x, values=masked(x["values"], mask["values"]))
        if mask["sum"]:
            y["sum"] = None
        return y
    if isinstance(mask, dict) and isinstance(x, dict):
        return {k: masked(v, mask.get(k)) for k, v in x.items()}
    if isinstance(mask, list) and isinstance(x, (list, tuple)) and len(mask) == len(x):
        return type(x)(masked(v, m) for v, m in zip(x, mask))
    return x


def nan_where(x):
    """A mask of the NaN elements of x's floating tensors, or None."""
    if isinstance(x, torch.Tensor):
        if not (x.is_floating_point() or x.is_complex()) or x.numel() == 0:
            return None
        m = torch.isnan(x)
        return m if bool(m.any()) else None
    if values.is_sample(x):
        v = nan_where(x["values"])
        return {"__samplemask__": True, "values": v, "sum": True} if v is not None else None
    if isinstance(x, dict) and not values.is_opaque(x):
        m = {k: nan_where(v) for k, v in x.items()}
        return m if any(v is not None for v in m.values()) else None
    if isinstance(x, (list, tuple)):
        m = [nan_where(v) for v in x]
        return m if any(v is not None for v in m) else None
    return None


# ---- races -----------------------------------------------------------------

# The note of a candidate that passed as a racing reference's own runs
# would (see unlike_races).
SPREAD_NOTE = "within_reference_spread"
# How many times the reference's spread one output of the candidate may
# differ at: a candidate's cold first call of a scatter kernel differed at
# twice the elements that the reference's warm runs differed at.
SPREAD_SLACK = 2
# One element at which a candidate's outputs may all differ per this many
# at which two runs of the reference differ: programs that run side by
# side in a launch too large to run a program at a time (see
# perturb.Order) race by timing, and one process can decide such a race
# alike in every call that no run of the reference made.
FIXED_SHARE = 1000


def unlike_races(pairs, rtol, atol, spread, fixed=False):
    """None when the candidate's outputs (pairs: each with the reference's
    on the same input, masked alike) differ as further runs of a racing
    reference would: each at no more than SPREAD_SLACK times spread (the
    most elements at which two runs of the reference differ), all at no
    more than one element per FIXED_SHARE of spread unless the reference's
    races are fixed within a process (fixed: its own runs in one process
    all differed at one), and at least two of them; otherwise why not.  A
    value that is wrong is wrong in every run; a lost race is not."""
    if not spread:
        return "the reference's own runs agree"
    if len(pairs) < 2:
        return "one output of the candidate"
    counts, common = [], None
    for i, (a, b) in enumerate(pairs):
        tally = []
        try:
            compare(a, b, rtol, atol, tally=tally)
        except Mismatch:
            return "a difference no race gives"
        counts.append(sum(tally))
        where = unstable(a, b, rtol, atol)
        common = where if i == 0 else intersection(common, where)
    if max(counts) <= SPREAD_SLACK * spread and (fixed or count(common) <= spread // FIXED_SHARE):
        return None
    return (f"the reference's own runs differ at up to {spread} elements, the candidate's "
            f"outputs at {', '.join(map(str, counts))}, {count(common)} in all of them")


# ---- precision ---------------------------------------------------------------

DOWNGRADE_SAMPLE = 1 << 16


# Fewer elements than this, held finite by both outputs, say nothing of
# the precision the work was done at.
DOWNGRADE_MIN = 64


def _fp_exact_fraction(t, dtype):
    return float((t.to(dtype).to(t.dtype) == t).float().mean())


def _both_finite(a, b):
    """a's and b's elements where both are finite (NaN marks what the
    reference's mask leaves out, and what a candidate never wrote), at
    most DOWNGRADE_SAMPLE of them, evenly spread."""
    a, b = a.reshape(-1), b.reshape(-1)
    step = max(1, a.numel() // DOWNGRADE_SAMPLE)
    a, b = a[::step], b[::step]
    keep = torch.isfinite(a) & torch.isfinite(b)
    return a[keep], b[keep]


def downgraded(a, b, mask=None):
    """float32 outputs that hold only values a 16-bit float can hold while
    the reference's do not: the work was done at lower precision.  Judged
    on the elements both hold finite outside the reference's mask, and
    only where there are DOWNGRADE_MIN of them: an output with no finite
    element to judge holds no evidence either way."""
    if mask is not None:
        a, b = masked(a, mask), masked(b, mask)
    if values.is_sample(a) and values.is_sample(b):
        return downgraded(a["values"], b["values"])
    if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor):
        if b.dtype in (torch.float32, torch.float64) and a.dtype == b.dtype and a.shape == b.shape:
            x, y = _both_finite(a, b)
            if x.numel() < DOWNGRADE_MIN:
                return False
            return any(_fp_exact_fraction(x, low) == 1.0 and _fp_exact_fraction(y, low) < 0.5
                       for low in (torch.float16, torch.bfloat16))
        return False
    if isinstance(b, dict) and isinstance(a, dict):
        return any(downgraded(a[k], b[k]) for k in b if k in a)
    if isinstance(b, (list, tuple)) and isinstance(a, (list, tuple)):
        return any(downgraded(x, y) for x, y in zip(a, b))
    return False
    if isinstance(b, dict) and isinstance(a, dict):
        return any(downgraded(a[k], b[k]) for k in b if k in a)
    if isinstance(b, (list, tuple)) and isinstance(a, (list, tuple)):
        return any(downgraded(x, y) for x, y in zip(a, b))
    return False
