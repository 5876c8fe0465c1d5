"""Hardware counters of the profiled case's kernels, read by the vendor's
command-line profiler (NVIDIA's Nsight Compute, ncu), after the case was
timed and outside every timed call.

The timing job starts the profiler on a fresh Python of its own (the
target, `python -m geakh.counters DIR KEY`), inside the job's sandbox: the
target loads the job's code again, takes the autotuner choices the timing
made on that case, makes the case's inputs, calls once unprofiled (to
compile and tune), then once between cudaProfilerStart and Stop, which is
all the profiler sees (--profile-from-start off).  The report is then read
back as CSV (ncu --import --csv --page details --print-units base) and
reduced to a few figures per kernel, averaged over its launches:

  duration_us          the kernel's own time
  sm_pct, memory_pct   compute and memory throughput, % of the peak
  dram_pct, l1_pct, l2_pct   DRAM, L1/TEX and L2 throughput, % of the peak
  dram_gbps            DRAM bandwidth achieved, GB/s
  l1_hit_pct, l2_hit_pct     cache hit rates
  occupancy_pct, occupancy_theoretical_pct   achieved and theoretical
  registers, waves_per_sm    launch figures

The figures are the profiler's as the candidate's sandbox let it run:
advisory, for the optimizer's prompt; they never change a verdict or a
speedup.  Where the profiler is missing or fails, the result says why.
"""
import csv
import io
import json
import os
import signal
import subprocess
import sys
import time

from . import proto

SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats")
KERNELS_MAX = 12
NAME_MAX = 160

# The report's metric names -> (key, kind).  "Memory Throughput" is two
# figures: SpeedOfLight's share of the peak (a %) and
# MemoryWorkloadAnalysis's bandwidth (bytes a second); its unit tells
# which (_figure).
_FIGURES = {
    "Duration": ("duration_us", "time"),
    "Compute (SM) Throughput": ("sm_pct", "pct"),
    "DRAM Throughput": ("dram_pct", "pct"),
    "L1/TEX Cache Throughput": ("l1_pct", "pct"),
    "L2 Cache Throughput": ("l2_pct", "pct"),
    "L1/TEX Hit Rate": ("l1_hit_pct", "pct"),
    "L2 Hit Rate": ("l2_hit_pct", "pct"),
    "Achieved Occupancy": ("occupancy_pct", "pct"),
    "Theoretical Occupancy": ("occupancy_theoretical_pct", "pct"),
    "Registers Per Thread": ("registers", "count"),
    "Waves Per SM": ("waves_per_sm", "count"),
}
_TIME_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3,
            "s": 1e6, "second": 1e6}
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def _number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def _scaled(value, unit, kind):
    """The value in the figure's unit (us, %, GB/s, a count), or None."""
    unit = (unit or "").strip()
    if kind == "time":
        return value * _TIME_US[unit] if unit in _TIME_US else None
    if kind == "rate":
        u = unit.replace("byte/second", "B/s").replace("byte/s", "B/s")
        if not u.endswith("B/s") or u[:-3] not in _PREFIX:
            return None
        return value * _PREFIX[u[:-3]] / 1e9
    return value


def _figure(name, unit):
    if name == "Memory Throughput":
        return ("memory_pct", "pct") if (unit or "").strip() == "%" else ("dram_gbps", "rate")
    return _FIGURES.get(name)


def parse_csv(text):
    """The report's details page as CSV, one row a metric of a launch:
    {kernel name: {"launches": N, figures...}}, each figure the mean over
    the kernel's launches."""
    start = text.find('"ID"')
    if start < 0:
        return {}
    sums, launches = {}, {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        name = str(row.get("Kernel Name") or "?")[:NAME_MAX]
        fig = _figure(row.get("Metric Name"), row.get("Metric Unit"))
        launches.setdefault(name, set()).add(row.get("ID"))
        value = _number(row.get("Metric Value"))
        if fig is None or value is None:
            continue
        key, kind = fig
        value = _scaled(value, row.get("Metric Unit"), kind)
        if value is not None:
            sums.setdefault(name, {}).setdefault(key, []).append(value)
    out = {}
    for name, ids in launches.items():
        k = {"launches": len(ids)}
        for key, values in sums.get(name, {}).items():
            k[key] = round(sum(values) / len(values), 3)
        out[name] = k
    return out


def _tail_of(path, n=600):
    with open(path, "rb") as fp:
        fp.seek(0, os.SEEK_END)
        fp.seek(max(0, fp.tell() - 4 * n))
        return fp.read().decode("utf-8", "replace").strip()[-n:]


def version(ncu):
    try:
        p = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    return lines[-1].strip()[:120] if lines else None


def _run_within(cmd, deadline, **kw):
    """cmd to its end, or killed with all it started at the deadline:
    its exit status, or None when it ran past."""
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True, **kw)
    try:
        return p.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait()
        return None


def run(job, key, ncu, choices, timeout_s=60.0):
    """The counters of case key's kernels, read within timeout_s:
    {"available", "tool", ...}."""
    deadline = time.monotonic() + timeout_s
    job_dir = os.path.abspath(job.dir)
    d = os.path.join(job_dir, "counters")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "choices.json"), "w") as fp:
        json.dump(choices or [], fp)
    report = os.path.join(d, "report")
    for stale in (report + ".ncu-rep", os.path.join(d, "target.json")):
        if os.path.exists(stale):
            os.unlink(stale)
    harness = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=harness + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [ncu, "--profile-from-start", "off", "--target-processes", "all",
           "--clock-control", "none", "-f", "-o", report]
    for s in SECTIONS:
        cmd += ["--section", s]
    cmd += [sys.executable, "-m", "geakh.counters", job_dir, str(key)]
    out = {"available": False, "tool": "ncu", "case": str(key)}
    past = f"ncu ran past its {timeout_s:.0f} s (half of --timeout)"
    # The target's output too, however much it prints: into files.
    log = os.path.join(d, "ncu.log")
    try:
        with open(log, "wb") as fp:
            code = _run_within(cmd, deadline, stdout=fp, stderr=subprocess.STDOUT, env=env, cwd=d)
    except OSError as exc:
        out["message"] = f"ncu did not start: {exc}"
        return out
    if code is None:
        out["message"] = past
        return out
    seen = _target_said(d)
    if seen.get("error"):
        out["message"] = "the profiled run failed: " + str(seen["error"])[:400]
        return out
    if code != 0 or not os.path.exists(report + ".ncu-rep"):
        out["message"] = f"ncu failed (exit {code}): {_tail_of(log)}"
        return out
    csv_path, err_path = os.path.join(d, "report.csv"), os.path.join(d, "import.log")
    try:
        with open(csv_path, "wb") as fp, open(err_path, "wb") as ep:
            code = _run_within([ncu, "--import", report + ".ncu-rep", "--csv", "--page", "details",
                                "--print-units", "base"], deadline, stdout=fp, stderr=ep, cwd=d)
    except OSError as exc:
        out["message"] = f"ncu could not read its report: {exc}"
        return out
    if code != 0:
        out["message"] = past if code is None else \
            f"ncu could not read its report (exit {code}): {_tail_of(err_path)}"
        return out
    with open(csv_path, encoding="utf-8", errors="replace") as fp:
        kernels = parse_csv(fp.read())
    if not kernels:
        out["message"] = "ncu's report names no kernel of the profiled call"
        return out
    ranked = sorted(kernels.items(), key=lambda kv: -(kv[1].get("duration_us") or 0))
    out.update(available=True, version=version(ncu), sections=list(SECTIONS),
               kernels=[dict(v, name=n) for n, v in ranked[:KERNELS_MAX]])
    return out


def _target_said(d):
    try:
        with open(os.path.join(d, "target.json")) as fp:
            return json.load(fp)
    except (OSError, ValueError):
        return {}


def merge(profile, counters):
    """counters into profile: each kernel's figures beside its timeline
    figures, where the names agree; the whole under "counters"."""
    by_name = {k.get("name"): k for k in counters.get("kernels") or []}
    for k in profile.get("kernels") or []:
        if k.get("name") in by_name:
            k["counters"] = {f: v for f, v in by_name[k["name"]].items() if f != "name"}
    profile["counters"] = counters
    return profile


# ---- the target, run by the profiler --------------------------------------

def target(job_dir, key):
    """Load the job's code, call case key once to compile and tune, then
    once inside the profiled range."""
    d = os.path.join(job_dir, "counters")
    said = {"case": key, "profiled": 0}
    try:
        _profile_case(job_dir, d, key, said)
    except Exception as exc:  # noqa: BLE001 - reported to the timing job
        said["error"] = f"{type(exc).__name__}: {exc}"
    if not said["profiled"] and "error" not in said:
        said["error"] = f"case {key} was not reached"
    with open(os.path.join(d, "target.json"), "w") as fp:
        json.dump(said, fp)
    sys.stdout.flush()
    os._exit(0 if "error" not in said else 1)


def _profile_case(job_dir, d, key, said):
    import torch
    from . import autotune, entry, launches, tasks
    with open(os.path.join(job_dir, proto.FILE_JOB)) as fp:
        spec = json.load(fp)
    with open(os.path.join(d, "choices.json")) as fp:
        choices = json.load(fp)
    launches.COUNTER.install()
    autotune.install()
    autotune.set_policy(("pin",), choices)
    entry.STATE.mode = "off"
    cuda = not spec.get(proto.JOB_CPU)
    program = tasks.Program(spec, os.path.join(d, "code"))
    os.makedirs(program.dir, exist_ok=True)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def visit(k, make, call, meta, host, master, ref=None, alone_ref=False):
        if str(k) != key or alone_ref or said["profiled"]:
            return None
        call(make(False))  # compiles and tunes, unprofiled
        x = make(False)
        sync()
        before = launches.COUNTER.count
        if cuda:
            torch.cuda.profiler.start()
        try:
            call(x)
            sync()
        finally:
            if cuda:
                torch.cuda.profiler.stop()
        said["profiled"] = 1
        said["launches"] = launches.COUNTER.count - before
        said["kernels"] = sorted(launches.COUNTER.names)
        return None
    program.cases(visit)


if __name__ == "__main__":
    target(sys.argv[1], sys.argv[2])
