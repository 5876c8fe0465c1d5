"""Pass or fail.  This process never imports the code under test: it reads
the reference's profile (calibrate.py) and a candidate's result directory,
checks the result record (nonce, digest), and judges every output by the
one rule of compare.py against the profile.

Part "run" judges a candidate's correctness runs and performance checks;
part "timed" the outputs kept from its timed calls.  See geak-eval(1) for
the rules, and geak-harness(7) for the files.
"""
import hashlib
import json
import os

from . import compare, proto, values

# Notes of the candidate's run that the record keeps: which test a ROCm
# file ran under.
KEPT_NOTES = frozenset({"original_test"})


class Verdict(Exception):
    """A verdict reached: stage, reason, message."""

    def __init__(self, stage, reason, message, call=True, traceback=None):
        super().__init__(message)
        self.stage, self.reason, self.message = stage, reason, message
        self.call, self.traceback = call, traceback


def _read_result(d, name, nonce, outputs=None, stage="call"):
    """The record name of the run in d; stage "perf" for the timing's."""
    what = "the timing" if stage == "perf" else "the run"
    try:
        with open(os.path.join(d, name)) as fp:
            res = json.load(fp)
    except (OSError, ValueError):
        raise Verdict(stage, "no_output", f"{what} ended without writing its result record",
                      call=stage != "call") from None
    if not isinstance(res, dict) or res.get(proto.NONCE) != nonce:
        raise Verdict(stage, "no_output", f"{what}'s result record does not carry this run's nonce",
                      call=stage != "call")
    if outputs is None:
        return res, None
    opath = os.path.join(d, outputs)
    try:
        with open(opath, "rb") as fp:
            digest = hashlib.sha256(fp.read()).hexdigest()
    except OSError:
        raise Verdict("call", "no_output", "the outputs file is missing", call=False) from None
    if digest != res.get("outputs_sha256"):
        raise Verdict("exec", "cheat", "the outputs file changed after the harness wrote it")
    return res, opath


def _load(path):
    try:
        return values.load(path)
    except values.Refused as exc:
        raise Verdict("exec", "cheat", str(exc)) from None


def read_profile(d):
    with open(os.path.join(d, proto.FILE_PROFILE)) as fp:
        profile = json.load(fp)
    return profile, values.load(os.path.join(d, proto.FILE_PROFILE_PT))


def _without_opaque(x):
    """x with objects that are not data dropped: what a call returned
    besides its tensors (a module, a config) is not compared."""
    if values.is_opaque(x):
        return None
    if isinstance(x, dict) and not values.is_sample(x):
        return {k: _without_opaque(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_without_opaque(v) for v in x)
    return x


def _args_like(c, r):
    """Call c's outputs with its arguments kept only where r's are."""
    if not isinstance(c, dict) or not isinstance(r, dict):
        return c
    return dict(c, args={k: v for k, v in (c.get("args") or {}).items() if k in (r.get("args") or {})})


def _comparable(out, canon):
    """A run's outputs shaped as the reference's canonical ones are: the
    calls' and the probe's arguments kept only where the reference's are,
    objects that are not data dropped from the calls."""
    if not isinstance(out, dict) or not isinstance(canon, dict):
        return out, canon
    calls, ref_calls = out.get("calls"), canon.get("calls")
    if isinstance(calls, list) and isinstance(ref_calls, list) and len(calls) == len(ref_calls):
        out = dict(out, calls=[_args_like(c, r) for c, r in zip(calls, ref_calls)])
    if "probe" in out and "probe" in canon:
        out = dict(out, probe=_args_like(out["probe"], canon["probe"]))
    return _without_opaque(out), _without_opaque(canon)


class Judge:
    def __init__(self, spec):
        self.spec = spec
        self.profile, self.tensors = read_profile(spec[proto.REQ_PROFILE])
        self.rtol, self.atol = self.profile.get("tolerance") or compare.tolerance(spec)
        compare.configure({"suite": self.profile.get("suite")})
        self.notes = set()
        self.flags = set()
        self.allow_torch_ops = bool(self.profile.get("allow_torch_ops"))

    # -- integrity of the calls --

    def check_calls(self, seed_profile, rec):
        calls, ref = rec.get("calls") or [], seed_profile.get("calls") or []
        where = f"seed {rec['seed']}"
        if len(calls) != len(ref) or any(c.get("name") != r.get("name") for c, r in zip(calls, ref)):
            raise Verdict("exec", "mismatch", f"{where}: the test made {len(calls)} calls of the "
                          f"task's functions ({_names(calls)}); with the reference {len(ref)} "
                          f"({_names(ref)})")
        kernels = self.profile.get("has_kernels")
        for i, (c, r) in enumerate(zip(calls, ref)):
            what = f"{where}: call {i + 1} ({c.get('name')})"
            if set(c.get("notes") or []) & {"tensor_subclass", "foreign_object"}:
                raise Verdict("exec", "cheat", f"{what} returned an object that is not plain data")
            if c.get("side_stream") and not r.get("side_stream"):
                raise Verdict("exec", "cheat", f"{what} launched a kernel on another stream than "
                              "its caller's")
            self.check_outside(c, what)
            extra = sorted(set(c.get("changed") or []) - set(r.get("changed") or []))
            if extra:
                raise Verdict("exec", "cheat", f"{what} changed its argument {extra[0]} in place; "
                              "the reference does not")
            ret, args = c.get("ret_written") or [], c.get("args_written") or {}
            exempt = kernels and (r.get("launches") or 0) == 0
            if (ret or args) and (c.get("launches") or 0) == 0 and not exempt:
                raise Verdict("exec", "cheat", f"{what} launched none of the candidate's own "
                              "Triton kernels")
            for j, w in enumerate(ret):
                if not w and not (kernels and _at(r.get("ret"), j) is False):
                    raise Verdict("exec", "cheat", f"{what}: its output {j + 1} was not written "
                                  "by the candidate's own Triton kernels")
            for pos, w in args.items():
                if not w and not (kernels and (r.get("args") or {}).get(pos) is False):
                    raise Verdict("exec", "cheat", f"{what}: its argument {pos}, changed in "
                                  "place, was not written by the candidate's own Triton kernels")

    def check_replaced(self, res, stage):
        """Library functions the candidate's process changed (intact.py)
        beyond those the reference's own process changes."""
        extra = sorted(set(res.get("replaced") or []) - set(self.profile.get("replaced") or []))
        if extra:
            raise Verdict(stage, "cheat", "the candidate changed library functions that the "
                          f"reference and the harness call ({', '.join(extra[:6])})")

    def check_outside(self, c, what, stage="exec"):
        """A call's work outside the candidate's kernels (outside.py): no
        torch arithmetic and no floating-point data through the host
        beyond what the reference's calls do (HOST_FLOATS at least), unless
        the task allows torch operations."""
        o = c.get("outside") if isinstance(c, dict) else None
        if not isinstance(o, dict) or self.allow_torch_ops:
            return
        ref = self.profile.get("outside") or {}
        ops = sorted(set(o.get("ops") or []) - set(ref.get("ops") or []))
        if ops:
            raise Verdict(stage, "cheat", f"{what} computed with torch outside the candidate's "
                          f"Triton kernels ({', '.join(ops[:6])}); only allocation, views and "
                          "copies are allowed there (torch-ops-allowed.txt, geak-eval "
                          "--allow-torch-ops)")
        for key, words in (("to_host", "took {} floating-point elements off the device"),
                           ("from_host", "made tensors of {} floating-point elements from host data")):
            n = int(o.get(key) or 0)
            if n > max(HOST_FLOATS, int(ref.get(key) or 0)):
                raise Verdict(stage, "cheat", f"{what} {words.format(n)}: its arithmetic ran outside "
                              "its Triton kernels")

    # -- outputs --

    def judge_outputs(self, items, also=()):
        """items: (candidate's output, canonical, mask, the reference's
        profile entry for the input, label) on one input each, and also
        more such comparisons (of the candidate's repeated run with its
        first); raises a Verdict, or notes a pass within the reference's
        spread."""
        failed = None
        for out, canon, mask, _, label in list(items) + list(also):
            if mask is not None:
                self.notes.add("unstable_reference")
            a, b = _comparable(out, canon)
            try:
                compare.compare(compare.masked(a, mask), compare.masked(b, mask), self.rtol, self.atol)
            except compare.Mismatch as exc:
                failed = failed or f"{label}: {exc}"
        if failed is None:
            return
        spread = max((i[3].get("spread", 0) for i in items), default=0)
        fixed = any(i[3].get("fixed_races") for i in items)
        pairs = []
        for out, canon, mask, _, _ in items:
            rows = compare.rows_of(mask)
            a, b = _comparable(out, canon)
            pairs.append((compare.masked(a, rows), compare.masked(b, rows)))
        why = compare.unlike_races(pairs, self.rtol, self.atol, spread, fixed)
        if why is None:
            self.notes.add(compare.SPREAD_NOTE)
            return
        raise Verdict("exec", "mismatch", f"{failed} ({why})" if spread else failed)

    # -- the parts --

    def run_part(self, cand_dir, nonce):
        res, opath = _read_result(cand_dir, proto.FILE_RESULT, nonce, proto.FILE_OUTPUTS_PT)
        self.runs = [{k: r.get(k) for k in ("seed", "ok", "seconds", "launches")}
                     for r in res.get("runs") or []]
        if res.get("secrets_in_env"):
            self.flags.add("secrets_in_env")
        self.check_replaced(res, "exec")
        self.notes.update(set(res.get("notes") or []) & KEPT_NOTES)
        for r in res.get("runs") or []:
            if not r.get("ok"):
                err = r.get("error") or {}
                raise Verdict("call", err.get("kind", "runtime"), err.get("message"), call=False,
                              traceback=err.get("traceback"))
        if not res.get("runs"):
            raise Verdict("call", "no_output", "the result record holds no run", call=False)
        by_seed = {s["seed"]: s for s in self.profile["seeds"]}
        for r in res["runs"]:
            if r.get("launches", 0) < 1:
                raise Verdict("exec", "cheat", f"seed {r['seed']}: no Triton kernel of the "
                              "candidate's own code was launched")
            if r.get("threads_left"):
                raise Verdict("exec", "cheat", "the candidate left threads running after the call")
            if set(r.get("notes") or []) & {"tensor_subclass", "foreign_object"}:
                raise Verdict("exec", "cheat", f"seed {r['seed']}: an output is not plain data "
                              "(a tensor subclass, or an object of a class the candidate defines)")
            if r["seed"] not in by_seed:
                raise Verdict("exec", "harness", f"no reference outputs for seed {r['seed']}")
            self.check_calls(by_seed[r["seed"]], r)
            self.check_probe(by_seed[r["seed"]], r)
        outs = _load(opath)
        items = []
        first = {}
        for r, o in zip(res["runs"], outs["runs"]):
            t = self.tensors["seeds"][r["seed"]]
            items.append((o, t["canon"], t["mask"], by_seed[r["seed"]],
                          ("repeat run" if r["seed"] in first else "seed") + f" {r['seed']}"))
            first.setdefault(r["seed"], o)
        # The repeated run agrees with the first, where the reference does.
        repeats = [(o, first[r["seed"]], self.tensors["seeds"][r["seed"]]["mask"],
                    by_seed[r["seed"]], f"repeat run {r['seed']}")
                   for r, o in zip(res["runs"], outs["runs"]) if o is not first[r["seed"]]]
        self.judge_outputs(items, repeats)
        if any(compare.downgraded(o.get("gold"), self.tensors["seeds"][r["seed"]]["canon"].get("gold"),
                                  _gold_mask(self.tensors["seeds"][r["seed"]]["mask"]))
               for r, o in zip(res["runs"], outs["runs"]) if isinstance(o, dict)):
            self.flags.add("precision_downgrade")
        self.perf_part(res.get("perf"), outs.get("perf") or {})

    def check_probe(self, seed_profile, r):
        ref, cand = seed_profile.get("probe"), r.get("probe")
        if not ref or ref.get("error") or not cand:
            return
        if cand.get("error"):
            raise Verdict("exec", "runtime", f"seed {r['seed']}: called again with its inputs "
                          f"changed in place, the candidate failed: {cand['error']}")
        self.check_outside(cand, f"seed {r['seed']}: called again with its inputs changed in place, it")
        if (cand.get("launches") or 0) == 0 and (ref.get("launches") or 0) > 0:
            raise Verdict("exec", "cheat", f"seed {r['seed']}: called again with its inputs "
                          "changed in place, the candidate launched none of its kernels")

    def perf_part(self, perf, outs):
        if not perf:
            return
        cases = {c[proto.CASE_KEY]: c for c in self.profile.get(proto.PROF_CASES) or []}
        if perf.get("error") and not self.profile.get(proto.PROF_PERF_ERROR):
            err = perf["error"]
            raise Verdict("perf", err.get("kind", "runtime"), err.get("message"),
                          traceback=err.get("traceback"))
        for case in perf.get("cases") or []:
            ref = cases.get(case["key"])
            if ref is None or not ref.get(proto.CASE_OK):
                continue
            what = f"performance case {case['key']}"
            if not case.get("ok"):
                err = case.get("error") or {}
                raise Verdict("perf", err.get("kind", "runtime"), f"{what}: {err.get('message')}",
                              traceback=err.get("traceback"))
            if case.get("launches", 0) < 1:
                raise Verdict("perf", "cheat", f"no Triton kernel of the candidate launched on {what}")
            if set(case.get("notes") or []) & {"tensor_subclass", "foreign_object"}:
                raise Verdict("perf", "cheat", f"{what}: an output is not plain data")
            for c in case.get("calls") or []:
                self.check_outside(c, f"{what}: a call", stage="perf")
            self.judge_case(case["key"], ref, outs.get(case["key"]) or [], what)

    def judge_case(self, key, ref, outs, what):
        """A performance case's outputs (of its checks, or of its timed
        calls) against the reference's, by the one rule."""
        t = self.tensors["cases"][key]
        for o in outs:
            if values.is_opaque(o):
                raise Verdict("perf", "cheat", f"{what}: an output is not a plain tensor")
            _check_inputs_kept(o, t["canon"], what)
        try:
            self.judge_outputs([(o, t["canon"], t["mask"], ref, what) for o in outs])
        except Verdict as v:
            v.stage = "perf"
            raise

    def timed_part(self, cand_dir, nonce):
        res, _ = _read_result(cand_dir, proto.FILE_TIMING, nonce, stage="perf")
        self.timing = res
        if res.get("untouched"):
            raise Verdict("perf", "cheat", "the candidate replaced the timing functions "
                          f"({', '.join(res['untouched'])})")
        self.check_replaced(res, "perf")
        if res.get("error"):
            err = res["error"]
            raise Verdict("perf", err.get("kind", "runtime"), err.get("message"),
                          traceback=err.get("traceback"))
        cases = {c[proto.CASE_KEY]: c for c in self.profile.get(proto.PROF_CASES) or []}
        outs = _load(os.path.join(cand_dir, proto.FILE_TIMED_PT))
        for case in res.get(proto.TIMING_CASES) or []:
            key = case[proto.CASE_KEY]
            ref = cases.get(key)
            what = f"performance case {key}, timed call"
            if case.get("launches", 0) < 1:
                raise Verdict("perf", "cheat", f"no Triton kernel of the candidate launched on {what}")
            timed, calls = case.get("timed_launches"), case.get("reps") or 0
            if isinstance(timed, int) and timed < calls:
                raise Verdict("perf", "cheat", f"{what}s: {calls} timed calls launched {timed} of "
                              "the candidate's kernels; a call that launches none returns what "
                              "it did not compute")
            if case.get("hidden_work"):
                raise Verdict("perf", "cheat", f"{what}: the candidate did work that the timer's "
                              "events did not see (on another stream, or a thread), where the "
                              "reference did not")
            if not _confirmed(case):
                self.flags.add("unconfirmed_speedup")
            if ref is None or not ref.get(proto.CASE_OK):
                continue
            self.judge_case(key, ref, outs.get(key) or [], what)


# A large speedup timed again (timing.RECHECK_SPEEDUP) stands where the
# second timing's speedup is at least this fraction of the first's: more
# than two timings of one kernel differ by noise, less than the gap that
# a call keyed on its inputs, or on the order of the calls, makes.
RECHECK_AGREE = 0.5


def _check_inputs_kept(out, canon, what):
    """A performance case's call may change only the inputs that the
    reference's calls change: any other write lands outside the outputs
    (past an output's end, or into an input), whichever tensor the
    allocator put there."""
    if not isinstance(out, dict) or not isinstance(canon, dict):
        return
    extra = sorted(set(out.get("args") or {}) - set(canon.get("args") or {}), key=str)
    if extra:
        raise Verdict("perf", "mismatch", f"{what}: the call changed its argument {extra[0]} "
                      "in place; the reference's calls do not")


def _confirmed(case):
    """Whether a case's speedup, where it was timed again, held."""
    again = case.get("recheck")
    if not isinstance(again, dict):
        return True
    try:
        first = float(case[proto.CASE_MS_REF]) / float(case[proto.CASE_MS])
        second = float(again[proto.CASE_MS_REF]) / float(again[proto.CASE_MS])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return False
    return second >= RECHECK_AGREE * first


# Floating-point elements a call may move between the host and the
# device, each way, beyond what the reference's calls move: a few scalars
# for a kernel's arguments (a scale's .item()), never a tensor's data.
HOST_FLOATS = 16


def _gold_mask(mask):
    """The part of a run's mask that covers its test's outputs."""
    return mask.get("gold") if isinstance(mask, dict) else None


def _names(calls):
    return ", ".join(c.get("name") or "?" for c in calls[:6]) + (", ..." if len(calls) > 6 else "")


def _at(xs, i):
    return xs[i] if isinstance(xs, list) and i < len(xs) else None


def verdict(req):
    spec = req
    out = {proto.VERDICT_CALL: False, proto.VERDICT_EXEC: False, proto.VERDICT_STAGE: "call",
           proto.VERDICT_REASON: None, proto.VERDICT_MESSAGE: None, proto.VERDICT_FLAGS: [],
           proto.VERDICT_NOTES: []}
    try:
        j = Judge(spec)
    except (OSError, ValueError, KeyError, values.Refused) as exc:
        out.update({proto.VERDICT_REASON: "harness",
                    proto.VERDICT_MESSAGE: f"the reference's profile cannot be read: {exc}"})
        return out
    try:
        part = spec[proto.REQ_PART]
        if part == proto.PART_TIMED:
            out[proto.VERDICT_CALL] = True
            j.timed_part(spec[proto.REQ_CAND], spec[proto.REQ_CAND_NONCE])
        elif part == proto.PART_RUN:
            j.run_part(spec[proto.REQ_CAND], spec[proto.REQ_CAND_NONCE])
        else:
            raise proto.ProtocolError(f"the judge request's {proto.REQ_PART!r} is {part!r}")
        out.update({proto.VERDICT_CALL: True, proto.VERDICT_EXEC: True, proto.VERDICT_STAGE: "done"})
    except Verdict as v:
        out.update({proto.VERDICT_CALL: v.call, proto.VERDICT_EXEC: False, proto.VERDICT_STAGE: v.stage,
                    proto.VERDICT_REASON: v.reason, proto.VERDICT_MESSAGE: v.message})
        if v.traceback:
            out[proto.VERDICT_TRACEBACK] = v.traceback
    out[proto.VERDICT_FLAGS] = sorted(j.flags)
    out[proto.VERDICT_NOTES] = sorted(j.notes)
    if getattr(j, "runs", None) is not None:
        out[proto.VERDICT_RUNS] = j.runs
    return out


def main(req, workdir):
    res = verdict(req)
    res[proto.NONCE] = req[proto.REQ_NONCE]
    tmp = os.path.join(workdir, proto.FILE_VERDICT + ".tmp")
    with open(tmp, "w") as fp:
        json.dump(res, fp)
    os.replace(tmp, os.path.join(workdir, proto.FILE_VERDICT))
