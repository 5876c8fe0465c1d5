#!/usr/bin/env python3
"""Summarise a geak-eval -v trace (full-check.sh keeps it in stderr.txt):
how long the GPU was held alone, how long jobs waited for it, and the
longest jobs of each kind, so that a slow run says what it waited for.

    trace-summary.py [--match TEXT] TRACE
        --match: only the lines that contain TEXT (e.g. a step's file name)
"""
import re
import statistics
import sys

LINE = re.compile(r"^\S+: +([\d.]+) s: slot (\d+): (\S+)(?: \((\S+)\))?: (\S+): (.*)$")


def parse(lines):
    """Jobs as dicts: id, job, mode, asked, start, end, status, paused."""
    jobs, open_jobs = [], {}
    for line in lines:
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        t, slot, _, rid, name, event = float(m[1]), m[2], m[3], m[4] or "", m[5], m[6]
        key = (slot, name)
        w = re.match(r"(?:ready; )?waiting for GPU \S+ \((\w+)", event)
        if w:
            j = open_jobs.get(key)
            if j and j["mode"] == "shared" and w[1] == "alone":  # a timing run, set up
                j["end"] = t
                jobs.append(j)
            open_jobs[key] = {"id": rid, "job": name, "mode": w[1], "asked": t, "start": None,
                              "end": None, "status": None, "paused": 0}
            continue
        if event == "running on the CPU":  # no GPU to wait for
            open_jobs[key] = {"id": rid, "job": name, "mode": "cpu", "asked": t, "start": t,
                              "end": None, "status": None, "paused": 0}
            continue
        j = open_jobs.get(key)
        if not j:
            continue
        r = re.match(r"(?:running|timing) after [\d.]+ s waiting(?:, (\d+) correctness runs paused)?", event)
        if r:
            j["start"] = t
            j["paused"] = int(r[1] or 0)
        elif re.match(r"(exit|signal|timeout|failed|aborted|bad_request)\b", event):
            j["end"], j["status"] = t, event.split()[0]
            jobs.append(open_jobs.pop(key))
    return jobs


def main(argv):
    match = None
    if argv[:1] == ["--match"]:
        match, argv = argv[1], argv[2:]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as fp:
        lines = [ln for ln in fp if match is None or match in ln]
    jobs = [j for j in parse(lines) if j["start"] is not None and j["end"] is not None]
    if not jobs:
        print("no jobs in the trace")
        return 0
    span = max(j["end"] for j in jobs) - min(j["asked"] for j in jobs)
    alone = [j for j in jobs if j["mode"] in ("alone", "drained")]
    held = sum(j["end"] - j["start"] for j in alone)
    print(f"{len(jobs)} jobs over {span:.0f} s; GPU held alone {held:.0f} s "
          f"({100 * held / span if span else 0:.0f}%) by {len(alone)} timing runs")
    for mode in ("shared", "room", "alone", "drained", "cpu"):
        js = [j for j in jobs if j["mode"] == mode]
        if not js:
            continue
        runs = [j["end"] - j["start"] for j in js]
        waits = [j["start"] - j["asked"] for j in js]
        print(f"  {mode:8} {len(js):4} jobs: run median {statistics.median(runs):.1f} s, "
              f"max {max(runs):.1f} s; wait median {statistics.median(waits):.1f} s, max {max(waits):.1f} s")
    paused = [j["paused"] for j in alone if j["paused"]]
    if paused:
        print(f"  timing runs that paused correctness runs: {len(paused)}, median {statistics.median(paused)}")
    print("longest runs:")
    for j in sorted(jobs, key=lambda j: j["start"] - j["end"])[:5]:
        print(f"  {j['end'] - j['start']:7.1f} s {j['mode']:8} {j['id']} {j['job']} ({j['status']})")
    print("longest waits:")
    for j in sorted(jobs, key=lambda j: j["asked"] - j["start"])[:5]:
        print(f"  {j['start'] - j['asked']:7.1f} s {j['mode']:8} {j['id']} {j['job']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
