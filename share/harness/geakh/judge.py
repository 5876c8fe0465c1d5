"""Decide pass or fail.  This process never imports the code under test:
it reads two result directories (reference and candidate), checks the
candidate's result record (nonce, digest, completeness), loads outputs with
torch's safe loader and compares them strictly.
"""
import hashlib
import json
import math
import os

import torch

# Tolerances per suite: (rtol, atol).  See eval-deviations.md.
TOLERANCE = {"tbg": (1e-3, 1e-3), "rocm": (1e-2, 1e-2), "plain": (1e-3, 1e-3)}


# A half-precision output cannot be compared finer than its format holds:
# two correct kernels that add in another order (another tile size picked
# by the autotuner in another process) differ in the last bit, and a
# relative 1e-3 is one unit in the last place of float16 and an eighth of
# one of bfloat16.  Such tensors get at least two units (relative, and as
# much absolute).
HALF_ULPS = 2
# Notes of the candidate's run that the record keeps (the others decide
# the verdict): which test a ROCm file ran (see rocm.run_file).
PASSED_ON = frozenset({"original_test"})


def tolerance(spec):
    """(rtol, atol) of a job's spec: the task's, else its suite's."""
    tol = spec.get("tolerance") or {}
    default = TOLERANCE.get(spec.get("suite"), (1e-3, 1e-3))
    return tol.get("rtol", default[0]), tol.get("atol", default[1])


def dtype_tolerance(dtype, rtol, atol):
    if dtype in (torch.float16, torch.bfloat16):
        floor = HALF_ULPS * torch.finfo(dtype).eps
        return max(rtol, floor), max(atol, floor)
    return rtol, atol


class Mismatch(Exception):
    pass


def _differ(tally, message, n):
    """n elements differ: a Mismatch, or, when tally is a list, n added
    to it (a count is wanted, see unlike_races)."""
    if tally is None:
        raise Mismatch(message)
    tally.append(n)


def _where(path):
    return "".join(path) or "output"


def compare(a, b, rtol, atol, path=(), tally=None):
    """Raise Mismatch naming the first difference of candidate a against
    reference b.  With tally (a list), differing values are counted into
    it instead; a difference of structure, shape or type still raises."""
    if isinstance(b, dict) and "__opaque__" in b and isinstance(a, dict) and "__opaque__" in a:
        raise Mismatch(f"{_where(path)}: the reference returned an object of class "
                       f"{b['__opaque__']}, which cannot be compared")
    if isinstance(b, torch.Tensor):
        if not isinstance(a, torch.Tensor):
            raise Mismatch(f"{_where(path)}: expected a tensor, got {_kind(a)}")
        if a.shape != b.shape:
            raise Mismatch(f"{_where(path)}: shape {tuple(a.shape)}, expected {tuple(b.shape)}")
        if a.dtype != b.dtype:
            raise Mismatch(f"{_where(path)}: dtype {a.dtype}, expected {b.dtype}")
        if a.numel() == 0:
            return
        if a.dtype == torch.bool or not (a.is_floating_point() or a.is_complex()):
            if not torch.equal(a, b):
                n = int((a != b).sum())
                _differ(tally, f"{_where(path)}: {n} of {a.numel()} elements differ", n)
            return
        if torch.equal(a, b):
            return
        rtol, atol = dtype_tolerance(a.dtype, rtol, atol)
        close = _close(a, b, rtol, atol)
        if not bool(close.all()):
            n = int((~close).sum())
            del close
            worst, nan_a, nan_b = _difference(a, b)
            _differ(tally, f"{_where(path)}: {n} of {a.numel()} elements differ "
                    f"(max abs diff {worst:.3g}, NaN {nan_a} vs {nan_b}, "
                    f"rtol {rtol:g} atol {atol:g})", n)
        return
    if isinstance(b, dict):
        if not isinstance(a, dict):
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


def _wide(t):
    """t in a type wide enough to compare it: float32 for every float of
    32 bits or fewer (exact for the narrower ones; a rounding of 1e-7 in
    |a - b| is nothing against tolerances of 1e-3), float64 and complex
    as they are.  Widening everything to float64 made the judge of an
    attention kernel's outputs run past its time limit on a busy host."""
    if t.dtype in (torch.float64, torch.complex128, torch.complex64):
        return t
    return t.float()


def _number(x):
    """An int or float output (gradient norms, losses): bool is left out,
    it is a flag, not a measurement."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _kind(x):
    if isinstance(x, dict) and "__opaque__" in x:
        return f"an object of class {x['__opaque__']}"
    return f"a {type(x).__name__}"


# Elements of an output that the precision check looks at, spread
# evenly over it: a downgraded output holds only 16-bit values everywhere.
DOWNGRADE_SAMPLE = 1 << 16


def _fp_exact_fraction(t, dtype):
    t = t.reshape(-1)
    t = t[::max(1, t.numel() // DOWNGRADE_SAMPLE)]
    t = t[torch.isfinite(t)]
    if t.numel() == 0:
        return 1.0
    return float((t.to(dtype).to(t.dtype) == t).float().mean())


def downgraded(a, b):
    """True when float32 outputs hold only values a 16-bit float can hold
    while the reference's do not: the work was done at lower precision."""
    hits = []

    def walk(x, y):
        if isinstance(y, torch.Tensor) and isinstance(x, torch.Tensor):
            if y.dtype in (torch.float32, torch.float64) and x.dtype == y.dtype and y.numel() >= 64:
                for low in (torch.float16, torch.bfloat16):
                    if _fp_exact_fraction(x, low) == 1.0 and _fp_exact_fraction(y, low) < 0.5:
                        hits.append(True)
        elif isinstance(y, dict) and isinstance(x, dict):
            for k in y:
                if k in x:
                    walk(x[k], y[k])
        elif isinstance(y, (list, tuple)) and isinstance(x, (list, tuple)):
            for p, q in zip(x, y):
                walk(p, q)
    walk(a, b)
    return bool(hits)


# Elements compared at once.  Comparing whole outputs of 8 GiB
# (fast_rope_embedding's largest) makes temporaries of their size, and
# with the outputs themselves held that ran an H200 out of memory.
CHUNK = 1 << 24


def _pieces(*ts):
    """Matching flat pieces of same-shaped tensors, CHUNK elements at a
    time (the whole tensors where small or not contiguous)."""
    n = ts[0].numel()
    if n <= CHUNK or not all(t.is_contiguous() for t in ts):
        yield ts
        return
    flat = [t.view(-1) for t in ts]
    for i in range(0, n, CHUNK):
        yield tuple(f[i:i + CHUNK] for f in flat)


def _close(a, b, rtol, atol):
    """torch.isclose of two floating tensors, widened (see _wide), NaN
    equal to NaN, made piece by piece: a boolean tensor of their shape."""
    out = torch.empty(a.shape, dtype=torch.bool, device=a.device)
    for x, y, o in _pieces(a, b, out):
        o.copy_(torch.isclose(_wide(x), _wide(y), rtol=rtol, atol=atol, equal_nan=True))
    return out


def _difference(a, b):
    """The largest absolute difference between two floating tensors where
    both are finite, and how many NaN each holds, piece by piece."""
    worst, nan_a, nan_b = -math.inf, 0, 0
    for x, y in _pieces(a, b):
        xf, yf = _wide(x), _wide(y)
        diff = (xf - yf).abs()[torch.isfinite(xf) & torch.isfinite(yf)]
        if diff.numel():
            worst = max(worst, float(diff.max()))
        nan_a += int(torch.isnan(xf).sum())
        nan_b += int(torch.isnan(yf).sum())
    return (worst if worst > -math.inf else math.nan), nan_a, nan_b


def unstable(a, b, rtol, atol):
    """Where two runs of the reference on the same seed disagree: a
    structure of boolean masks (None where they agree; True for a number
    that differs), or None."""
    if _number(a) and _number(b):
        if isinstance(a, float) or isinstance(b, float):
            same = (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rtol, abs_tol=atol)
        else:
            same = a == b
        return None if same else True
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype or a.numel() == 0 or torch.equal(a, b):
            return None
        if a.is_floating_point() or a.is_complex():
            rtol, atol = dtype_tolerance(a.dtype, rtol, atol)
            ok = _close(a, b, rtol, atol)
        else:
            ok = a == b
        return None if bool(ok.all()) else ~ok
    if isinstance(a, dict) and isinstance(b, dict):
        m = {k: unstable(a[k], b[k], rtol, atol) for k in a if k in b}
        return m if any(v is not None for v in m.values()) else None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        m = [unstable(x, y, rtol, atol) for x, y in zip(a, b)]
        return m if any(v is not None for v in m) else None
    return None


def union(*masks):
    """Masks of unstable() as one: an element is left out when any of
    them leaves it out."""
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
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _union2(a.get(k), b.get(k)) for k in set(a) | set(b)}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [_union2(x, y) for x, y in zip(a, b)]
    return a


def rows_of(mask):
    """A mask of unstable() widened to whole rows (the last dimension of
    tensors of two or more) wherever it holds an element of one: where
    kernels that scatter rows race, the stores of two writers of a row can
    land interleaved, so one element's winner can differ from its
    neighbours' in a way no number of runs shows."""
    if isinstance(mask, torch.Tensor) and mask.dim() >= 2:
        return mask.any(-1, keepdim=True).expand_as(mask).clone()
    if isinstance(mask, dict):
        return {k: rows_of(m) for k, m in mask.items()}
    if isinstance(mask, list):
        return [rows_of(m) for m in mask]
    return mask


def count(mask):
    """The elements a mask of unstable() leaves out."""
    if mask is None:
        return 0
    if mask is True:
        return 1
    if isinstance(mask, torch.Tensor):
        return int(mask.sum())
    if isinstance(mask, dict):
        return sum(count(m) for m in mask.values())
    return sum(count(m) for m in mask)


def intersection(a, b):
    """The elements two masks of unstable() both leave out."""
    if a is None or b is None:
        return None
    if a is True or b is True:
        return b if a is True else a
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        m = a & b if a.shape == b.shape else None
        return m if m is not None and bool(m.any()) else None
    if isinstance(a, dict) and isinstance(b, dict):
        m = {k: intersection(a[k], b[k]) for k in a if k in b}
        return m if any(v is not None for v in m.values()) else None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        m = [intersection(x, y) for x, y in zip(a, b)]
        return m if any(v is not None for v in m) else None
    return None


# The note of a candidate that passed as a racing reference's own runs
# would (see unlike_races).
SPREAD_NOTE = "within_reference_spread"
# How many times the reference's spread one output of the candidate may
# differ at: on an H200 a candidate's first, cold call of a scatter
# kernel (destindex_copy_kv2) differed at 2033 elements where the
# reference's warm runs differed at up to 1017, and its next call at none.
SPREAD_SLACK = 2


def unlike_races(pairs, rtol, atol, spread):
    """None when two or more outputs of a candidate, each with the
    reference's on the same input (pairs, masked alike), differ as another
    run of a racing reference would: each at no more elements than
    SPREAD_SLACK times the most one run of the reference differs from
    another at (spread), and never all at one element; otherwise why not.
    Kernels that scatter to colliding places pick another winner on most
    calls, and no number of runs of the reference shows every element
    that can race; but a value that is wrong is wrong in every run."""
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
            return "a difference no race gives"  # a shape, a type, a key
        counts.append(sum(tally))
        where = unstable(a, b, rtol, atol)
        common = where if i == 0 else intersection(common, where)
    if max(counts) <= SPREAD_SLACK * spread and common is None:
        return None
    return (f"the reference's own runs differ at up to {spread} elements, the candidate's "
            f"outputs at {', '.join(map(str, counts))}, {count(common)} in all of them")


def nan_where(x):
    """A mask of unstable()'s shape: the NaN elements of x's floating
    tensors (None where there are none)."""
    if isinstance(x, torch.Tensor):
        if not (x.is_floating_point() or x.is_complex()) or x.numel() == 0:
            return None
        m = torch.isnan(x)
        return m if bool(m.any()) else None
    if isinstance(x, dict):
        m = {k: nan_where(v) for k, v in x.items()}
        return m if any(v is not None for v in m.values()) else None
    if isinstance(x, (list, tuple)):
        m = [nan_where(v) for v in x]
        return m if any(v is not None for v in m) else None
    return None


def masked(x, mask):
    """x with the elements under mask replaced by NaN (or 0): positions
    where the reference itself gives no stable answer are not compared."""
    if mask is None:
        return x
    if mask is True and _number(x):
        return float("nan")  # compare() lets NaN against NaN pass
    if isinstance(mask, torch.Tensor):
        if not isinstance(x, torch.Tensor) or x.shape != mask.shape:
            return x
        y = x.clone()
        y[mask] = float("nan") if (y.is_floating_point() or y.is_complex()) else 0
        return y
    if isinstance(mask, dict) and isinstance(x, dict):
        return {k: masked(v, mask.get(k)) for k, v in x.items()}
    if isinstance(mask, list) and isinstance(x, (list, tuple)) and len(mask) == len(x):
        return type(x)(masked(v, m) for v, m in zip(x, mask))
    return x


# ---- reading a result directory -----------------------------------------

class Bad(Exception):
    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason


def read_result(d, nonce):
    path = os.path.join(d, "result.json")
    try:
        with open(path) as fp:
            res = json.load(fp)
    except (OSError, ValueError):
        raise Bad("no_output", "the run ended without writing its result record")
    if not isinstance(res, dict) or res.get("nonce") != nonce:
        raise Bad("no_output", "the result record does not carry this run's nonce")
    opath = os.path.join(d, "outputs.pt")
    try:
        with open(opath, "rb") as fp:
            digest = hashlib.sha256(fp.read()).hexdigest()
    except OSError:
        raise Bad("no_output", "the outputs file is missing")
    if digest != res.get("outputs_sha256"):
        raise Bad("cheat", "the outputs file changed after the harness wrote it")
    return res, opath


def load_outputs(opath):
    try:
        return torch.load(opath, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any refusal of the safe loader
        raise Bad("cheat", "outputs hold objects other than plain tensors and Python "
                  f"values (refused by the safe loader: {str(exc).splitlines()[0][:200]})")


def second_process(refdir):
    """(run, outputs) of the reference's run in a second process, if it
    has one: memory the reference reads but never writes holds the same
    garbage for every run of one process, so only another process shows
    those elements as unstable."""
    try:
        with open(os.path.join(refdir, "ref.json")) as fp:
            nonce = json.load(fp).get("again")
    except (OSError, ValueError):
        return []
    return other_process(os.path.join(refdir, "again"), nonce)


def other_process(d, nonce):
    """(run, outputs) of another run of the reference in d, if every run
    in it passed; else none."""
    if not isinstance(d, str) or not isinstance(nonce, str):
        return []
    try:
        res, path = read_result(d, nonce)
        runs = [r for r in res["runs"] if r.get("ok")]
        if len(runs) != len(res["runs"]):
            return []
        return list(zip(runs, load_outputs(path)))
    except (OSError, ValueError, KeyError, TypeError, Bad):
        return []


def verdict(spec):
    """spec: {ref, cand, ref_nonce, cand_nonce, suite, rtol?, atol?,
    tuned?, tuned_nonce?}"""
    out = {"call": False, "exec": False, "stage": "call", "reason": None,
           "message": None, "flags": [], "notes": []}
    try:
        ref, ref_path = read_result(spec["ref"], spec["ref_nonce"])
    except Bad as exc:
        out.update(reason="harness", message="reference: " + str(exc))
        return out
    bad_ref = [r for r in ref["runs"] if not r.get("ok")]
    if bad_ref or not ref["runs"]:
        err = bad_ref[0].get("error", {}) if bad_ref else {}
        out.update(reason="harness", message="the reference itself failed: "
                   + str(err.get("message", "no runs")))
        return out
    try:
        cand, cand_path = read_result(spec["cand"], spec["cand_nonce"])
    except Bad as exc:
        out.update(reason=exc.reason, message=str(exc))
        return out
    out["runs"] = [{k: r.get(k) for k in ("seed", "ok", "seconds", "launches")}
                   for r in cand["runs"]]
    if cand.get("secrets_in_env"):
        out["flags"].append("secrets_in_env")
    for r in cand["runs"]:
        if not r.get("ok"):
            err = r.get("error") or {}
            out.update(reason=err.get("kind", "runtime"), message=err.get("message"),
                       traceback=err.get("traceback"))
            return out
    out["call"] = True
    out["stage"] = "exec"
    notes = set(cand.get("notes") or [])
    out["notes"].extend(sorted(notes & PASSED_ON))
    for r in cand["runs"]:
        if r.get("launches", 0) < 1:
            out.update(reason="cheat", message=f"seed {r['seed']}: no Triton kernel of the "
                       "candidate's own code was launched")
            return out
    ref_kt = sum(r.get("kernel_tensors", 0) for r in ref["runs"])
    cand_kt = sum(r.get("kernel_tensors", 0) for r in cand["runs"])
    if ref_kt > 0 and cand_kt == 0:
        out.update(reason="cheat", message="no output tensor was written by the candidate's "
                   "Triton kernels (the reference's are)")
        return out
    if "tensor_subclass" in notes:
        out.update(reason="cheat", message="an output is a tensor subclass")
        return out
    if "threads_left_running" in notes:
        out.update(reason="cheat", message="the candidate left threads running after the call")
        return out
    if any(r.get("inputs_modified") for r in cand["runs"]) and \
            not any(r.get("inputs_modified") for r in ref["runs"]):
        out.update(reason="cheat", message="the candidate modified its inputs; the reference does not")
        return out
    try:
        got, want = load_outputs(cand_path), load_outputs(ref_path)
    except Bad as exc:
        out.update(reason=exc.reason, message=str(exc))
        return out
    rtol, atol = TOLERANCE.get(spec.get("suite"), (1e-3, 1e-3))
    rtol, atol = spec.get("rtol", rtol), spec.get("atol", atol)
    ref_by_seed = {}
    masks = []
    for r, o in zip(ref["runs"], want):
        if r["seed"] in ref_by_seed:
            masks.append(unstable(ref_by_seed[r["seed"]], o, rtol, atol))
        ref_by_seed.setdefault(r["seed"], o)
    # The reference in a second process, and tuned as the candidate was
    # (geak-eval runs that only after a mismatch).
    others = second_process(spec["ref"]) + other_process(spec.get("tuned"), spec.get("tuned_nonce"))
    for r, o in others:
        if r["seed"] in ref_by_seed:
            masks.append(unstable(ref_by_seed[r["seed"]], o, rtol, atol))
    mask = union(*masks)
    spread = max(map(count, masks), default=0)
    if mask is not None:
        out["notes"].append("unstable_reference")
        ref_by_seed = {k: masked(v, mask) for k, v in ref_by_seed.items()}
        got = [masked(o, mask) for o in got]
    if any(r["seed"] not in ref_by_seed for r in cand["runs"]):
        out.update(reason="harness", message="no reference outputs for a seed of the candidate's")
        return out
    pairs = [(o, ref_by_seed[r["seed"]]) for r, o in zip(cand["runs"], got)]
    failed = first_difference(cand["runs"], got, ref_by_seed, rtol, atol)
    if failed:
        rows = rows_of(mask)
        why = unlike_races([(masked(a, rows), masked(b, rows)) for a, b in pairs], rtol, atol, spread)
        if why is not None:
            if spread:
                failed = f"{failed} ({why})"
            out.update(reason="cheat" if "foreign_object" in notes else "mismatch", message=failed)
            return out
        out["notes"].append(SPREAD_NOTE)
    if any(downgraded(a, b) for a, b in pairs):
        out["flags"].append("precision_downgrade")
    out["exec"] = True
    out["stage"] = "done"
    return out


def first_difference(runs, outs, ref_by_seed, rtol, atol):
    """Where the candidate's outputs first differ from the reference's
    on the same seed, or from its own first run on it; None if nowhere."""
    first_by_seed = {}
    for r, o in zip(runs, outs):
        try:
            compare(o, ref_by_seed[r["seed"]], rtol, atol)
            if r["seed"] in first_by_seed:
                compare(o, first_by_seed[r["seed"]], rtol, atol)
        except Mismatch as exc:
            which = "repeat run" if r["seed"] in first_by_seed else "seed"
            return f"{which} {r['seed']}: {exc}"
        first_by_seed.setdefault(r["seed"], o)
    return None


def main(spec, workdir):
    res = verdict(spec)
    tmp = os.path.join(workdir, "verdict.json.tmp")
    with open(tmp, "w") as fp:
        json.dump(res, fp)
    os.replace(tmp, os.path.join(workdir, "verdict.json"))
