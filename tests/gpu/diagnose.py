"""Look into references that fail against themselves on a GPU, outside
geak-eval, to tell the harness's part from the kernel's.

    python3 tests/gpu/diagnose.py faults RECORDS.jsonl ID[,ID...]
    python3 tests/gpu/diagnose.py races RECORDS.jsonl ID[,ID...] [CALLS]
    python3 tests/gpu/diagnose.py perfraces RECORDS.jsonl ID[,ID...] [CALLS]
    python3 tests/gpu/diagnose.py call RECORDS.jsonl ID[,ID...]
    python3 tests/gpu/diagnose.py tuning RECORDS.jsonl ID[,ID...] [PROCESSES]
    python3 tests/gpu/diagnose.py configs RECORDS.jsonl ID[,ID...]

faults: each reference's correctness runs as geak-eval's worker makes
them (geakh.run.main in a fresh process), with and without the poison
and with the launch counter's argument holding on and off (without the
poison the harness now holds nothing whatever this asks), and once as a
plain script; prints every run's seed, ok and the first line of its error.

races: each reference's test part loaded twice, as two modules (as the
reference and a candidate identical to it are), and its result_gold
expression called CALLS times per module, alternately, reseeded before
each call; prints per module how many distinct outputs its calls gave,
and whether the two modules' sets of outputs meet: a race that the
reference's own runs show, or one that only another module shows.

perfraces: the reference and itself as the candidate, loaded as the
performance check loads them (timing.load_tbg), on the first six inputs
of a TritonBench perf script, CALLS calls of each side alternately, each
on a fresh copy of the input, in three ways: "kept" (every copy and
output kept until the input is done, so each call works elsewhere in
memory), "reused" (each copy freed before the next call, so the calls
share addresses) and "timed" (as the timed calls, with L2 flushed and the
device idle before each, outputs kept).  Per way it prints the elements
where a side's calls disagree among themselves ("racing"), where some
candidate value is never among the reference's ("cand-only") and the
other way round, and where the two sides' values never meet ("disjoint");
for a baseline, the same between the two halves of the reference's calls;
and where each side's calls all agree but the two sides do not ("fixed
apart", with the first few such elements: flat index, reference's value,
candidate's, as bit patterns).  A fourth way, "checked", makes the calls
as the check stage does (poisoned torch.empty, the device idle at each
call's start).  DIAG_INPUTS=I,J,... picks other inputs than the first
six; DIAG_WAYS=kept,checked,... other ways.

call: the reference as a candidate's correctness run, as geak-eval's
worker makes it (a ROCm file that autotunes gets the task's autotune
variant of the test); prints its runs and notes.

tuning: the reference's correctness runs in PROCESSES fresh processes
with its autotuners' own choices, then as many with their runners-up (as
the reference's second process makes them); prints per process every
autotuner's choice per key with the times its search took, and a digest
of each output (a dict's values or a sequence's items, one level down).

configs: one process per configuration index, every autotuner of the
reference pinned to that configuration, the reference called once on
each of the perf inputs DIAG_INPUTS (default 0) with
CUDA_LAUNCH_BLOCKING=1; prints per process each input's outcome and the
configurations pinned: which configuration faults on which input.
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(top, "share", "harness"))

FAULT_RUN = r"""
import json, os, sys
sys.path.insert(0, {harness!r})
import torch
from geakh import guard, run
poison, hold = {poison!r}, {hold!r}
if not hold:
    guard.Launches.HOLD_CAP = 0
if poison:
    guard.PoisonEmpty().__enter__()
if {runners_up!r}:
    from geakh import timing
    timing.prefer_runners_up()
run.main({d!r}, "n", lambda: None, poison)
with open(os.path.join({d!r}, "result.json")) as fp:
    res = json.load(fp)
if {tuning!r}:
    import gc, hashlib, io
    from triton.runtime.autotuner import Autotuner
    for t in gc.get_objects():
        if isinstance(t, Autotuner) and t.cache:
            times = {{str(c): round(float(v[0] if isinstance(v, (list, tuple)) else v), 5)
                     for c, v in (getattr(t, "configs_timings", None) or {{}}).items()}}
            print("tuner", t.base_fn.__name__, {{k: str(c) for k, c in t.cache.items()}}, times)
    outs = torch.load(os.path.join({d!r}, "outputs.pt"), weights_only=True)
    def parts(x):
        if isinstance(x, dict):
            return list(x.items())
        return list(enumerate(x)) if isinstance(x, (list, tuple)) else [("", x)]
    for r, o in zip(res["runs"], outs):
        line = []
        for k, v in parts(o):
            for j, w in parts(v):
                buf = io.BytesIO()
                torch.save(w, buf)
                line.append(f"{{k}}{{j}}:{{hashlib.sha256(buf.getvalue()).hexdigest()[:6]}}")
        print("outputs", r["seed"], " ".join(line))
for r in res["runs"]:
    err = ((r.get("error") or {{}}).get("message") or "").splitlines()
    print(r["seed"], r["ok"], err[0][:150] if err else "")
print("notes:", ",".join(res["notes"]))
"""


def records(path, ids):
    want = set(ids.split(","))
    with open(path) as fp:
        for line in fp:
            rec = json.loads(line)
            if rec["id"] in want or rec["id"].split("/")[-1] in want:
                yield rec


def run_py(text, cwd, timeout=300):
    try:
        p = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True,
                           cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    out = p.stdout.strip() or (p.stderr.strip().splitlines() or [""])[-1][:200]
    return f"exit {p.returncode}\n{out}"


def job_run(rec, label, poison, hold, runners_up=False, tuning=False, **more):
    task = rec["task"]
    d = tempfile.mkdtemp(prefix="diag-")
    spec = {"suite": task["suite"], "name": task["name"], "code": task["reference"],
            "test": task.get("test", ""), "seeds": [42, 43, 44], "cpu": False,
            "reference": task["reference"], "perf": task.get("perf"), "entry": None}
    spec.update(more)
    with open(os.path.join(d, "job.json"), "w") as fp:
        json.dump(spec, fp)
    text = FAULT_RUN.format(harness=os.path.join(top, "share", "harness"),
                            poison=poison, hold=hold, d=d, runners_up=runners_up, tuning=tuning)
    print(f"{rec['id']}\t{label}\t" + run_py(text, d, 600).replace("\n", "\n\t\t"), flush=True)


def call(rec):
    task = rec["task"]
    more = {}
    if task["suite"] == "rocm" and task.get("test_autotune") and "@triton.autotune" in task["reference"]:
        more["cand_test"] = task["test_autotune"]
    job_run(rec, "candidate" + (" (autotune variant)" if more else ""), True, True, **more)


def faults(rec):
    task = rec["task"]
    for poison in (True, False):
        for hold in (True, False):
            job_run(rec, f"poison={poison} hold={hold}", poison, hold)
    d = tempfile.mkdtemp(prefix="diag-")
    with open(os.path.join(d, "plain.py"), "w") as fp:
        fp.write(task["reference"] + "\n\n" + task.get("test", "") + "\n")
    text = f"import runpy; runpy.run_path({os.path.join(d, 'plain.py')!r})"
    print(f"{rec['id']}\tplain script\t" + run_py(text, d).replace("\n", " "), flush=True)


def tuning(rec, processes):
    for runners_up in (False, True):
        for k in range(processes):
            job_run(rec, f"{'runners-up' if runners_up else 'own choices'} {k}", True, True,
                    runners_up=runners_up, tuning=True)


def digest(x, h):
    import torch
    if isinstance(x, torch.Tensor):
        buf = io.BytesIO()
        torch.save(x.detach().cpu().contiguous(), buf)
        h.update(buf.getvalue())
    elif isinstance(x, dict):
        for k in sorted(x, key=str):
            h.update(str(k).encode())
            digest(x[k], h)
    elif isinstance(x, (list, tuple)):
        for v in x:
            digest(v, h)
    else:
        h.update(repr(x).encode())


def races(rec, calls):
    from geakh import guard, run
    task = rec["task"]
    expr = run.gold_call(task.get("test", ""))
    if expr is None:
        print(f"{rec['id']}\tno result_gold expression", flush=True)
        return
    d = tempfile.mkdtemp(prefix="diag-")
    sys.path.insert(0, d)
    mods = []
    for side in ("a", "b"):
        text, _ = run.assemble(task["reference"], task.get("test", ""))
        path = os.path.join(d, f"{task['name']}_{side}.py")
        with open(path, "w") as fp:
            fp.write(text)
        guard.reseed(42)
        mods.append(run.load_module(f"{task['name']}_{side}", path))
    seen = ([], [])
    for _ in range(calls):
        for i, mod in enumerate(mods):
            guard.reseed(42)
            h = hashlib.sha256()
            digest(eval(expr, mod.__dict__), h)
            seen[i].append(h.hexdigest()[:12])
    a, b = set(seen[0]), set(seen[1])
    print(f"{rec['id']}\t{calls} calls each: module a {len(a)} distinct, module b {len(b)} "
          f"distinct, shared {len(a & b)}; a {seen[0]}; b {seen[1]}", flush=True)


def flat_bits(x, acc=None):
    """Every tensor in x as one int64 vector of its elements' bit
    patterns (equal values, NaN included, are equal numbers)."""
    import torch
    top = acc is None
    acc = [] if top else acc
    if isinstance(x, torch.Tensor):
        t = x.detach().contiguous().reshape(-1)
        ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
        if t.dtype == torch.bool:
            t = t.to(torch.uint8)
        if t.is_complex():
            t = torch.view_as_real(t).reshape(-1)
        acc.append(t.view(ints[t.element_size()]).to(torch.int64))
    elif isinstance(x, dict):
        for k in sorted(x, key=str):
            flat_bits(x[k], acc)
    elif isinstance(x, (list, tuple)):
        for v in x:
            flat_bits(v, acc)
    if top:
        return torch.cat(acc) if acc else torch.zeros(0, dtype=torch.int64)
    return None


def first_address(x):
    """The address of the first tensor in x (an input copy)."""
    import torch
    if isinstance(x, torch.Tensor):
        return x.data_ptr()
    for v in (x.values() if isinstance(x, dict) else x if isinstance(x, (list, tuple)) else ()):
        a = first_address(v)
        if a is not None:
            return a
    return None


def never_among(a, b):
    """Elements where some row of a holds a value that no row of b holds."""
    import torch
    novel = torch.zeros(a.shape[1], dtype=torch.bool, device=a.device)
    for row in a:
        novel |= ~(row[None, :] == b).any(0)
    return novel


def race_counts(ref, cand):
    """ref, cand: [calls, elements] stacks of flat_bits."""
    racing = lambda s: int((s != s[0]).any(0).sum())  # noqa: E731
    c_only, r_only = never_among(cand, ref), never_among(ref, cand)
    half = ref.shape[0] // 2
    base = int(never_among(ref[half:], ref[:half]).sum())
    apart = ~(ref != ref[0]).any(0) & ~(cand != cand[0]).any(0) & (ref[0] != cand[0])
    where = apart.nonzero().flatten()[:4].tolist()
    shown = ", ".join(f"{j}: {int(ref[0][j])} vs {int(cand[0][j])}" for j in where)
    return (f"elements {ref.shape[1]}, racing ref {racing(ref)} cand {racing(cand)}; "
            f"cand-only {int(c_only.sum())}, ref-only {int(r_only.sum())}, "
            f"disjoint {int((c_only & r_only).sum())}; ref halves {base}; "
            f"fixed apart {int(apart.sum())} [{shown}]")


def perf_job(rec):
    """A fresh directory and the spec that loads a TritonBench reference
    and its perf script as the performance check does, itself as the
    candidate."""
    task = rec["task"]
    d = tempfile.mkdtemp(prefix="diag-")
    return d, {"suite": "tbg", "name": task["name"], "code": task["reference"],
               "reference": task["reference"], "test": task.get("test", ""),
               "perf": task["perf"], "seeds": [42]}


def picked_inputs(default):
    return [int(k) for k in os.environ.get("DIAG_INPUTS", default).split(",")]


def perf_races(rec, calls):
    import torch
    from geakh import guard, timing
    d, spec = perf_job(rec)
    guard.LAUNCHES.hold_nothing()
    _, cand, ref, inputs, _ = timing.load_tbg(spec, d)
    bench = timing.Bench()
    picked = picked_inputs("0,1,2,3,4,5")
    ways = os.environ.get("DIAG_WAYS", "kept,reused,timed").split(",")
    for i, inp in enumerate(inputs):
        if i > max(picked):
            break
        if i not in picked:
            continue
        for way in ways:
            stacks, kept, where = ([], []), [], (set(), set())
            for _ in range(calls):
                for k, fn in enumerate((ref, cand)):
                    guard.reseed(42)
                    if way == "timed":
                        _, out, x = bench.one(fn, inp)
                    elif way == "checked":
                        with timing.empty_poisoned(True):
                            x = timing.fresh(inp)
                            out = fn(x)
                    else:
                        x = timing.clone(inp)
                        out = fn(x)
                    torch.cuda.synchronize()
                    where[k].add(first_address(x))
                    stacks[k].append(flat_bits(out).clone())
                    if way != "reused":
                        kept.append((x, out))
                    del x, out
            line = race_counts(torch.stack(stacks[0]), torch.stack(stacks[1]))
            print(f"{rec['id']}\tinput {i} {way}: {line}; addresses ref {len(where[0])} "
                  f"cand {len(where[1])} shared {len(where[0] & where[1])}", flush=True)
            del stacks, kept
            torch.cuda.empty_cache()


CONFIG_RUN = r"""
import gc, json, os, sys
sys.path.insert(0, {harness!r})
import torch
from triton.runtime import autotuner
from geakh import guard, timing

def pinned(self, kwargs):
    return [self.configs[{j!r} % len(self.configs)]]
autotuner.Autotuner.prune_configs = pinned
with open(os.path.join({d!r}, "job.json")) as fp:
    spec = json.load(fp)
guard.LAUNCHES.hold_nothing()
_, _, ref, inputs, _ = timing.load_tbg(spec, {d!r})
for i, inp in enumerate(inputs):
    if i > max({picked!r}):
        break
    if i not in {picked!r}:
        continue
    try:
        ref(timing.clone(inp))
        torch.cuda.synchronize()
        print("input", i, "ok", flush=True)
    except Exception as exc:
        print("input", i, type(exc).__name__, (str(exc).splitlines() or [""])[0][:150], flush=True)
        break
tuners = [t for t in gc.get_objects() if isinstance(t, autotuner.Autotuner) and t.cache]
print("configurations", max((len(t.configs) for t in tuners), default=0))
for t in tuners:
    print("pinned", t.base_fn.__name__, t.configs[{j!r} % len(t.configs)])
"""


def configs(rec, _calls):
    d, spec = perf_job(rec)
    with open(os.path.join(d, "job.json"), "w") as fp:
        json.dump(spec, fp)
    picked = picked_inputs("0")
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    j, count = 0, 1
    while j < count:
        text = CONFIG_RUN.format(harness=os.path.join(top, "share", "harness"), d=d, j=j,
                                 picked=picked)
        out = run_py(text, d, 600)
        print(f"{rec['id']}\tconfiguration {j}\t" + out.replace("\n", "\n\t\t"), flush=True)
        for line in out.splitlines():
            if line.startswith("configurations "):
                count = int(line.split()[1])
        j += 1


def main():
    modes = {"faults": lambda rec, n: faults(rec), "races": races, "perfraces": perf_races,
             "call": lambda rec, n: call(rec), "tuning": tuning, "configs": configs}
    if len(sys.argv) < 4 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    for rec in records(sys.argv[2], sys.argv[3]):
        try:
            modes[sys.argv[1]](rec, int(sys.argv[4]) if len(sys.argv) > 4 else 8)
        except Exception as exc:  # noqa: BLE001 - on to the next
            print(f"{rec['id']}\tfailed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)


if __name__ == "__main__":
    main()
