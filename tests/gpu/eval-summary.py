"""Summarise geak-eval output: one row per record, then pass counts per
suite, seconds per candidate and the spread of speedups.  With --expect,
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


def main(argv):
    expect_dir = None
    if argv[:1] == ["--expect"]:
        expect_dir, argv = argv[1], argv[2:]
    recs = list(rows(argv))
    print(f"{'id':44} {'call':5} {'exec':5} {'reason':9} {'speedup':>8} {'secs':>7} flags")
    bad = 0
    by_suite = {}
    secs, speed = [], []
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
            with open(os.path.join(expect_dir, r["cheat"] + ".py")) as fp:
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
        if not ev.get("cached"):
            secs.append(ev.get("seconds", 0))
        if sp:
            speed.append(sp)
    print()
    for suite, (n, c, e) in sorted(by_suite.items()):
        print(f"{suite}: {n} records, call {c}/{n}, exec {e}/{n}")
    if secs:
        print(f"seconds per evaluated candidate: median {statistics.median(secs):.1f}, "
              f"max {max(secs):.1f}, total {sum(secs):.1f} ({len(secs)} evaluated)")
    if speed:
        geo = math.exp(sum(math.log(x) for x in speed) / len(speed))
        print(f"speedups ({len(speed)}): min {min(speed):.3f} median {statistics.median(speed):.3f} "
              f"max {max(speed):.3f} geomean {geo:.3f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
