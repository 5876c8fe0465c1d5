"""The ROCm benchmark's pytest files: correctness tests fill a result_gold
dict, test_performance cases time an operation through PytestBenchmarker.

Each session runs the code and the test part as one file under pytest, in
this process; the modules it imports go before the next session, so that
a session imports the code again.  The entry points are wrapped once the
file is collected, before any test runs.
"""
import os
import re
import sys

import pytest

from . import entry, launches, proto, source, spread

DESELECT = "not test_performance and not test_save_performance_results and not test_save_results"

# A launch that leaves a constexpr to an autotuner that does not set it.
_UNTUNED_ARG = re.compile(r"missing \d+ required (?:positional |keyword-only )?arguments?")


class Spread:
    """Runs at most cap of the session's test cases, spread over them as
    geakh.spread says (all where cap is 0); total counts them."""

    def __init__(self, cap=0):
        self.cap, self.total = cap, None

    # After -k has deselected what the session does not run.
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        self.total = len(items)
        keep = spread(len(items), self.cap)
        if len(keep) < len(items):
            kept = set(keep)
            config.hook.pytest_deselected(items=[it for i, it in enumerate(items) if i not in kept])
            items[:] = [items[i] for i in keep]


class Plugin(Spread):
    """Keeps the test modules and the failures; wraps the entry points."""

    def __init__(self, names, cap=0):
        super().__init__(cap)
        self.names = names
        self.modules = []
        self.failures = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        super().pytest_collection_modifyitems(session, config, items)
        for item in items:
            mod = getattr(item, "module", None)
            if mod is not None and mod not in self.modules:
                self.modules.append(mod)
                entry.install(mod.__dict__, self.names)

    def pytest_runtest_logreport(self, report):
        if report.failed:
            text = getattr(report, "longreprtext", "") or str(report.longrepr)
            self.failures.append((report.nodeid, failure_text(text)))


def failure_text(text, room=3000):
    """pytest's report of a failure, its "E" lines first."""
    errors = [line for line in text.splitlines() if line.startswith("E ")][-12:]
    head = "\n".join(errors)
    if not head:
        return text[-room:]
    return head + "\n" + text[-max(0, room - len(head)):]


def forget_modules(d):
    """Every module loaded from the job directory goes, so that the next
    session imports the file again."""
    root = os.path.realpath(d) + os.sep
    for key, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if isinstance(path, str) and _real(path).startswith(root):
            del sys.modules[key]


_REAL = {}


def _real(path):
    """os.path.realpath, remembered: thousands of modules are looked at
    per session, and their files stay where they are."""
    real = _REAL.get(path)
    if real is None:
        real = _REAL[path] = os.path.realpath(path)
    return real


def _file(program, test, sub):
    text, last = source.assemble(program.spec[proto.JOB_CODE], test)
    where = os.path.join(program.dir, sub)
    os.makedirs(where, exist_ok=True)
    path = os.path.join(where, program.name + ".py")
    with open(path, "w") as fp:
        fp.write(text)
    launches.COUNTER.watch(path, last)
    return path


def _names(program):
    spec = program.spec
    return entry.entry_names(spec.get(proto.JOB_REFERENCE) or spec[proto.JOB_CODE], spec.get(proto.JOB_TEST))


def session(program, test, sub, select, cap=0):
    """One pytest session of the code with test, at most cap of its cases
    run: (the plugin, exit code)."""
    path = _file(program, test, sub)
    forget_modules(program.dir)
    plugin = Plugin(_names(program), cap)
    code = pytest.main(_pytest_args(path, select), plugins=[plugin])
    return plugin, int(code)


def _pytest_args(path, select):
    """A session of the file at path, its tests selected by select.
    pytest's own plugins only, less those that capture logging and watch
    for unraisable exceptions (which collects garbage after each test):
    the tests use none of them, and loading, rewriting and running them
    cost most of a session's time."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return [path, "-q", "-p", "no:cacheprovider", "-p", "no:logging", "-p", "no:unraisableexception",
            "-p", "no:threadexception", "--noconftest", "-k", select,
            "--rootdir", os.path.dirname(path), "-o", "python_files=*.py",
            "--import-mode=importlib"]


def _gold(program, test, sub):
    plugin, code = session(program, test, sub, DESELECT)
    gold = None
    for mod in plugin.modules:
        if isinstance(getattr(mod, "result_gold", None), dict):
            gold = mod.result_gold
    if gold is None:
        raise RuntimeError(f"pytest exited with {code} and collected no result_gold")
    flag = gold.get("_CALL_SUCCESS_")
    if flag is None or float(flag.flatten()[0]) != 1.0:
        return None, plugin.failures
    return dict(gold), plugin.failures


def _test(program):
    """The test part the code runs under: an autotuning candidate's variant
    when it has one and can launch under it (see correctness)."""
    spec = program.spec
    if spec.get(proto.JOB_CAND_TEST) and "original_test" not in program.notes:
        return spec[proto.JOB_CAND_TEST]
    return spec.get(proto.JOB_TEST) or ""


def correctness(program):
    """result_gold of the file's correctness tests.  An autotuning
    candidate runs the task's variant that passes no launch
    meta-parameters; one whose autotuner tunes fewer of them than that
    variant leaves out cannot launch under it, and runs the original test
    instead, noted "original_test"."""
    spec = program.spec
    test = _test(program)
    gold, failures = _gold(program, test, "run")
    if gold is None and test is spec.get(proto.JOB_CAND_TEST) and \
            any(_UNTUNED_ARG.search(text) for _, text in failures):
        program.notes.add("original_test")
        # The variant's calls up to its failed launches are not the run's.
        entry.STATE.begin_run()
        gold, failures = _gold(program, spec.get(proto.JOB_TEST) or "", "original")
    if gold is None:
        first = failures[0] if failures else ("", "no test case completed")
        raise RuntimeError(f"no correctness test completed; first failure {first[0]}:\n{first[1]}")
    return gold


def reference_ops(program, visit=None, only=None):
    """The reference's file's test_performance cases (those named in only,
    where given), each called once and kept as its operation (its inputs
    with it) while a quarter of the device's memory holds them, for the
    candidate's cases to be timed against: (kept, over).  A case past that
    budget is timed alone here where visit is given (visit's alone_ref);
    otherwise its key goes into over, for the timing to call
    reference_ops again for it."""
    import torch
    from geak_eval.perf.ROCm import performance_utils_pytest as pu
    spec = program.spec
    text, _ = source.assemble(spec[proto.JOB_REFERENCE], spec.get(proto.JOB_TEST) or "")
    where = os.path.join(program.dir, "ref-perf")
    os.makedirs(where, exist_ok=True)
    path = os.path.join(where, program.name + ".py")
    with open(path, "w") as fp:
        fp.write(text)
    kept, over = {}, set()
    base = torch.cuda.memory_allocated()
    budget = torch.cuda.get_device_properties(0).total_memory // 4

    def keep(fn, key):
        if only is not None and key not in only:
            return (1.0, 1.0, 1.0)
        fn = source.on_reference_cache(lambda _, op=fn: op())
        fn(None)
        torch.cuda.synchronize()
        if torch.cuda.memory_allocated() - base <= budget:
            kept[key] = fn
        elif visit is None:
            over.add(key)
        else:
            return visit(key, None, fn, None, None, None, alone_ref=True) or (1.0, 1.0, 1.0)
        return (1.0, 1.0, 1.0)
    forget_modules(program.dir)
    pu.TIMER = keep
    try:
        pytest.main(_pytest_args(path, "test_performance"), plugins=[Spread(program.cases_cap)])
    finally:
        pu.TIMER = None
        pu._RESULTS.clear()
    return kept, over


def performance(program, visit, with_reference=False):
    """Every test_performance case, through the benchmarker: visit(key,
    make, call, meta) for each, its return value the benchmarker's
    (median, min, max) ms; with_reference, the reference's operation of
    the same case (see reference_ops) as visit's ref.  Returns each
    case's bytes and operations per call ({key: {"gbps", "tflops"} at 1
    ms}) where the file's calculators give them, and raises where pytest
    found failures."""
    from geak_eval.perf.ROCm import performance_utils_pytest as pu
    kept = {}
    if with_reference:
        kept, over = program._ref()
        if over:  # timed alone now, or kept where they fit this time
            kept.update(reference_ops(program, visit, over)[0])
    pu._RESULTS.clear()

    def timer(fn, key):
        ref = kept.pop(key, None)
        got = visit(key, lambda poison=False: None, lambda _: fn(), None, None, None, ref=ref)
        return got if got is not None else (1.0, 1.0, 1.0)
    pu.TIMER = timer
    try:
        plugin, code = session(program, _test(program), "perf", "test_performance",
                               program.cases_cap)
    finally:
        pu.TIMER = None
    program.cases_total = plugin.total
    counts = {}
    for op, rows in pu._RESULTS.items():
        for row in rows:
            key = pu.case_key(op, row["params"])
            counts[key] = {k: row.get(src)
                           for k, src in ((proto.CASE_GBPS, "GB/s"), (proto.CASE_TFLOPS, "TFLOPS"))
                           if isinstance(row.get(src), (int, float)) and row.get("ms") == 1.0}
    if plugin.failures:
        nodeid, text = plugin.failures[0]
        raise RuntimeError(f"test_performance failed ({len(plugin.failures)} cases); first {nodeid}:\n{text}")
    return counts
