#!/usr/bin/env python3
"""fuzz-tools.py: mutation fuzzing of every tool that reads records.

Each round takes seed records (tests/fuzz/records/*.jsonl and whatever
--seeds names), mutates them (bytes flipped, inserted, cut, spliced;
values swapped for numbers at and past the ranges of geak-record(5),
strings with NUL and control characters, deep or wide nesting, fields of
the wrong type) and runs one tool on the result with a watchdog.  Built
with `make SANITIZE=1`, the tools report memory errors, leaks and
undefined behaviour themselves; ASan's hard_rss_limit_mb caps each run's
memory.

A run is flagged when it
  - reports an error of a sanitizer (AddressSanitizer, LeakSanitizer,
    UndefinedBehaviorSanitizer) or passes the RSS cap,
  - dies by a signal, or exits with a status no tool gives (not 0, 1, 3, 4),
  - outlives --timeout (a hang),
  - or, for a filter, writes other than one line per line it read.
Its input, command and stderr are kept under --out; the summary (execs,
flags, the peak RSS of any run, in KiB) goes to stdout, and the exit
status is 1 when anything was flagged.
"""
import argparse
import glob
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

FIELDS = ["id", "run", "iter", "sample", "code", "code_sha", "mode", "task", "eval", "best",
          "history", "usage_total", "llm", "perf_debug", "oneshot", "oneshots", "selected",
          "error", "schema", "reflection", "strategy", "calls", "input_tokens",
          "output_tokens", "cost", "speedup", "ms", "shapes", "shapes_total", "difficulty",
          "level", "memory_mib", "timeout", "input_elements", "call", "exec", "stage",
          "reason", "model", "instruction", "reference", "test", "name", "suite", "flags"]
NUMBERS = [0, -1, 1, 2, 5, 255, 65536, 10**7, 10**9, 10**9 + 1, 10**15, 10**15 + 1,
           2**31 - 1, 2**31, 2**53 + 1, 2**62, 2**63 - 1, -2**63, 1e308, -1e308, 0.5,
           1e-300, 3.0]
STRINGS = ["", "t", "t\u0000a", "\u001b[2J\u001b]0;x\u0007", "\u009b31m", "a" * 5000,
           "../../x", "\ud7ff", "é", "{{code}}", "%s%n%x", "```python\nx\n```", "\n\n"]


def rand_value(rng, depth=0):
    k = rng.randrange(9)
    if k == 0:
        return rng.choice(NUMBERS)
    if k == 1:
        return rng.choice(STRINGS)
    if k == 2:
        return rng.choice([None, True, False])
    if k == 3 and depth < 4:
        return {rng.choice(FIELDS): rand_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    if k == 4 and depth < 4:
        return [rand_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if k == 5:
        # Deep nesting, and wide arrays.
        v = 1
        for _ in range(rng.choice([10, 100, 2100])):
            v = [v]
        return v
    if k == 6:
        return [{"code_sha": "s%d" % i, "iter": rng.choice(NUMBERS)}
                for i in range(rng.choice([1, 50, 3000]))]
    if k == 7:
        return rng.randrange(-2**63, 2**63)
    return rng.choice(NUMBERS + STRINGS)


def containers(v, out, depth=0):
    """The objects and arrays inside v (v too), to a depth of 30."""
    if isinstance(v, (dict, list)) and depth < 30:
        out.append(v)
        for x in (v.values() if isinstance(v, dict) else v):
            containers(x, out, depth + 1)
    return out


def mutate_json(rng, rec):
    for _ in range(rng.randrange(1, 4)):
        c = rng.choice(containers(rec, []))
        if isinstance(c, dict):
            key = rng.choice(list(c) + FIELDS) if c and rng.random() < 0.7 else rng.choice(FIELDS)
            if rng.random() < 0.15 and key in c:
                del c[key]
            else:
                c[key] = rand_value(rng)
        elif c and rng.random() < 0.7:
            c[rng.randrange(len(c))] = rand_value(rng)
        else:
            c.append(rand_value(rng))
    return rec


def mutate_bytes(rng, data, pool):
    data = bytearray(data)
    for _ in range(rng.randrange(1, 6)):
        k = rng.randrange(6)
        if k == 0 and data:
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif k == 1:
            i = rng.randrange(len(data) + 1)
            data[i:i] = bytes([rng.choice([0, 0x1b, 0x0a, 0x22, 0x5c, 0x7b, 0x7d, 0xc2,
                                           0xff, rng.randrange(256)])])
        elif k == 2 and data:
            i = rng.randrange(len(data))
            del data[i:i + rng.randrange(1, 16)]
        elif k == 3 and data:
            i = rng.randrange(len(data))
            j = min(len(data), i + rng.randrange(1, 64))
            data[i:i] = data[i:j] * rng.randrange(1, 8)
        elif k == 4:
            other = rng.choice(pool)
            i = rng.randrange(len(data) + 1)
            j = rng.randrange(len(other) + 1)
            data = data[:i] + other[j:]
        elif k == 5 and data:
            digits = [i for i, b in enumerate(data) if 0x30 <= b <= 0x39]
            if digits:
                i = rng.choice(digits)
                data[i:i + 1] = str(rng.choice(NUMBERS)).encode()
    return bytes(data)


def make_input(rng, pool, lines):
    out = []
    for _ in range(rng.randrange(1, 6)):
        line = rng.choice(lines)
        try:
            rec = json.loads(line)
        except ValueError:
            rec = None
        if isinstance(rec, dict) and rng.random() < 0.6:
            line = json.dumps(mutate_json(rng, rec), ensure_ascii=rng.random() < 0.5).encode()
        if rng.random() < 0.4:
            line = mutate_bytes(rng, line, pool)
        out.append(line)
    return b"\n".join(out) + (b"\n" if rng.random() < 0.9 else b"")


def records_in(data):
    """Lines the record reader does not skip as blank."""
    return sum(1 for ln in data.split(b"\n") if ln.strip(b" \t\r"))


def tools(bindir, scratch):
    corpus = os.path.join(scratch, "corpus.json")
    with open(corpus, "w") as f:
        json.dump([{"id": "k:add", "code": "import triton\n@triton.jit\ndef add_kernel(x):\n"
                    "    pass\n"}, {"id": "k:mul", "code": "def mul(a, b):\n    return a * b\n"}], f)
    empty = os.path.join(scratch, "empty.jsonl")
    open(empty, "w").close()
    b = lambda t: os.path.join(bindir, t)
    # (name, argv before the input file, a filter: one line out per line in)
    return [
        ("geak-select", [b("geak-select"), "-k", "1,2", "-s", os.path.join(scratch, "s.json"),
                         "-r", os.path.join(scratch, "r.html")], False),
        ("geak-select-md", [b("geak-select"), "-b", "3", "-r", os.path.join(scratch, "r.md")],
         False),
        ("geak-gen", [b("geak-gen"), "--dry-run", "-n", "2"], False),
        ("geak-opt", [b("geak-opt"), "--replay", empty], True),
        ("geak-reflect", [b("geak-reflect"), "--replay", empty], True),
        ("geak-retrieve", [b("geak-retrieve"), "-c", corpus, "--top", "2"], True),
        ("geak-eval", [b("geak-eval"), "--python", "/bin/false", "--tmpdir", scratch], False),
    ]


SAN_MARKS = (b"ERROR: AddressSanitizer", b"ERROR: LeakSanitizer", b"runtime error:",
             b"rss limit", b"SUMMARY: ", b"allocation-size-too-big", b"out of memory")


def run_one(argv, path, timeout, env):
    """Exit status (or -signal), stdout, stderr, peak RSS in KiB, hung."""
    with open(path, "rb") as stdin_unused, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        p = subprocess.Popen(argv + [path], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             env=env, start_new_session=True)
        deadline = time.monotonic() + timeout
        hung = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                hung = True
                os.killpg(p.pid, signal.SIGKILL)
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.005)
        p.returncode = 0  # reaped here, not by Popen
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        out.seek(0)
        err.seek(0)
        return rc, out.read(), err.read(), ru.ru_maxrss, hung


def verdict(name, filt, data, rc, out, err, rss, hung, rss_cap_kib):
    if hung:
        return "hang"
    for m in SAN_MARKS:
        if m in err:
            return "sanitizer: " + m.decode()
    if rss > rss_cap_kib:
        return "memory: %d KiB" % rss
    if rc < 0:
        return "signal %d" % -rc
    if rc not in (0, 1, 3, 4):
        return "exit %d" % rc
    if filt and rc in (0, 1, 4) and out.count(b"\n") != records_in(data):
        return "%d lines out for %d in" % (out.count(b"\n"), records_in(data))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(TOP, "bin"), help="the tools' folder")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--timeout", type=float, default=20, help="seconds a run may take")
    ap.add_argument("--rss-mib", type=int, default=1024, help="memory a run may use")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seeds", action="append", default=[], help="more seed files")
    ap.add_argument("--out", default="fuzz-out", help="where flagged inputs are kept")
    ap.add_argument("--only", help="comma-separated tool names")
    args = ap.parse_args()
    sys.setrecursionlimit(20000)  # json.dumps of the deepest nesting made

    seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(seed)
    files = sorted(glob.glob(os.path.join(HERE, "records", "*.jsonl")))
    for s in args.seeds:
        files += sorted(glob.glob(os.path.join(s, "*"))) if os.path.isdir(s) else [s]
    pool = [open(f, "rb").read() for f in files]
    lines = [ln for d in pool for ln in d.split(b"\n") if ln.strip()]
    if not lines:
        sys.exit("fuzz-tools: no seed records")
    os.makedirs(args.out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="geak-fuzz.")
    env = dict(os.environ)
    env.update({
        "ASAN_OPTIONS": "detect_leaks=1:exitcode=99:abort_on_error=0:hard_rss_limit_mb=%d:"
                        "malloc_limit_mb=%d:allocator_may_return_null=0" % (args.rss_mib,
                                                                             args.rss_mib),
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=98",
        "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
        "GEAK_SHAREDIR": os.path.join(TOP, "share"),
        "GEAK_BASE_URL": "http://127.0.0.1:9/v1",
    })
    for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEAK_API_KEY", "LLM_API_KEY"):
        env.pop(k, None)
    table = tools(args.bin, scratch)
    if args.only:
        table = [t for t in table if t[0] in args.only.split(",")]
    stats = {t[0]: {"execs": 0, "flagged": 0, "peak_kib": 0} for t in table}
    flagged = 0
    end = time.monotonic() + args.seconds
    n = 0
    try:
        while time.monotonic() < end:
            name, argv, filt = table[n % len(table)]
            n += 1
            data = make_input(rng, pool, lines)
            path = os.path.join(scratch, "in.jsonl")
            with open(path, "wb") as f:
                f.write(data)
            rc, out, err, rss, hung = run_one(argv, path, args.timeout, env)
            st = stats[name]
            st["execs"] += 1
            st["peak_kib"] = max(st["peak_kib"], rss)
            why = verdict(name, filt, data, rc, out, err, rss, hung, args.rss_mib * 1024)
            if why:
                flagged += 1
                st["flagged"] += 1
                base = os.path.join(args.out, "%s-%d" % (name, st["execs"]))
                with open(base + ".jsonl", "wb") as f:
                    f.write(data)
                with open(base + ".err", "wb") as f:
                    f.write(("# %s\n# %s\n" % (why, " ".join(argv + ["FILE"]))).encode() + err)
                print("fuzz-tools: %s: %s (kept as %s.jsonl)" % (name, why, base), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    total = sum(s["execs"] for s in stats.values())
    peak = max((s["peak_kib"] for s in stats.values()), default=0)
    for name, s in stats.items():
        print("fuzz-tools: %-15s %6d execs, %d flagged, peak RSS %d KiB" %
              (name, s["execs"], s["flagged"], s["peak_kib"]))
    print("fuzz-tools: seed %d: %d execs in %.0f s, %d flagged, peak RSS %d KiB" %
          (seed, total, args.seconds, flagged, peak))
    sys.exit(1 if flagged else 0)


if __name__ == "__main__":
    main()
