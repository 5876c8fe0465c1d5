"""Calibration: the reference run as often and in as many ways as it takes
to know it, once per task, device and harness version.

The reference runs, as a candidate would (run.py), in several processes
forked from this one, which itself never touches the device:

  A  every seed, the first twice (as a candidate runs), and each
     performance case once and once more with poisoned guard zones after
     its inputs;
  B  another process (memory a process reads but never wrote holds the
     same garbage for all its runs), every autotuner on each of its
     configurations in turn, up to CONFIG_SWEEP (outputs that depend on
     the tuning differ): whatever configuration a candidate's search
     picks, the elements that depend on it are known;
  R  the cases on which two runs disagree (racing writes, or another
     configuration's outputs), and every seed where one does, half of
     RESAMPLES times more (fewer where their outputs, R's and P's, would
     pass R_BYTES): two runs show only part of what races.  R runs under
     A's autotuner choices (searched once, in A) for every tuner whose
     configurations B ran all of, and in two rounds: R_FIRST runs of each, then, in
     R2, the rest only where R's runs disagreed with the first outputs
     at an element where no earlier run did (the mask still grows); a
     mask that R's runs left as it was is taken as whole (see saturated);
  P  the same runs again, and every other seed and case twice,
     perturbed and with each kernel's programs in another order (see
     perturb): a race decided alike under one process's conditions, or by
     the order in which programs start, can go the other way under a
     candidate's.

Before B, R, R2 and P start, the device must have free, as measured
(NVML, see free_mib), what A's process held at most with room
(need_mib), waiting MEM_WAIT_S at most: runs of heavy references beside
one another would otherwise fill it and fail where they are alone fine.
A itself, whose need is not known yet, is admitted by geak-eval's
reservations.

Each process's seconds (steps): its wall time, the memory wait before
it, and of its own record the tests, the performance checks, the
autotuner searches and the kernels compiled or loaded from the compile
cache (both within tests and checks), saving its outputs; loading them
here, and comparing (take); then the choice of what to resample
(racing) and the profile made from all of them (profile).

A run that fails on poisoned memory makes every run go without the poison;
one whose first run passes and a later one fails makes every run go to a
process of its own ("one_call").  Runs of B, R and P that fail are left out.

The profile (profile.json, profile.pt, masks.pt) holds the run mode, the first run's
outputs per seed and case as the canonical ones, a mask per output of the
elements where any two runs disagree and the most elements at which two
runs differ (the spread), which arguments each call changes and which
outputs the reference's own kernels write, which performance cases fail
for it and their bytes and operations, and the plan a candidate runs by.
A reference that cannot be calibrated leaves profile.json with its error.
masks.pt holds the masks alone, and profile.json the sums of the canonical
outputs outside them ("canon_sums"): a profile exported without its
outputs gets them back from one more run of the reference (regen.py).
"""
import ctypes
import json
import math
import os
import signal
import time
import traceback

import torch

from . import compare, guard, proto, pyprof, regen, values
from .errors import error_info

# This process compares outputs between the runs it forks.  A torch that
# has started its CPU thread pool cannot fork safely (the children wait
# for locks held by threads they do not have), so it compares on one
# thread and gives the runs what the job was given.
THREADS = torch.get_num_threads()

CONFIG_SWEEP = 8
RESAMPLES = 12
# R's first round: this many runs of each racing seed and case; the rest
# of the resampling (R2) only where they added elements to the mask.
R_FIRST = 3
# What a run process may wait for the device's memory to be free.
MEM_WAIT_S = 120
# What one resampling may keep of outputs: the process that makes them
# and this one that compares them each hold them all.
R_BYTES = 2 << 30
PERF_CHECKS = 1
# P's bound: a minute, and this many times what A (its compiles and
# searches) and R (its runs) took.
P_SECONDS = 60
P_SLACK = 2


class Failed(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def _run_process(d, name, spec, plan, budget, step=None):
    """One run of the reference in a forked process, in d/name: (result,
    outputs), or (None, why) when it ended without a result; step (a
    dict) gets the seconds until it ended (run) and of reading its
    outputs here (load)."""
    from . import run
    sub = os.path.join(d, name)
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, proto.FILE_JOB), "w") as fp:
        json.dump(spec, fp)
    nonce = os.urandom(16).hex()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            guard.die_with_parent()
            torch.set_num_threads(THREADS)
            os.chdir(sub)
            run.main(sub, nonce, {proto.REQ_PLAN: plan}, {"progress": lambda: None, "ready": lambda: False})
            code = 0
            pyprof.dump(d, f"calibration run {name}", f"pyprofile-{name}")
        except BaseException as exc:  # noqa: B902
            traceback.print_exc()
            with open(os.path.join(sub, "failed.json"), "w") as fp:
                json.dump(error_info(exc), fp)
        finally:
            os._exit(code)
    step = {} if step is None else step
    t0 = time.monotonic()
    status = _wait(pid, budget)
    step["run"] = round(time.monotonic() - t0, 3)
    if status is None:
        return None, {"kind": "timeout", "message": "a calibration run of the reference ran past "
                      f"{budget:.0f} s (see --timeout)"}
    try:
        with open(os.path.join(sub, proto.FILE_RESULT)) as fp:
            res = json.load(fp)
        if res.get(proto.NONCE) != nonce:
            raise ValueError("not this run's result")
        t0 = time.monotonic()
        outs = values.load(os.path.join(sub, proto.FILE_OUTPUTS_PT))
        step["load"] = round(time.monotonic() - t0, 3)
        # Read once; where the run folder lies in memory (a tmpfs), the
        # file would count against the job's memory as long as it stays.
        os.remove(os.path.join(sub, proto.FILE_OUTPUTS_PT))
    except (OSError, ValueError, values.Refused) as exc:
        try:
            with open(os.path.join(sub, "failed.json")) as fp:
                err = json.load(fp)
            return None, {"kind": err["kind"], "message": "a calibration run of the reference "
                          f"failed: {err['message']}"}
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None, {"kind": "crash", "message": "a calibration run of the reference ended "
                      f"(status {_status(status)}) without its result ({str(exc)[:200]})"}
    return res, outs


def _status(st):
    return f"signal {os.WTERMSIG(st)}" if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)


def _wait(pid, budget):
    """The child's wait status, or None once it has run budget seconds;
    time while this process was stopped (geak-eval pauses correctness
    runs while it times) does not count."""
    used, last = 0.0, time.monotonic()
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            return st
        now = time.monotonic()
        used += min(now - last, 0.5)
        last = now
        if used > budget:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return None
        time.sleep(0.05)


def _failed(res):
    """The first failed run's error, or None."""
    for r in res["runs"]:
        if not r.get("ok"):
            return r.get("error") or {"kind": "runtime", "message": "a run failed"}
    return None


# Room for what a process's peak leaves out, as geak-eval reckons it
# (evaljob.c, with_room): a quarter more, and the runtime's context.
CONTEXT_MIB = 1024


def need_mib(peak_mib):
    """The device memory, in MiB, a run process of a reference whose
    process held peak_mib at most is expected to take: 0 where unknown."""
    return peak_mib + peak_mib // 4 + CONTEXT_MIB if peak_mib > 0 else 0


class _Nvml:
    """The free memory of this job's GPU, from NVML (which needs no
    device context, so this process, which forks, may ask); None where
    there is no NVML or no NVIDIA device named."""

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                    ("used", ctypes.c_ulonglong)]

    def __init__(self):
        self.lib = self.handle = None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return
            handle = ctypes.c_void_p()
            which = _visible_device()
            if which is None:
                return
            if which.startswith("GPU-") or which.startswith("MIG-"):
                rc = lib.nvmlDeviceGetHandleByUUID(which.encode(), ctypes.byref(handle))
            else:
                rc = lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(int(which)), ctypes.byref(handle))
            if rc == 0:
                self.lib, self.handle = lib, handle
        except (OSError, AttributeError, ValueError):
            pass

    def free_total_mib(self):
        if self.lib is None:
            return None
        mem = self.Memory()
        if self.lib.nvmlDeviceGetMemoryInfo(self.handle, ctypes.byref(mem)) != 0:
            return None
        return mem.free >> 20, mem.total >> 20


def _visible_device():
    """The device this job runs on as NVML names it: the first entry of
    CUDA_VISIBLE_DEVICES (a UUID, or an index, which NVML takes as the
    physical one: geak-eval sets what it discovered), "0" where unset,
    None where it hides every device or the device is not NVIDIA's."""
    if os.environ.get("ROCR_VISIBLE_DEVICES") is not None or torch.version.hip:
        return None
    got = os.environ.get("CUDA_VISIBLE_DEVICES")
    if got is None:
        return "0"
    first = got.split(",")[0].strip()
    return first if first and (first.isdigit() or first.startswith(("GPU-", "MIG-"))) else None


_NVML = []


def free_mib():
    """(free, total) MiB of this job's GPU now, or None where not known."""
    if not _NVML:
        _NVML.append(_Nvml())
    return _NVML[0].free_total_mib()


def wait_for_memory(need, limit=MEM_WAIT_S, poll=0.5, probe=None):
    """Wait, up to limit seconds, until the device has need MiB free as
    measured (probe: free_mib); the seconds waited.  Nothing is waited
    where the need is not known, the memory cannot be measured, or the
    device could never hold it."""
    probe = probe or free_mib
    t0 = time.monotonic()
    while need > 0:
        got = probe()
        if got is None or got[0] >= need or need > got[1] or time.monotonic() - t0 >= limit:
            break
        time.sleep(poll)
    return round(time.monotonic() - t0, 3)


class Calibration:
    def __init__(self, spec, d, budget, perf):
        self.spec, self.dir, self.budget = spec, d, budget
        self.seeds = list(spec.get(proto.JOB_SEEDS) or [42])
        if spec.get(proto.JOB_SUITE) == "rocm":  # the file seeds itself
            self.seeds = self.seeds[:1]
        self.poison, self.one_call = True, False
        self.has_perf = perf and (bool(spec.get(proto.JOB_PERF)) or
                                  spec.get(proto.JOB_SUITE) in ("rocm", "kernelbench"))
        self.runs = []     # (seed, run record, outputs) of every run that passed
        self.cases = {}    # key -> [outputs] of every check that passed
        self.by_process = {}  # ("seed", seed) or ("case", key) -> {process: [outputs]}
        self.case_info = {}
        self.first = None  # A's result
        self.spent = {}    # seconds of each process, by name
        self.steps = {}    # where those went, by process and step (see the module's docstring)
        self.gpu_mib = 0   # the most device memory one run's process held
        self.masks = {}    # (id(canon), id(other)) -> compare.unstable of the two

    def plan(self, runs, perf_checks=0, guard_poison=False, autotune=None):
        # Probes keep every argument, so that where one run's probe changes
        # an argument and another's does not, the masks show it.
        p = {proto.PLAN_RUNS: runs, proto.PLAN_POISON: self.poison, proto.PLAN_ONE_CALL: self.one_call,
             proto.PLAN_PROBE_INPUTS: True}
        if autotune is not None:
            p[proto.PLAN_AUTOTUNE] = autotune
        if autotune == ["pin", 0]:  # A's choices, searched once
            p[proto.PLAN_PINS] = self.first.get("tunings") or []
        if perf_checks and self.has_perf:
            p[proto.PLAN_PERF] = {proto.PLAN_CHECKS: perf_checks, proto.PLAN_GUARD_POISON: guard_poison}
        return p

    def sweep_plan(self, sweep):
        """B: another process; where autotuners have more than one
        configuration, its first seed once under each configuration k of
        every tuner (k = 0 .. sweep-1: whichever A's search chose, each of
        the others runs), the other seeds under configuration 1, and each
        case once per k."""
        if sweep < 2:
            return self.plan(self.seeds, 1)
        ks = list(range(sweep))
        p = self.plan([self.seeds[0]] * len(ks) + self.seeds[1:], len(ks))
        p[proto.PLAN_FORCE] = ks + [1] * (len(self.seeds) - 1)
        p[proto.PLAN_KEEP_GOING] = True
        if proto.PLAN_PERF in p:
            p[proto.PLAN_PERF][proto.PLAN_FORCE] = ks
        return p

    def budget_for(self, plan):
        calls = len(plan[proto.PLAN_RUNS]) + (plan.get(proto.PLAN_PERF) or {}).get(proto.PLAN_CHECKS, 0) * 2
        return self.budget * max(1.0, calls / 4)

    def process(self, name, plan, budget=None):
        self.last = name
        step = self.steps.setdefault(name, {})
        if self.gpu_mib and not self.spec.get(proto.JOB_CPU):
            step["mem_wait"] = wait_for_memory(need_mib(self.gpu_mib))
        step[proto.STEP_RUNS] = len(plan[proto.PLAN_RUNS])
        step["checks"] = (plan.get(proto.PLAN_PERF) or {}).get(proto.PLAN_CHECKS, 0)
        t0 = time.monotonic()
        got = _run_process(self.dir, name, self.spec, plan, budget or self.budget_for(plan), step)
        self.spent[name] = step[proto.STEP_WALL] = round(time.monotonic() - t0, 3)
        spent = (got[0] or {}).get("spent") or {}
        for k in ("tests", "perf_checks", "search", "compile", "compiles", "save"):
            if isinstance(spent.get(k), (int, float)):
                step[k] = spent[k]
        return got

    def first_runs(self):
        """A, with the run mode found: the ladder of modes while its runs
        fail."""
        s0 = self.seeds[0]
        runs = [s0, s0] + self.seeds[1:]
        while True:
            plan = self.plan(runs, PERF_CHECKS, guard_poison=True)
            res, outs = self.process(f"A{int(self.poison)}{int(self.one_call)}", plan)
            if res is None:
                raise Failed(outs["kind"], outs["message"])
            err = _failed(res)
            if err is None:
                return res, outs
            later = res["runs"][0].get("ok") and len(res["runs"]) > 1
            if later and not self.one_call and self.spec.get(proto.JOB_SUITE) != "rocm":
                self.one_call = True
                continue
            if self.poison:
                self.poison, self.one_call = False, False
                continue
            raise Failed("reference", "the reference itself fails: " + str(err.get("message")))

    def take(self, res, outs, name):
        """The passing runs and checks of process name, kept."""
        if res is None:
            return
        t0 = time.monotonic()
        try:
            self._take(res, outs, name)
        finally:
            step = self.steps.setdefault(self.last, {})
            step["take"] = round(step.get("take", 0) + time.monotonic() - t0, 3)

    def _take(self, res, outs, name):
        self.gpu_mib = max(self.gpu_mib, int(res.get("gpu_peak_mib") or 0))
        self.take_outside(res)
        for r, o in zip(res["runs"], outs["runs"]):
            if r.get("ok") and o is not None:
                self.runs.append((r["seed"], r, o))
                self._by(("seed", r["seed"]), name).append(o)
        for case in (res.get("perf") or {}).get("cases") or []:
            got = outs["perf"].get(case["key"]) or []
            if case.get("ok"):
                self.cases.setdefault(case["key"], []).extend(got)
                self._by(("case", case["key"]), name).extend(got)
            elif case["key"] not in self.case_info:
                self.case_info[case["key"]] = {"ok": False, "error": case.get("error")}

    def take_outside(self, res):
        """What the reference's calls ran outside its kernels (outside.py),
        gathered over every call: a candidate may do as much."""
        got = getattr(self, "outside", None) or {"ops": set(), "to_host": 0, "from_host": 0}
        calls = []
        for r in res.get("runs") or []:
            calls += (r.get("calls") or []) + ([r["probe"]] if isinstance(r.get("probe"), dict) else [])
        for case in (res.get("perf") or {}).get("cases") or []:
            calls += case.get("calls") or []
        for c in calls:
            o = c.get("outside") if isinstance(c, dict) else None
            if isinstance(o, dict):
                got["ops"].update(o.get("ops") or [])
                got["to_host"] = max(got["to_host"], int(o.get("to_host") or 0))
                got["from_host"] = max(got["from_host"], int(o.get("from_host") or 0))
        self.outside = got

    def _by(self, what, name):
        return self.by_process.setdefault(what, {}).setdefault(name, [])

    def run(self):
        res, outs = self.first_runs()
        self.first = res
        self.guard_runs = {}
        for case in (res.get("perf") or {}).get("cases") or []:
            got = outs["perf"].get(case["key"]) or []
            if case.get("ok") and len(got) == PERF_CHECKS + 1:
                self.guard_runs[case["key"]] = got.pop()  # the poisoned guard zones' run
            self.case_info[case["key"]] = {"ok": bool(case.get("ok")), "error": case.get("error"),
                                           "counts": case.get("counts") or {},
                                           "dtype": case.get("dtype"), "bytes": case.get("bytes"),
                                           "launches": case.get("launches", 0),
                                           "device_lost": case.get("device_lost", False)}
        self.take(res, outs, "A")
        self.perf_error = (res.get("perf") or {}).get("error")
        sweep = min(max((res.get("tuner_configs") or {}).values(), default=1), CONFIG_SWEEP)
        got = self.process("B", self.sweep_plan(sweep))
        if got[0] is None or not any(r.get("ok") for r in got[0]["runs"]):
            got = self.process("B0", self.plan(self.seeds, 1))
        self.take(*got, "B")
        # A reference run a process per call is not resampled: every
        # further run would be another process.
        t0 = time.monotonic()
        seeds, cases = ([], set()) if self.one_call else self.racing()
        self.steps["racing"] = round(time.monotonic() - t0, 3)
        if seeds or cases:
            n = max(2, self.resamples(seeds, cases) // 2)
            first = min(n, R_FIRST)
            before = self.item_masks(seeds, cases)
            self.resample("R", seeds, cases, first)
            if n > first and not self.saturated(seeds, cases, before):
                self.resample("R2", seeds, cases, n - first)
            self.perturbed(seeds, cases, n)

    def resample(self, name, seeds, cases, n):
        """The racing seeds and cases n times more, in one process, under
        A's autotuner choices where B ran every configuration of the
        tuner; a tuner of more than CONFIG_SWEEP searches again, as before,
        so that a configuration past B's sweep can still show here."""
        plan = self.plan([s for s in seeds for _ in range(n)], n if cases else 0, autotune=["pin", 0])
        counts = self.first.get("tuner_configs") or {}
        plan[proto.PLAN_PINS] = [c for c in plan[proto.PLAN_PINS] if isinstance(c, list) and c
                                 and counts.get(c[0], 1) <= CONFIG_SWEEP]
        if proto.PLAN_PERF in plan:
            plan[proto.PLAN_PERF][proto.PLAN_SKIP] = sorted(k for k in self.case_info if k not in cases)
        got = self.process(name, plan)
        self.take(*got, name)

    def canon(self, what):
        """The first output of a seed or a case (A's first run of it)."""
        kind, key = what
        if kind == "seed":
            return next((o for s, _, o in self.runs if s == key), None)
        return (self.cases.get(key) or [None])[0]

    def unstable(self, canon, other):
        """compare.unstable of the two, computed once per pair."""
        key = (id(canon), id(other))
        if key not in self.masks:  # the pair is held too: ids stay theirs
            rtol, atol = compare.tolerance(self.spec)
            self.masks[key] = (canon, other, compare.unstable(canon, other, rtol, atol))
        return self.masks[key][2]

    def item_masks(self, seeds, cases, only=None):
        """Per racing seed and case, the union of where each run (of the
        processes named only, or of all) disagrees with its first output."""
        out = {}
        for what in [("seed", s) for s in seeds] + [("case", k) for k in cases]:
            canon = self.canon(what)
            got = [o for name, outs in self.by_process.get(what, {}).items()
                   if only is None or name == only for o in outs if o is not canon]
            out[what] = compare.union(*[self.unstable(canon, o) for o in got])
        return out

    def saturated(self, seeds, cases, before):
        """Whether R's runs left every racing seed's and case's mask as the
        runs before them made it: no element at which an R run disagrees
        with the first outputs that no earlier run disagreed at.  The rule
        that stops the resampling there: a race that R_FIRST more runs of
        one process did not widen is taken as seen whole; P still runs it
        as often as before under its own conditions."""
        new = self.item_masks(seeds, cases, only="R")
        for what, mask in new.items():
            old = before.get(what)
            if compare.count(compare.union(old, mask)) > compare.count(old):
                return False
        return True

    def perturbed(self, seeds, cases, n):
        """P: the racing seeds and cases n times more, and, since a
        reference that races somewhere may race unseen elsewhere, every
        other seed and passing case twice, all with the programs in
        another order (see perturb.Order: each launch in the other order
        from the last, a small one a program at a time) and under the
        autotuner choices of A (each kernel compiled once more, not
        searched again).  A kernel whose programs wait on one another can
        hang out of order: P is bounded by A's and R's time, and left out
        where it fails."""
        runs = [s for s in self.seeds for _ in range(n if s in seeds else 2)]
        plan = self.plan(runs, 2, autotune=["pin", 0])
        plan.update({proto.PLAN_PERTURB: 1 + len(self.runs), proto.PLAN_ORDER: True,
                     proto.PLAN_PINS: self.first.get("tunings") or []})
        if proto.PLAN_PERF in plan:
            plan[proto.PLAN_PERF][proto.PLAN_SKIP] = sorted(k for k, c in self.case_info.items()
                                                            if not c.get("ok"))
            plan[proto.PLAN_PERF][proto.PLAN_MORE] = {k: n - 2 for k in cases}
        first = sum(v for k, v in self.spent.items() if k.startswith("A"))
        resampled = sum(v for k, v in self.spent.items() if k.startswith("R"))
        budget = min(self.budget_for(plan), P_SECONDS + P_SLACK * (first + resampled))
        self.take(*self.process("P", plan, budget), "P")

    def racing(self):
        """The seeds and the cases on which two runs so far disagree, of
        any process and configuration: a difference that another
        configuration makes can hide a race behind it.  A runs only the
        first seed twice: where one seed differs, every seed is resampled."""
        def differs(what):
            outs = [o for got in self.by_process.get(what, {}).values() for o in got]
            return any(self.unstable(outs[0], o) is not None for o in outs[1:])
        seeds = self.seeds if any(differs(("seed", s)) for s in self.seeds) else []
        return seeds, {k for k in self.cases if differs(("case", k))}

    def resamples(self, seeds, cases):
        """How many times R and P together run each racing seed and case:
        RESAMPLES, or as many as keep their outputs within R_BYTES, two at
        least."""
        one = sum(values.nbytes(next(o for sd, _, o in self.runs if sd == s)) for s in seeds)
        one += sum(values.nbytes(self.cases[k][0]) for k in cases)
        return max(2, min(RESAMPLES, R_BYTES // max(1, one)))


def _profile(cal):
    """The profile's JSON part and its tensors."""
    rtol, atol = compare.tolerance(cal.spec)
    first = cal.first
    canon_runs = {}
    for seed, rec, o in cal.runs:
        canon_runs.setdefault(seed, (rec, o))
    seeds = []
    tensors = {"seeds": {}, "cases": {}}
    for seed in cal.seeds:
        rec, canon = canon_runs[seed]
        others = [o for s, r, o in cal.runs if s == seed and o is not canon]
        masks = [cal.unstable(canon, o) for o in others]
        mask = compare.union(*masks)
        spread = max((compare.count(m) for m in masks), default=0)
        changed = {}
        written = {}
        for s, r, _ in cal.runs:
            if s != seed:
                continue
            for i, c in enumerate(r.get("calls") or []):
                changed.setdefault(i, set()).update(c.get("changed") or [])
        for i, c in enumerate(rec.get("calls") or []):
            written[i] = {"ret": c.get("ret_written"), "args": c.get("args_written"),
                          "launches": c.get("launches"), "name": c.get("name"),
                          "side_stream": c.get("side_stream")}
        seeds.append({"seed": seed, "spread": spread, "runs": 1 + len(others),
                      "fixed_races": _fixed_races(canon, cal.by_process.get(("seed", seed)), rtol, atol),
                      "launches": rec.get("launches", 0),
                      "calls": [{**written[i], "changed": sorted(changed.get(i, ()))}
                                for i in sorted(written)],
                      "probe": rec.get("probe")})
        tensors["seeds"][seed] = {"canon": canon, "mask": mask}
    cases = []
    has_kernels = any(s["launches"] > 0 for s in seeds)
    for key, info in cal.case_info.items():
        outs = cal.cases.get(key) or []
        entry = {proto.CASE_KEY: key, proto.CASE_OK: bool(info.get("ok")) and bool(outs),
                 proto.CASE_COUNTS: info.get("counts") or {}, proto.CASE_DTYPE: info.get("dtype"),
                 proto.CASE_BYTES: info.get("bytes"), "launches": info.get("launches", 0)}
        if not entry[proto.CASE_OK]:
            entry["error"] = (info.get("error") or {}).get("message") or "no output"
            cases.append(entry)
            continue
        if has_kernels and not entry["launches"]:
            # A case that runs none of the reference's own kernels times
            # something else (a torch path, a kernel of the perf script).
            entry[proto.CASE_OK] = False
            entry["error"] = "no kernel of the reference's own code launched in this case"
            cases.append(entry)
            continue
        canon = outs[0]
        masks = [cal.unstable(canon, o) for o in outs[1:]]
        spread = max((compare.count(m) for m in masks), default=0)
        poisoned = cal.guard_runs.get(key)
        if poisoned is not None:
            # Where the run with poisoned guard zones disagrees, or left NaN,
            # the reference's outputs depend on what lies past its inputs.
            masks += [compare.unstable(canon, poisoned, rtol, atol), compare.nan_where(poisoned)]
        entry["spread"] = spread
        entry["fixed_races"] = _fixed_races(canon, cal.by_process.get(("case", key)), rtol, atol)
        entry["checks"] = len(outs)
        cases.append(entry)
        tensors["cases"][key] = {"canon": canon, "mask": compare.union(*masks)}
    expect = {}
    for s in seeds:
        for i, c in enumerate(s["calls"]):
            expect.setdefault(i, set()).update(c["changed"])
    # What the reference's probe changed is expected of the call it
    # repeats: a change that only the changed inputs bring on, some of
    # the time, would otherwise leave a candidate's probe without an
    # argument that the canonical probe has.
    for _, rec, _ in cal.runs:
        probe = rec.get("probe") or {}
        if isinstance(probe.get("repeats"), int):
            expect.setdefault(probe["repeats"], set()).update(probe.get("changed") or [])
    # The probes kept every argument; a candidate's keeps those expected.
    for s in seeds:
        repeats = (s.get("probe") or {}).get("repeats")
        kept = expect.get(repeats, set()) if isinstance(repeats, int) else set()
        for part in ("canon", "mask"):
            _probe_args_only(tensors["seeds"][s["seed"]][part], kept)
    # A seed under which the reference's outputs are those of the first
    # (a test that seeds itself) would only run the first again: the
    # candidate runs the first twice, for the repeat, and the seeds that
    # change something.
    s0 = cal.seeds[0]
    others = [s for s in cal.seeds[1:] if not _same(tensors["seeds"][s]["canon"],
                                                   tensors["seeds"][s0]["canon"])]
    if cal.spec.get(proto.JOB_SUITE) == "rocm" and others:
        runs = [s0] + others
    else:
        runs = [s0, s0] + others
    plan = {proto.PLAN_RUNS: runs, proto.PLAN_POISON: cal.poison, proto.PLAN_ONE_CALL: cal.one_call,
            proto.PLAN_EXPECT: {str(i): sorted(v) for i, v in expect.items()}}
    if cal.has_perf and any(c[proto.CASE_OK] for c in cases) and not cal.perf_error:
        plan[proto.PLAN_PERF] = {proto.PLAN_CHECKS: 1,
                                 proto.PLAN_SKIP: [c[proto.CASE_KEY] for c in cases if not c[proto.CASE_OK]],
                                 proto.PLAN_MORE: {c[proto.CASE_KEY]: 2 for c in cases if c.get("spread")}}
    canon_sums = {part: {str(k): regen.fingerprint(t["canon"], t["mask"]) for k, t in tensors[part].items()}
                  for part in ("seeds", "cases")}
    profile = {
        proto.PROF_OK: True, proto.PROF_SUITE: cal.spec.get(proto.JOB_SUITE), proto.PROF_POISON: cal.poison,
        proto.PROF_ONE_CALL: cal.one_call, proto.PROF_SEEDS: seeds,
        proto.PROF_CASES: cases, proto.PROF_PERF_ERROR: (cal.perf_error or {}).get("message"),
        "has_kernels": has_kernels,
        "launched": first.get("launched") or [], proto.PROF_TUNINGS: first.get("tunings") or [],
        "notes": first.get("notes") or [], proto.PROF_CANDIDATE_PLAN: plan,
        proto.PROF_TOLERANCE: [rtol, atol], "spent": cal.spent, proto.PROF_GPU_MIB: cal.gpu_mib,
        "outside": _outside_json(cal, has_kernels),
        "allow_torch_ops": bool(cal.spec.get(proto.JOB_ALLOW_TORCH_OPS)),
        "replaced": first.get("replaced") or [],
        proto.PROF_CANON_SUMS: canon_sums,
    }
    return profile, tensors


def _outside_json(cal, has_kernels):
    """What a candidate's calls may do outside its kernels because the
    reference does (outside.py): its operations only where it has
    kernels of its own (a reference in plain torch is all arithmetic
    outside kernels, none of it glue)."""
    got = getattr(cal, "outside", None) or {"ops": set(), "to_host": 0, "from_host": 0}
    return {"ops": sorted(got["ops"]) if has_kernels else [],
            "to_host": got["to_host"] if has_kernels else 0,
            "from_host": got["from_host"] if has_kernels else 0}


def _probe_args_only(out, kept):
    """out's (a run's outputs, or their mask) probe arguments cut to those
    at the positions kept, in place."""
    probe = out.get("probe") if isinstance(out, dict) else None
    if isinstance(probe, dict) and isinstance(probe.get("args"), dict):
        probe["args"] = {k: v for k, v in probe["args"].items() if k in kept}


def _fixed_races(canon, by_process, rtol, atol):
    """Whether the reference's races are decided alike within a process
    (reads of memory it never wrote return that process's own garbage):
    the resampled runs (R, one process, the runs plain repeats) all differ
    from the canonical outputs at elements where the first of them also
    differs from every run (two at least) of the other processes, and
    those elements are at least half of what any of them differs at (races
    decided anew on every run share an element by chance, not half of
    them), and the resampled runs agree with one another at no fewer than
    half of those elements (a race decided anew among many values differs
    from the canonical outputs at the same element on every run, but
    between any two runs as well).  A candidate's outputs, all made in one
    process, may then all differ at an element that no run of the
    reference showed."""
    procs = by_process or {}
    resampled = [o for o in procs.get("R") or [] if o is not canon]
    # P's runs are made under conditions of their own, the point of them.
    others = [o for name, outs in procs.items() if name not in ("R", "P")
              for o in outs if o is not canon]
    # One other run can agree with the canonical outputs' own lost race
    # by chance; two rarely do.
    if len(resampled) < 2 or len(others) < 2:
        return False
    common, most = None, 0
    for i, o in enumerate(resampled):
        where = compare.unstable(canon, o, rtol, atol)
        most = max(most, compare.count(where))
        common = where if i == 0 else compare.intersection(common, where)
        if common is None:
            return False
    for o in others:
        common = compare.intersection(common, compare.unstable(o, resampled[0], rtol, atol))
        if common is None:
            return False
    n = compare.count(common)
    for o in resampled[1:]:
        if 2 * compare.count(compare.intersection(common, compare.unstable(o, resampled[0], rtol, atol))) > n:
            return False
    return 2 * n >= most


def _same(a, b):
    """Two outputs of the reference hold the same values, exactly."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return values.equal(a, b)
    if values.is_sample(a) and values.is_sample(b):
        return all(_same(a.get(k), b.get(k)) for k in set(a) | set(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def main(d, nonce, req, hooks):
    with open(os.path.join(d, proto.FILE_JOB)) as fp:
        spec = json.load(fp)
    hooks["progress"]()
    torch.set_num_threads(1)
    budget = float(proto.need(req, proto.REQ_RUN_BUDGET, "the calibrate request"))
    compare.configure(spec)
    cal = Calibration(spec, d, budget, bool(proto.need(req, proto.REQ_PERF, "the calibrate request")))
    t0 = time.monotonic()
    try:
        cal.run()
        # No process is forked after the runs: the comparisons may use
        # the threads the job was given.
        torch.set_num_threads(THREADS)
        t1 = time.monotonic()
        profile, tensors = _profile(cal)
        cal.steps["profile"] = round(time.monotonic() - t1, 3)
        cal.steps["total"] = round(time.monotonic() - t0, 3)
        profile[proto.PROF_STEPS] = cal.steps
    except Failed as exc:
        profile, tensors = {proto.PROF_OK: False, proto.PROF_KIND: exc.kind, proto.PROF_ERROR: str(exc)}, None
    profile[proto.NONCE] = nonce
    if tensors is not None:
        torch.save(tensors, os.path.join(d, proto.FILE_PROFILE_PT))
        torch.save(regen.masks_of(tensors), os.path.join(d, proto.FILE_MASKS))
    tmp = os.path.join(d, proto.FILE_PROFILE + ".tmp")
    with open(tmp, "w") as fp:
        json.dump(profile, fp)
    os.replace(tmp, os.path.join(d, proto.FILE_PROFILE))
