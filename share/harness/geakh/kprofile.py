"""A breakdown of one performance case's launches by kernel, made in the
timing job after the case was timed, on fresh inputs, so that it never
weighs on a timed call: torch's profiler (kineto, which reads the CUDA or
ROCm activity API) over a few calls of the code, and for each kernel its
launches per call, its device time per call and share of the whole, and
the launch figures the trace gives (grid, block, registers per thread,
shared memory, estimated achieved occupancy)."""
import json
import os

CALLS = 3      # profiled calls, each on fresh inputs
KEEP = 12      # kernels kept, the longest first; the rest summed
NAME_MAX = 160

_FIGURES = (("grid", "grid"), ("block", "block"), ("registers per thread", "registers"),
            ("shared memory", "shared_bytes"), ("est. achieved occupancy %", "occupancy_pct"),
            ("warps per SM", "warps_per_sm"))


def unavailable(device):
    """Why no kernel profile can be made here, or None."""
    if device == "cpu":
        return "the CPU mode (Triton's interpreter) has no device timeline to profile"
    try:
        from torch.profiler import ProfilerActivity, supported_activities
    except ImportError:
        return "this torch has no torch.profiler"
    if ProfilerActivity.CUDA not in supported_activities():
        return "this torch's profiler sees no GPU activity (built without kineto's device support)"
    return None


def _kernels(path):
    with open(path) as fp:
        trace = json.load(fp)
    for ev in trace.get("traceEvents") or []:
        if isinstance(ev, dict) and ev.get("cat") == "kernel" and ev.get("ph") == "X":
            yield ev


def run(job, key, fresh, call, sync, calls=CALLS):
    """The profile of key's case: fresh() makes its inputs, call(x) runs
    the code on them, sync() waits for the device."""
    why = unavailable(job.device)
    if why:
        return {"available": False, "case": key, "message": "no profiler: " + why}
    from torch.profiler import ProfilerActivity, profile
    path = os.path.join(job.dir, "kernel-trace.json")
    per = {}
    for _ in range(calls):
        x = fresh()
        sync()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            call(x)
            sync()
        del x
        prof.export_chrome_trace(path)
        for ev in _kernels(path):
            name = str(ev.get("name") or "?")[:NAME_MAX]
            k = per.setdefault(name, {"name": name, "launches": 0, "us": 0.0})
            k["launches"] += 1
            k["us"] += float(ev.get("dur") or 0)
            args = ev.get("args") or {}
            for src, dst in _FIGURES:
                if dst not in k and src in args:
                    k[dst] = args[src]
        os.unlink(path)
    total = sum(k["us"] for k in per.values())
    launches = sum(k["launches"] for k in per.values())
    ranked = sorted(per.values(), key=lambda k: -k["us"])
    kept = []
    for k in ranked[:KEEP]:
        k["launches"] = round(k["launches"] / calls, 2)
        k["share"] = round(k["us"] / total, 4) if total > 0 else None
        k["us"] = round(k["us"] / calls, 3)
        kept.append(k)
    rest = ranked[KEEP:]
    return {"available": True, "case": key, "tool": "torch.profiler", "calls": calls,
            "device_us": round(total / calls, 3), "kernels": kept,
            "others": {"kernels": len(rest), "share": round(sum(k["us"] for k in rest) / total, 4)
                       if total > 0 else None},
            "launches": round(launches / calls, 2)}
