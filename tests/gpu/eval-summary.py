"""Summarise geak-eval output: one row per record, then pass counts per
suite, failures by reason, seconds per candidate (as measured when each
was evaluated, cached or not) and where they went, the rate of this run
(with --wall SECONDS), the spread of speedups and of the timed cases'
ratios by the reference's time.  With --latest, a
record whose id comes again in a later file (a step run again, a set
retimed) counts only as it last came.  With --status TSV (the benchmark's
suite, kernel, gpu_rc table), the pass counts of the references that ran
upstream (gpu_rc 0) too.  With --expect,
check each record's eval against the "# expect:" line of the cheat file
named by its "cheat" field (see tests/0320-eval-cheats.t) and exit 1 when
one does not hold.  Python only: the GPU machine may lack jq."""
import json
import math
import os
import re
import statistics
import sys


def rows(paths):
    for p in paths:
        with open(p) as fp:
            for line in fp:
                if line.strip():
                    yield json.loads(line)


def expect_ok(want, ev):
    verdict = f"{ev.get('exec')} {ev.get('reason')} {','.join(ev.get('flags') or [])}"
    if ev.get("stage") == "static" and ev.get("reason") == "cheat":
        # Rejected before it ran: right for every cheat meant to be
        # rejected (full-check.sh runs them with --static off, so that
        # each runtime defence is what decides).
        return not want.startswith("pass")
    if want.startswith("pass"):
        return ev.get("exec") is True and ev.get("reason") is None
    if want.startswith("flag:"):
        return want[5:] in verdict or re.match(r"False (cheat|mismatch)", verdict) is not None
    if want.startswith("gpu:"):  # as on the CPU, but decided by the timing run
        want = want[4:]
    elif want == "gpu":  # rejected, flagged, or timed honestly (no gain)
        sp = ev.get("speedup")
        return ev.get("exec") is False or bool(ev.get("flags")) or (sp is not None and sp < 1.5)
    return re.match(rf"False {want}", verdict) is not None


def latest(recs):
    last = {}
    for r in recs:
        last[r.get("cheat") or r.get("id")] = r
    return list(last.values())


def upstream_runs(path):
    """The ids (suite/kernel) whose reference ran upstream (gpu_rc 0)."""
    ok = set()
    with open(path) as fp:
        for line in fp:
            f = line.rstrip("\n").split("\t")
            if len(f) >= 3 and not line.startswith("#") and f[2] == "0":
                ok.add(f"{f[0]}/{f[1]}")
    return ok


def upstream_report(recs, ran):
    """Per suite: of the references that ran upstream, how many were
    reached here and how many pass (exec, no flag)."""
    for suite in sorted({i.split("/")[0] for i in ran}):
        want = {i for i in ran if i.startswith(suite + "/")}
        got = {r.get("id"): r for r in recs if r.get("id") in want}
        good = sum((r.get("eval") or {}).get("exec") is True and not (r.get("eval") or {}).get("flags")
                   for r in got.values())
        print(f"{suite}: {len(want)} run upstream, {len(got)} reached here, {good} pass")


def main(argv):
    expect_dir, wall, once, status = None, None, False, None
    while argv[:1] in (["--expect"], ["--wall"], ["--latest"], ["--status"]):
        if argv[0] == "--latest":
            once, argv = True, argv[1:]
            continue
        if argv[0] == "--expect":
            expect_dir = argv[1]
        elif argv[0] == "--status":
            status = argv[1]
        else:
            wall = float(argv[1])
        argv = argv[2:]
    recs = list(rows(argv))
    if once:
        recs = latest(recs)
    print(f"{'id':44} {'call':5} {'exec':5} {'reason':9} {'speedup':>8} {'secs':>7} flags")
    bad = 0
    by_suite = {}
    secs, speed, fresh = [], [], 0
    reasons, phases = {}, {}
    for r in recs:
        ev = r.get("eval") or {}
        name = r.get("cheat") or r.get("id", "?")
        sp = ev.get("speedup")
        line = (f"{name[:44]:44} {str(ev.get('call')):5} {str(ev.get('exec')):5} "
                f"{str(ev.get('reason')):9} {('%.3f' % sp) if sp else '-':>8} "
                f"{ev.get('seconds', 0):7.1f} {','.join(ev.get('flags') or [])}")
        if r.get("error"):
            line += " ERROR " + r["error"].get("message", "")[:80]
        if expect_dir and r.get("cheat"):
            name = r["cheat"]
            # tbg-NAME: tests/cheats/tbg/NAME.py, a TritonBench-style task's cheat
            rel = os.path.join("tbg", name[4:]) if name.startswith("tbg-") else name
            with open(os.path.join(expect_dir, rel + ".py")) as fp:
                want = re.search(r"^# expect: (.*)$", fp.read(), re.M).group(1)
            ok = expect_ok(want, ev)
            bad += not ok
            line += f"  [{'ok' if ok else 'NOT OK'}: {want}]"
        print(line)
        suite = (r.get("task") or {}).get("suite", "?")
        s = by_suite.setdefault(suite, [0, 0, 0])
        s[0] += 1
        s[1] += ev.get("call") is True
        s[2] += ev.get("exec") is True
        if ev:
            secs.append(ev.get("seconds", 0))
            fresh += not ev.get("cached")
            for k, v in (ev.get("phases") or {}).items():
                phases.setdefault(k, []).append(v)
        if ev.get("exec") is not True or r.get("error"):
            why = ev.get("reason") or (r.get("error") or {}).get("kind") or "?"
            reasons[(suite, why)] = reasons.get((suite, why), 0) + 1
        if sp:
            speed.append(sp)
    print()
    for suite, (n, c, e) in sorted(by_suite.items()):
        print(f"{suite}: {n} records, call {c}/{n}, exec {e}/{n}")
    for (suite, why), n in sorted(reasons.items()):
        print(f"  not passing: {suite} {why}: {n}")
    if secs:
        secs.sort()
        p90 = secs[min(len(secs) - 1, math.ceil(0.9 * len(secs)) - 1)]
        print(f"seconds per candidate: median {statistics.median(secs):.1f}, p90 {p90:.1f}, "
              f"max {max(secs):.1f} ({len(secs)} records, {fresh} evaluated in this run)")
    if phases:
        print("phase medians (s): " + ", ".join(
            f"{k} {statistics.median(v):.2f}" for k, v in sorted(phases.items())))
    if wall:
        print(f"this run: {len(recs)} records in {wall:.0f} s, {fresh} evaluated: "
              f"{60 * fresh / wall:.1f} evaluated/min, {60 * len(recs) / wall:.1f} records/min")
    if status:
        upstream_report(recs, upstream_runs(status))
    if speed:
        geo = math.exp(sum(math.log(x) for x in speed) / len(speed))
        near = sum(abs(x - 1) <= 0.02 for x in speed)
        print(f"speedups ({len(speed)}): min {min(speed):.3f} median {statistics.median(speed):.3f} "
              f"max {max(speed):.3f} geomean {geo:.3f}; within 2% of 1: {near}/{len(speed)}")
    case_ratios(recs)
    return 1 if bad else 0


def case_ratios(recs):
    """Each timed case's reference over candidate time, by the reference's
    time: where candidates are the references, a bias of the timing shows
    as a geomean away from 1 (host overhead shows in the smallest)."""
    bands = ((0.02, "<20 us"), (0.05, "20-50 us"), (0.2, "50-200 us"), (math.inf, ">=200 us"))
    got = {label: [] for _, label in bands}
    for r in recs:
        for c in (r.get("eval") or {}).get("shapes") or []:
            ms, ref = c.get("ms"), c.get("ms_ref")
            if ms and ref:
                got[next(label for top, label in bands if ref < top)].append(ref / ms)
    for label, xs in got.items():
        if xs:
            geo = math.exp(sum(math.log(x) for x in xs) / len(xs))
            near = sum(abs(x - 1) <= 0.02 for x in xs)
            print(f"cases {label:>9}: {len(xs):4} ratio geomean {geo:.3f}, within 2% {near}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
