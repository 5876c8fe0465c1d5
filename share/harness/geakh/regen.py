"""Regeneration: the canonical outputs of a profile that came without them
(geak-eval --import-calibration), made again by one run of the reference.

What a calibration measures over many runs (the masks of the elements
where the reference disagrees with itself, the spreads, the run mode, the
autotuner choices, what each call changes) travels with the profile; the
canonical outputs, the first run's, are large and are made again: the
run of the calibration's first process (A) once more, with the same seeds
in the same order, the same run mode and performance checks, and every
autotuner pinned to the configuration A's search chose.  The outputs made
are held to the sums that the calibration recorded of its own outside the
masks (fingerprint): where they differ, the profile does not hold on this
machine, and the job says so instead of writing outputs.
"""
import json
import math
import os

import torch

from . import calibrate, compare, proto, values

# Outputs nested deeper than this are not data.
DEPTH = 50


def masks_of(tensors):
    """The masks of a profile's tensors, without the canonical outputs."""
    return {part: {k: t["mask"] for k, t in tensors[part].items()} for part in ("seeds", "cases")}


def _finite_number(v):
    return v if math.isfinite(v) else repr(v)


def _tensor_sums(t):
    """[kind, dtype, numel, sum, magnitude sum, NaN count] of a tensor: sums
    in float64 over its finite elements for floats, exact for integers."""
    t = t.detach().to("cpu")
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.is_floating_point():
        finite = torch.isfinite(t)
        kept = torch.where(finite, t, torch.zeros((), dtype=t.dtype)).to(torch.float64)
        return ["tensor", str(t.dtype), t.numel(), _finite_number(float(kept.sum())),
                _finite_number(float(kept.abs().sum())), int(torch.isnan(t).sum())]
    wide = t.to(torch.int64)
    return ["tensor", str(t.dtype), t.numel(), int(wide.sum()), int(wide.abs().sum()), 0]


def _walk(x, pos, out, depth=0):
    if depth > DEPTH:
        raise RecursionError("outputs nested too deeply")
    if isinstance(x, torch.Tensor):
        out[pos or "output"] = _tensor_sums(x)
    elif values.is_sample(x):
        out[(pos or "output") + "(sample)"] = [
            "sample", str(x.get("dtype")), math.prod(x.get("shape") or ()),
            None if x.get("sum") is None else _finite_number(float(x["sum"])),
            None if x.get("abssum") is None else _finite_number(float(x["abssum"])),
            x.get("nan")]
        _walk(x.get("values"), f"{pos}['values']", out, depth + 1)
    elif isinstance(x, bool) or x is None or isinstance(x, str) or values.is_opaque(x):
        out[pos or "output"] = ["value", repr(x)]
    elif isinstance(x, (int, float)):
        out[pos or "output"] = ["number", _finite_number(float(x))]
    elif isinstance(x, dict):
        for k in sorted(x, key=repr):
            _walk(x[k], f"{pos}[{k!r}]", out, depth + 1)
    elif isinstance(x, (list, tuple)):
        out[pos or "output"] = ["length", len(x)]
        for i, v in enumerate(x):
            _walk(v, f"{pos}[{i}]", out, depth + 1)


def fingerprint(canon, mask):
    """The canonical outputs outside their mask, as sums per tensor and
    values per number (JSON): what the outputs made again must match."""
    out = {}
    _walk(compare.masked(canon, mask), "", out)
    return out


def _dtype(name):
    got = getattr(torch, str(name).replace("torch.", ""), None)
    return got if isinstance(got, torch.dtype) else torch.float32


def _close(want, got, slack):
    if isinstance(want, str) or isinstance(got, str) or want is None or got is None:
        return want == got
    return abs(want - got) <= slack


def _entry_differs(want, got, rtol, atol):
    """Why one entry of a fingerprint (got) is not the recorded one
    (want), or None: the sums agree as the comparison rule's closeness of
    every element would make them (compare._sums_close)."""
    if not isinstance(want, list) or not want or want[0] != got[0]:
        return f"{got[0]}, the calibration's {want[0] if isinstance(want, list) and want else want!r}"
    kind = got[0]
    if kind == "number":
        w, g = want[1], got[1]
        if isinstance(w, str) or isinstance(g, str):
            return None if w == g else f"{g}, the calibration's {w}"
        return None if math.isclose(g, w, rel_tol=rtol, abs_tol=atol) else f"{g!r}, the calibration's {w!r}"
    if kind in ("value", "length"):
        return None if want == got else f"{got[1]}, the calibration's {want[1]}"
    if len(want) != len(got) or want[1] != got[1] or want[2] != got[2]:
        return f"{got[1]} of {got[2]} elements, the calibration's {want[1]} of {want[2]}"
    if want[5] != got[5]:
        return f"{got[5]} NaN, the calibration's {want[5]}"
    dtype = _dtype(got[1])
    if not (dtype.is_floating_point or dtype.is_complex):
        return None if want[3:5] == got[3:5] else f"sum {got[3]}, the calibration's {want[3]}"
    rt, at = compare.dtype_tolerance(dtype, rtol, atol)
    magnitude = want[4] if isinstance(want[4], (int, float)) else 0.0
    slack = at * got[2] + rt * magnitude + 1e-9 * max(1.0, magnitude)
    if not (_close(want[3], got[3], slack) and _close(want[4], got[4], slack)):
        return f"sum {got[3]!r}, the calibration's {want[3]!r} (at most {slack:.3g} apart)"
    return None


def differs(want, got, rtol, atol):
    """Why a fingerprint of outputs made again (got) is not the recorded
    one (want), or None."""
    if not isinstance(want, dict):
        return "the calibration recorded no sums of its outputs"
    if set(want) != set(got):
        miss, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        return f"the outputs' structure differs (missing {miss[:3]}, extra {extra[:3]})"
    for pos in sorted(want):
        why = _entry_differs(want[pos], got[pos], rtol, atol)
        if why:
            return f"{pos}: {why}"
    return None


class Failed(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def _read(pdir):
    """The profile's JSON and masks, as the import left them."""
    try:
        with open(os.path.join(pdir, "profile.json")) as fp:
            profile = json.load(fp)
        masks = values.load(os.path.join(pdir, "masks.pt"))
    except (OSError, ValueError, values.Refused) as exc:
        raise Failed("profile", f"the profile cannot be read: {str(exc)[:200]}") from None
    if not (isinstance(masks, dict) and isinstance(masks.get("seeds"), dict)
            and isinstance(masks.get("cases"), dict)):
        raise Failed("profile", "masks.pt is not {\"seeds\": {...}, \"cases\": {...}}")
    return profile, masks


def _mask_fits(mask, canon, depth=0):
    """A mask has the shape of the outputs it masks: where it does not,
    it would leave out nothing the judge can check, or everything."""
    if mask is None or depth > DEPTH:
        return mask is None
    if mask is True:
        return isinstance(canon, (int, float)) and not isinstance(canon, bool)
    if isinstance(mask, torch.Tensor):
        return (isinstance(canon, torch.Tensor) and mask.dtype == torch.bool
                and mask.shape == canon.shape)
    if isinstance(mask, dict) and mask.get("__samplemask__") is True:
        return values.is_sample(canon) and _mask_fits(mask.get("values"), canon.get("values"), depth + 1)
    if isinstance(mask, dict):
        return isinstance(canon, dict) and all(k in canon and _mask_fits(m, canon[k], depth + 1)
                                               for k, m in mask.items())
    if isinstance(mask, list):
        return isinstance(canon, (list, tuple)) and len(mask) == len(canon) and \
            all(_mask_fits(m, c, depth + 1) for m, c in zip(mask, canon))
    return False


def regenerate(spec, pdir, d, budget, perf):
    """The profile's tensors (profile.pt), its canonical outputs made
    again; Failed where they cannot be, or differ from the calibration's."""
    profile, masks = _read(pdir)
    rtol, atol = compare.tolerance(spec)
    if profile.get(proto.PROF_TOLERANCE) != [rtol, atol]:
        raise Failed("profile", f"its tolerance {profile.get('tolerance')} is not the task's "
                     f"{[rtol, atol]}")
    cal = calibrate.Calibration(spec, d, budget, perf)
    seeds = [s.get("seed") for s in profile.get(proto.PROF_SEEDS) or []]
    if seeds != cal.seeds:
        raise Failed("profile", f"its seeds {seeds} are not the task's {cal.seeds}")
    cal.poison, cal.one_call = bool(profile.get("poison")), bool(profile.get("one_call"))
    ok_cases = [c["key"] for c in profile.get("cases") or [] if c.get("ok")]
    # The choices of the calibration's search stand for A's result.
    cal.first = {"tunings": profile.get(proto.PROF_TUNINGS) or []}
    plan = cal.plan([seeds[0], seeds[0]] + seeds[1:], calibrate.PERF_CHECKS if ok_cases else 0,
                    guard_poison=True, autotune=["pin", 0])
    res, outs = cal.process("G", plan)
    if res is None:
        raise Failed(outs["kind"], outs["message"])
    err = calibrate._failed(res)
    if err is not None:
        raise Failed("reference", "the reference failed where its calibration passed: "
                     + str(err.get("message")))
    expect = (profile.get("candidate_plan") or {}).get("expect") or {}
    tensors = {"seeds": {}, "cases": {}}
    for sp in profile["seeds"]:
        seed = sp["seed"]
        canon = next(o for r, o in zip(res["runs"], outs["runs"]) if r["seed"] == seed)
        repeats = (sp.get("probe") or {}).get("repeats")
        kept = set(expect.get(str(repeats)) or []) if isinstance(repeats, int) else set()
        calibrate._probe_args_only(canon, kept)
        tensors["seeds"][seed] = {"canon": canon, "mask": masks["seeds"].get(seed)}
    perf_outs = outs.get("perf") or {}
    for key in ok_cases:
        got = perf_outs.get(key) or []
        if not got:
            raise Failed("reference", f"performance case {key}: no output where its calibration had one")
        tensors["cases"][key] = {"canon": got[0], "mask": masks["cases"].get(key)}
    sums = profile.get(proto.PROF_CANON_SUMS) or {}
    for part, what in (("seeds", "seed"), ("cases", "performance case")):
        for k, t in tensors[part].items():
            if not _mask_fits(t["mask"], t["canon"]):
                raise Failed("profile", f"{what} {k}: its mask does not fit the outputs")
            why = differs((sums.get(part) or {}).get(str(k)), fingerprint(t["canon"], t["mask"]),
                          rtol, atol)
            if why:
                raise Failed("differs", f"{what} {k}: {why}")
    return tensors


def main(d, nonce, req, hooks):
    with open(os.path.join(d, proto.FILE_JOB)) as fp:
        spec = json.load(fp)
    hooks["progress"]()
    torch.set_num_threads(1)
    compare.configure(spec)
    result = {proto.NONCE: nonce, proto.PROF_OK: True}
    try:
        what = "the regenerate request"
        tensors = regenerate(spec, proto.need(req, proto.REQ_PROFILE, what), d,
                             float(proto.need(req, proto.REQ_RUN_BUDGET, what)),
                             bool(proto.need(req, proto.REQ_PERF, what)))
        torch.save(tensors, os.path.join(d, proto.FILE_PROFILE_PT))
    except Failed as exc:
        result = {proto.NONCE: nonce, proto.PROF_OK: False, proto.PROF_KIND: exc.kind,
                  proto.PROF_ERROR: str(exc)}
    tmp = os.path.join(d, proto.FILE_REGEN + ".tmp")
    with open(tmp, "w") as fp:
        json.dump(result, fp)
    os.replace(tmp, os.path.join(d, proto.FILE_REGEN))
