"""A run of code under test (a candidate, or the reference being calibrated
or timed): the untrusted side.  Nothing here decides pass or fail.

The job's plan (see geak-harness(7)) says what to do, in this order:

  runs    the task's test once per listed seed, each on poisoned memory
          (unless the plan says otherwise), its entry points watched;
  perf    each performance case called on a fresh copy of its inputs, as
          many times as the plan asks, its outputs kept;
  then    outputs.pt and result.json (with the run's nonce and the digest
          of outputs.pt) are written, and the job says it is ready;
  timing  on geak-eval's go: each case timed, alone on the device, its
          outputs from the first and one later timed call kept
          (timing.json, timed.pt).

With "one_call" each run goes to a process of its own (a reference that
faults on its second call in a process), forked before anything here has
touched the device, and the performance cases and timing to one more.
"""
import hashlib
import json
import os
import random
import resource
import threading
import time
import traceback

import torch

from . import autotune, entry, guard, intact, launches, outside, perturb, proto, sandbox, tasks, timing, values
from .errors import error_info

COUNTER = launches.COUNTER

def device_usable(device):
    """Whether the device still runs work after an error (a kernel's fault
    ends the process's CUDA context)."""
    if device == "cpu":
        return True
    try:
        torch.cuda.synchronize()
        return float(torch.ones(1, device="cuda").add_(1).sum()) == 2.0
    except Exception:  # noqa: BLE001
        return False


def _sync(device):
    if device != "cpu":
        torch.cuda.synchronize()


class Job:
    def __init__(self, spec, plan, workdir, nonce, hooks):
        self.spec, self.plan, self.dir, self.nonce = spec, plan, workdir, nonce
        self.hooks = hooks          # progress(), ready() -> bool (go), timed()
        self.device = "cpu" if spec.get(proto.JOB_CPU) else "cuda"
        self.poison = plan.get(proto.PLAN_POISON, True) is not False
        self.program = tasks.Program(spec, workdir)
        self.runs, self.outputs = [], []
        self.perf = None            # {"cases": [...], "error": ...}
        self.perf_out = {}
        self.first_done = False
        self.spent = {}             # seconds of the tests and the checks
        self.parts_peak = 0         # MiB: the device memory its split runs' processes held at most

    def own_files(self):
        return {os.path.realpath(p) for p in COUNTER.files}

    def _first(self):
        if not self.first_done:
            self.first_done = True
            self.hooks["progress"]()

    # -- correctness runs --

    def one_run(self, seed):
        """One run of the test; its record and outputs are appended."""
        entry.STATE.mode = "full"
        entry.STATE.begin_run()
        entry.STATE.expect = {int(k): v for k, v in (self.plan.get(proto.PLAN_EXPECT) or {}).items()}
        entry.STATE.probe_inputs = bool(self.plan.get(proto.PLAN_PROBE_INPUTS))
        before = COUNTER.count
        threads = threading.active_count()
        t0 = time.monotonic()
        rec = {"seed": seed}
        out = None
        try:
            if self.poison:
                guard.poison(self.device)
            perturb.shift()
            guard.reseed(seed)
            with guard.poisoned(self.poison, self.device):
                value = self.program.run(seed)
                _sync(self.device)
                notes = set()
                gold = values.portable(value, notes, own=self.spec[proto.JOB_NAME], path="gold")
                entry.drop_kept(entry.STATE.outputs, value)
                del value
                entry.probe_first()
            rec["ok"] = True
            rec["notes"] = sorted(notes)
            out = {"gold": gold, "calls": entry.STATE.outputs,
                   "probe": entry.STATE.probes[0][1] if entry.STATE.probes else None}
        except BaseException as exc:  # noqa: B902 - SystemExit from the code counts too
            rec["ok"] = False
            rec["error"] = error_info(exc, self.own_files())
        rec["seconds"] = round(time.monotonic() - t0, 4)
        rec["launches"] = COUNTER.count - before
        rec["calls"] = entry.STATE.calls
        rec["probe"] = entry.STATE.probes[0][0] if entry.STATE.probes else None
        rec["threads_left"] = threading.active_count() > threads
        entry.STATE.begin_run()
        self.runs.append(rec)
        self.outputs.append(out)
        self._first()
        return rec["ok"]

    def correctness(self):
        """The runs of the plan; each under its forced configuration where
        the plan gives one ("force", see autotune); with "keep_going" past
        a run that fails (the calibration's sweep of configurations, some
        of which may not run)."""
        forces = self.plan.get(proto.PLAN_FORCE) or []
        ok = True
        for i, seed in enumerate(self.plan.get(proto.PLAN_RUNS) or []):
            with _forced(forces[i] if i < len(forces) else None):
                if not self.one_run(seed):
                    ok = False
                    if not self.plan.get(proto.PLAN_KEEP_GOING):
                        return False
        return ok

    # -- performance cases, checked --

    def perf_checks(self):
        plan = self.plan.get(proto.PLAN_PERF)
        if not plan:
            return
        skip = set(map(str, plan.get(proto.PLAN_SKIP) or []))
        checks = int(plan.get(proto.PLAN_CHECKS) or 1)
        more = {str(k): int(v) for k, v in (plan.get(proto.PLAN_MORE) or {}).items()}
        guard_poison = bool(plan.get(proto.PLAN_GUARD_POISON))
        forces = plan.get(proto.PLAN_FORCE) or []
        cases = []
        self.perf = {"cases": cases}

        def visit(key, make, call, meta, host, master, ref=None, alone_ref=False):
            k = str(key)
            if k in skip:
                return None
            case = {"key": k, "ok": True, "launches": 0, "calls": []}
            cases.append(case)
            if meta is not None and host is not None:
                case["counts"] = meta.counts(host)
            if host is not None:
                case["dtype"] = values.main_dtype(host)
                case["bytes"] = values.nbytes(host)
            outs = []
            for j in range(checks + more.get(k, 0) + int(guard_poison)):
                poisoned_zones = guard_poison and j == checks + more.get(k, 0)
                try:
                    with _forced(forces[j] if j < len(forces) else None):
                        outs.append(self._checked(case, make, call, master, poisoned_zones))
                except Exception as exc:  # noqa: BLE001 - the case fails, the job goes on
                    self._case_failed(case, exc)
                    if not self.plan.get(proto.PLAN_KEEP_GOING):
                        break
            self.perf_out[k] = outs
            self._first()
            return None
        try:
            counts = self.program.cases(visit)
            if isinstance(counts, dict):  # a ROCm file's, from its benchmarker
                for case in cases:
                    case.setdefault("counts", counts.get(case["key"], {}))
        except _DeviceLost:
            lost = cases[-1]
            err = lost.get("error") or {}
            self.perf["error"] = {"kind": err.get("kind", "runtime"),
                                  "message": f"performance case {lost['key']}: {err.get('message')} "
                                             "(the device was left unusable)",
                                  "traceback": err.get("traceback")}
        except Exception as exc:  # noqa: BLE001
            self.perf["error"] = error_info(exc, self.own_files())
        self._first()

    def _case_failed(self, case, exc):
        """The case marked failed by exc; _DeviceLost where the device no
        longer runs work."""
        case["ok"] = False
        case["error"] = error_info(exc, self.own_files())
        case["device_lost"] = not device_usable(self.device)
        if case["device_lost"]:
            raise _DeviceLost()

    def _checked(self, case, make, call, master, poisoned_zones):
        entry.STATE.mode = "light"
        entry.STATE.begin_run()
        before = COUNTER.count
        perturb.shift()
        guard.reseed(self.spec.get(proto.JOB_SEEDS, [42])[0])
        with guard.poisoned(self.poison, self.device):
            x = make(poisoned_zones) if make is not None else None
            _sync(self.device)
            out = call(x)
            _sync(self.device)
        case["launches"] += COUNTER.count - before
        case["calls"].extend(entry.STATE.calls)
        entry.STATE.begin_run()
        entry.STATE.mode = "full"
        notes = set()
        got = values.case_outputs(out, x, master, case["key"], notes)
        if notes:
            case.setdefault("notes", [])
            case["notes"] = sorted(set(case["notes"]) | notes)
        del out, x
        guard.release_cached(self.device)
        return got

    # -- results --

    def _replaced(self):
        """The library functions changed since the code was loaded, and
        what the integrity checks cost (spent)."""
        t0 = time.monotonic()
        out = intact.changed(intact.SNAP)
        self.spent["intact"] = round(time.monotonic() - t0, 4)
        self.spent["outside"] = round(outside.SPENT[0], 4)
        return out

    def save(self):
        opath = os.path.join(self.dir, proto.FILE_OUTPUTS_PT)
        data = {"runs": self.outputs, "perf": self.perf_out}
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        size = values.nbytes(data)
        if limit != resource.RLIM_INFINITY and size > limit:
            raise RuntimeError(f"the outputs take {size / 2**20:.0f} MiB, more than a job may "
                               f"write in one file ({limit / 2**20:.0f} MiB: geak-eval --file-limit)")
        t0 = time.monotonic()
        torch.save(data, opath)
        with open(opath, "rb") as fp:
            digest = hashlib.sha256(fp.read()).hexdigest()
        self.spent["save"] = round(time.monotonic() - t0, 4)
        self.spent["search"] = round(autotune.STATE.search_s, 4)
        self.spent["compile"] = round(autotune.STATE.compile_s, 4)
        self.spent["compiles"] = autotune.STATE.compiles
        result = {
            proto.NONCE: self.nonce, "outputs_sha256": digest, "runs": self.runs, "perf": self.perf,
            "notes": sorted(self.program.notes), "launched": sorted(COUNTER.names),
            "tunings": autotune.choices(), "tuner_configs": autotune.counts(),
            "secrets_in_env": sandbox.secret_names(), proto.RESULT_SPENT: self.spent,
            "replaced": self._replaced(),
            "gpu_peak_mib": max(guard.device_peak_mib(self.device), self.parts_peak),
        }
        _dump(os.path.join(self.dir, proto.FILE_RESULT), result)


class _DeviceLost(Exception):
    pass


class _forced:
    """Inside, every autotuner takes its configuration k (see autotune),
    its earlier choices forgotten; k None leaves the policy alone."""

    def __init__(self, k):
        self.k = k

    def __enter__(self):
        if self.k is not None:
            self.saved = autotune.STATE.policy
            autotune.forget()
            autotune.STATE.policy = ("force", int(self.k))
        return self

    def __exit__(self, *exc):
        if self.k is not None:
            autotune.forget()
            autotune.STATE.policy = self.saved
        return False


def _dump(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        json.dump(obj, fp)
    os.replace(tmp, path)


# ---- one call per process ---------------------------------------------------

def _part(job, base, body):
    """In a forked child: body(job), then its runs and outputs into files
    at base; never returns."""
    code = 1
    try:
        body(job)
        torch.save({"runs": job.outputs, "perf": job.perf_out}, base + ".pt")
        _dump(base + ".json", {"runs": job.runs, "perf": job.perf,
                               "launched": sorted(COUNTER.names), "tunings": autotune.choices(),
                               "notes": sorted(job.program.notes),
                               "gpu_peak_mib": guard.device_peak_mib(job.device)})
        code = 0
    except BaseException:  # noqa: B902
        traceback.print_exc()
    finally:
        os._exit(code)


def _merge(job, base, seed, status):
    try:
        with open(base + ".json") as fp:
            part = json.load(fp)
        outs = values.load(base + ".pt")
    except (OSError, ValueError, values.Refused) as exc:
        job.runs.append({"seed": seed, "ok": False, "seconds": 0, "launches": 0, "calls": [],
                         "error": {"kind": "crash", "message": "the run's own process ended (status "
                                   f"{os.waitstatus_to_exitcode(status)}) without its result "
                                   f"({str(exc)[:200]})"}})
        job.outputs.append(None)
        return False
    job.runs.extend(part["runs"])
    job.outputs.extend(outs["runs"])
    COUNTER.names.update(part.get("launched") or [])
    job.program.notes.update(part.get("notes") or [])
    job.parts_peak = max(job.parts_peak, int(part.get("gpu_peak_mib") or 0))
    return all(r.get("ok") for r in part["runs"])


def run_split(job):
    """Each run in a process of its own, then the performance cases and the
    timing in one more (which writes the result)."""
    forces = job.plan.get(proto.PLAN_FORCE) or []
    for k, seed in enumerate(job.plan.get(proto.PLAN_RUNS) or []):
        base = os.path.join(job.dir, f"part-{k}")
        pid = os.fork()
        if pid == 0:
            guard.die_with_parent()
            job.runs, job.outputs = [], []
            force = forces[k] if k < len(forces) else None
            _part(job, base, lambda j, s=seed, f=force: _forced_run(j, s, f))
        _, status = os.waitpid(pid, 0)
        job.hooks["progress"]()
        if not _merge(job, base, seed, status) and not job.plan.get(proto.PLAN_KEEP_GOING):
            break
    ok = any(r.get("ok") for r in job.runs) if job.plan.get(proto.PLAN_KEEP_GOING) else \
        all(r.get("ok") for r in job.runs)
    if not ok or not (job.plan.get(proto.PLAN_PERF) or job.plan.get(proto.PLAN_TIMING)):
        job.save()
        return
    pid = os.fork()
    if pid == 0:
        guard.die_with_parent()
        code = 1
        try:
            finish(job, ok)
            code = 0
        except BaseException:  # noqa: B902
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if not os.path.exists(os.path.join(job.dir, proto.FILE_RESULT)):
        job.save()


def _forced_run(job, seed, force):
    with _forced(force):
        return job.one_run(seed)


def finish(job, ok):
    """The performance checks, the result, the reference's side of the
    timing made, and the timing on go."""
    if ok and job.plan.get(proto.PLAN_PERF):  # spent only where there are checks
        t0 = time.monotonic()
        job.perf_checks()
        job.spent[proto.SPENT_PERF_CHECKS] = round(time.monotonic() - t0, 3)
    job.save()
    if not (ok and job.plan.get(proto.PLAN_TIMING)):
        return
    t0 = time.monotonic()
    if proto.need(job.plan[proto.PLAN_TIMING], proto.PLAN_REFERENCE, "the timing plan"):
        job.program.prepare()
    prepared = time.monotonic() - t0
    if job.hooks["ready"]():
        timing.run(job, job.plan[proto.PLAN_TIMING], prepared)


def main(workdir, nonce, req, hooks):
    with open(os.path.join(workdir, proto.FILE_JOB)) as fp:
        spec = json.load(fp)
    plan = proto.need(req, proto.REQ_PLAN, "the run request")
    COUNTER.install()
    autotune.install()
    outside.install()
    autotune.set_policy(_policy(plan.get(proto.PLAN_AUTOTUNE), spec), plan.get(proto.PLAN_PINS))
    random.seed(0)
    intact.take()  # before the code is loaded (tasks.Program)
    job = Job(spec, plan, workdir, nonce, hooks)
    if plan.get(proto.PLAN_ORDER):
        perturb.order_programs(os.path.join(workdir, "triton-ordered"), job.device)
    if plan.get(proto.PLAN_PERTURB) and job.device != "cpu":
        perturb.start(int(plan[proto.PLAN_PERTURB]))
    if plan.get(proto.PLAN_ONE_CALL) and spec.get(proto.JOB_SUITE) != "rocm":
        return run_split(job)
    t0 = time.monotonic()
    ok = job.correctness()
    job.spent[proto.SPENT_TESTS] = round(time.monotonic() - t0, 3)
    finish(job, ok)


def _policy(p, spec):
    if spec.get(proto.JOB_CPU) and p in (None, "quick", "full"):
        return "first"
    if isinstance(p, list) and len(p) == 2 and p[0] in ("force", "pin"):
        return (p[0], p[1]) if p[0] == "force" else ("pin",)
    return p or ("first" if spec.get(proto.JOB_CPU) else "quick")
