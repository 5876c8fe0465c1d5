"""How each suite's code is loaded and its tests and performance cases run.

A Program is the code under test (a candidate, or the reference being
calibrated) loaded as its suite says, with its entry points wrapped (see
entry.py) and its own kernels watched (launches.py):

  run(seed)      one run of the task's test; returns its outputs
                 (result_gold, or the plain test's)
  cases(visit)   every performance case (at most spec[proto.JOB_PERF_CASES] of
                 them, see spread): visit(key, make, call, meta) with
                 make() a fresh copy of the case's inputs and call(x) the
                 operation on it; visit's return value goes back to a ROCm
                 file's benchmarker as its timing

Suites: "tbg" (TritonBench-revised: the kernel module, its test part run in
the module's namespace, a Performance_Metrics perf script), "plain" (geak's
own: a function, inputs() or test(fn), perf_inputs()), "rocm" (the ROCm
benchmark's pytest files, correctness tests and test_performance cases)
and "kernelbench" (a problem's Model, get_inputs() and get_init_inputs();
the code's ModelNew, built on the same seeded init inputs, called on the
same inputs, which are also its one performance case).
"""
import importlib
import importlib.util
import os
import sys

import torch

from . import entry, guard, intact, launches, proto, spread
from .source import gold_call, load_module, on_reference_cache, strip_tests, test_imports, unshadow

COUNTER = launches.COUNTER
TBG_PACKAGE = "geak_eval.data.TritonBench.data.TritonBench_G_v1"
# The reference, where the timing loads it beside the code under test.
REF_MODULE = "geak_reference_side"

# Bytes after each performance input tensor that a kernel reading past the
# end finds: zeros, the same for every run (or, in one calibration run, the
# poison, to see which outputs depend on them).
GUARD_BYTES = 256 << 10


def _write(path, text):
    with open(path, "w") as fp:
        fp.write(text)
    return path


def _run_in(mod, path, text):
    exec(compile(text, path, "exec"), mod.__dict__)


# ---- performance inputs -----------------------------------------------------


def guarded(t, poison):
    """A copy of t followed in memory by a guard zone (zeros, or the
    poison): a kernel that reads past its input's end (some perf scripts
    give it shorter inputs than it reads) finds the same bytes in every
    run."""
    if t.requires_grad or t.numel() == 0 or not t.is_contiguous():
        return t.clone()
    n = t.numel()
    with torch.no_grad():
        buf = torch.empty(n + max(1, GUARD_BYTES // t.element_size()), dtype=t.dtype, device=t.device)
        if poison:
            guard.fill_poison(buf[n:])
        else:
            buf[n:].zero_()
        buf[:n].copy_(t.reshape(-1))
    return buf[:n].view(t.shape)


def clone(x, poison=False):
    if isinstance(x, torch.Tensor):
        return guarded(x, poison)
    if isinstance(x, tuple):
        return tuple(clone(v, poison) for v in x)
    if isinstance(x, list):
        return [clone(v, poison) for v in x]
    if isinstance(x, dict):
        return {k: clone(v, poison) for k, v in x.items()}
    return x


class Meta:
    """A case's figures: bytes and operations per call, from the perf
    script's GB/s and TFLOP/s at a time of 1 ms."""

    def __init__(self, gbps=None, tflops=None):
        self.gbps, self.tflops = gbps, tflops

    def counts(self, inp):
        out = {}
        for key, f in ((proto.CASE_GBPS, self.gbps), (proto.CASE_TFLOPS, self.tflops)):
            if callable(f):
                try:
                    out[key] = float(f(inp, 1.0))  # the rate at 1 ms
                except Exception:  # noqa: BLE001 - an optional figure
                    pass
        return out


# ---- the suites ---------------------------------------------------------------

class Program:
    """See the module's docstring.  spec: the job's task and code."""

    def __init__(self, spec, workdir):
        self.spec = spec
        self.dir = workdir
        self.name = spec[proto.JOB_NAME]
        self.suite = spec[proto.JOB_SUITE]
        self.device = "cpu" if spec.get(proto.JOB_CPU) else "cuda"
        self.mod = None
        self.again = None   # tbg: the test's result_gold call, compiled
        self.perf_mod = None
        self.perf_cases = None  # a perf script's made inputs, kept for the timing
        self.cases_total = None  # how many performance cases the task has
        self.cases_cap = int(spec.get(proto.JOB_PERF_CASES) or 0)  # run at most this many
        self.ref_side = None  # ("ok", the reference's side) or ("raise", why), see prepare
        self.notes = set()
        sys.path.insert(0, workdir)

    # -- correctness --

    def run(self, seed):
        return getattr(self, "_run_" + self.suite)(seed)

    def _load_tbg(self, with_test):
        code = strip_tests(self.spec[proto.JOB_CODE])
        test = unshadow(code, self.spec.get(proto.JOB_TEST) or "")
        path = _write(os.path.join(self.dir, self.name + ".py"), code)
        COUNTER.watch(path)
        importlib.import_module(TBG_PACKAGE)  # the perf scripts import the module through it
        self.mod = load_module(self.name, path, (TBG_PACKAGE + "." + self.name,))
        names = entry.entry_names(self.spec.get(proto.JOB_REFERENCE) or self.spec[proto.JOB_CODE],
                                  self.spec.get(proto.JOB_TEST), self.spec.get(proto.JOB_PERF))
        entry.install(self.mod.__dict__, names)
        tpath = os.path.join(self.dir, self.name + "_test.py")
        if with_test:
            _run_in(self.mod, _write(tpath, test), test)
        else:
            imports = test_imports(self.spec.get(proto.JOB_TEST), self.name)
            _run_in(self.mod, _write(tpath, imports), imports)

    def _run_tbg(self, seed):
        if self.mod is None:
            self._load_tbg(with_test=True)
            if "result_gold" not in self.mod.__dict__:
                raise RuntimeError("the test part sets no result_gold")
            return self.mod.result_gold
        if self.again is None:
            self.again = gold_call(self.spec.get(proto.JOB_TEST) or "")
            if self.again is None:
                raise RuntimeError("the test part assigns result_gold no call to run again")
        return eval(self.again, self.mod.__dict__)

    def _load_plain(self):
        path = _write(os.path.join(self.dir, self.name + ".py"), self.spec[proto.JOB_CODE])
        COUNTER.watch(path)
        self.mod = load_module(self.name, path)
        fn_name = self.spec.get(proto.JOB_ENTRY) or self.name
        if not callable(getattr(self.mod, fn_name, None)):
            raise AttributeError(f"the code defines no function '{fn_name}'")
        entry.install(self.mod.__dict__, [fn_name])
        self.fn = getattr(self.mod, fn_name)

    def _run_plain(self, seed):
        if self.mod is None:
            self._load_plain()
            tpath = _write(os.path.join(self.dir, "geak_task_test.py"), self.spec.get(proto.JOB_TEST) or "")
            self.test = load_module("geak_task_test", tpath)
        if hasattr(self.test, "test"):
            return self.test.test(self.fn)
        cases = self.test.inputs()
        if isinstance(cases, tuple):
            cases = [cases]
        outs = []
        for args in cases:
            args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
            outs.append(self.fn(*args))
        return outs

    def _load_kernelbench(self):
        """The problem file (the reference: Model, get_inputs,
        get_init_inputs) as a module of its own, not watched, and the
        code's model class: ModelNew, or Model where the code is the
        problem itself (a reference judged as its own candidate)."""
        path = _write(os.path.join(self.dir, self.name + ".py"), self.spec[proto.JOB_CODE])
        COUNTER.watch(path)
        self.mod = load_module(self.name, path)
        cls_name = "ModelNew" if hasattr(self.mod, "ModelNew") else "Model"
        if not isinstance(getattr(self.mod, cls_name, None), type):
            raise AttributeError("the code defines no class ModelNew")
        entry.install(self.mod.__dict__, [cls_name], call_name="forward")
        self.model_cls = getattr(self.mod, cls_name)
        ppath = _write(os.path.join(self.dir, "geak_problem.py"), self.spec[proto.JOB_REFERENCE])
        self.problem = load_module("geak_problem", ppath)
        intact.watch(self.problem)

    def _model(self, cls, seed):
        """cls built on the problem's init inputs, seeded, on the device:
        the candidate's model and the reference's get the same weights
        where they make the same layers in the same order."""
        guard.reseed(seed)
        init = self.problem.get_init_inputs()
        guard.reseed(seed)
        return cls(*init).to(self.device)

    def _inputs(self, seed):
        """The problem's inputs on the device, their random values drawn
        there: the largest problems draw billions of elements, for which
        the host's generator takes seconds a seed."""
        guard.reseed(seed)
        with guard.drawn_on_device(self.device, keep_bytes=1 << 62):
            made = self.problem.get_inputs()
        return [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in made]

    def _run_kernelbench(self, seed):
        if self.mod is None:
            self._load_kernelbench()
        model = self._model(self.model_cls, seed)
        return model(*self._inputs(seed))

    def _cases_kernelbench(self, visit, with_reference):
        """One case: the problem's get_inputs() under the first seed."""
        if self.mod is None:
            self._load_kernelbench()
        seed = self.spec.get(proto.JOB_SEEDS, [42])[0]
        model = self._model(self.model_cls, seed)
        ref = self._ref() if with_reference else None
        inp = tuple(self._inputs(seed))
        self.cases_total = 1
        visit(0, lambda poison=False: clone(inp, poison), lambda a: model(*a), None, inp, inp, ref=ref)

    def _run_rocm(self, seed):
        from . import rocm
        return rocm.correctness(self)

    # -- performance --

    def cases(self, visit, with_reference=False):
        """See the module's docstring.  With with_reference, the reference
        is loaded beside the code (a module of its own, not watched) and
        visit gets ref=its call on the same case too, for the timing."""
        return getattr(self, "_cases_" + self.suite)(visit, with_reference)

    def prepare(self):
        """The reference's side of the timing, made before the timing's go
        (it needs the device, not the device alone), so that the window
        in which the timing holds the device alone holds the cases only.
        What fails here fails again, the same way, inside the timing."""
        if self.ref_side is not None:
            return
        try:
            self.ref_side = ("ok", getattr(self, "_ref_" + self.suite)())
        except Exception as exc:  # noqa: BLE001 - raised again by _ref
            self.ref_side = ("raise", exc)

    def _ref(self):
        self.prepare()
        how, side = self.ref_side
        if how == "raise":
            raise side
        return side

    def _ref_tbg(self):
        if self.mod is None:
            self._load_tbg(with_test=False)
        return on_reference_cache(self._reference_perf().call_op)

    def _ref_plain(self):
        rf = getattr(self._reference_module(), self.spec.get(proto.JOB_ENTRY) or self.name)
        return on_reference_cache(lambda a: rf(*a))

    def _ref_kernelbench(self):
        if self.mod is None:
            self._load_kernelbench()
        ref_model = self._model(self.problem.Model, self.spec.get(proto.JOB_SEEDS, [42])[0])
        return on_reference_cache(lambda a: ref_model(*a))

    def _ref_rocm(self):
        from . import rocm
        return rocm.reference_ops(self)

    def _reference_module(self, imports=""):
        rdir = os.path.join(self.dir, "ref")
        os.makedirs(rdir, exist_ok=True)
        path = _write(os.path.join(rdir, self.name + ".py"),
                      self.spec[proto.JOB_REFERENCE].rstrip("\n") + "\n" + imports)
        mod = load_module(REF_MODULE, path)
        intact.watch(mod)
        return mod

    def _reference_perf(self):
        """The perf script again, its imports of the task's module bound to
        the reference's: its call_op is the reference's operation."""
        ref = self._reference_module(test_imports(self.spec.get(proto.JOB_TEST), self.name))
        own = sys.modules[self.name], sys.modules.get(TBG_PACKAGE + "." + self.name)
        sys.modules[self.name] = sys.modules[TBG_PACKAGE + "." + self.name] = ref
        try:
            ppath = _write(os.path.join(self.dir, "ref", self.name + "_perf.py"), self.spec[proto.JOB_PERF])
            perf = load_module(REF_MODULE + "_perf", ppath)
            intact.watch(perf)
        finally:
            sys.modules[self.name] = own[0]
            if own[1] is not None:
                sys.modules[TBG_PACKAGE + "." + self.name] = own[1]
        return _perf_instance(perf)

    def _perf_script(self):
        if self.perf_mod is None:
            ppath = _write(os.path.join(self.dir, self.name + "_perf.py"), self.spec[proto.JOB_PERF])
            name = self.name + "_perf" if self.suite == "tbg" else "geak_perf_cases"
            self.perf_mod = load_module(name, ppath)
        return self.perf_mod

    def _cases_tbg(self, visit, with_reference):
        if self.mod is None:
            self._load_tbg(with_test=False)
        if self.perf_cases is None:
            # Made once per process: the checks and the timing use the
            # same inputs; their random values are drawn on the device.
            self.perf_cases = self._perf_inputs()
        pm = self.perf_cases
        ref = self._ref() if with_reference else None
        meta = Meta(getattr(pm, "get_gbps", None), getattr(pm, "get_tflops", None))
        host = pm.input_tensors
        self.cases_total = len(host)
        for i in spread(len(host), self.cases_cap):
            inp = pm.to_cuda(host[i])  # from the host, one case on the device at a time
            visit(i, lambda poison=False, inp=inp: clone(inp, poison), pm.call_op, meta, host[i], inp,
                  ref=ref)
            del inp

    def _perf_inputs(self):
        """The perf script's instance with its inputs, their random values
        drawn on the device and kept there (a script that mixes them with
        tensors it makes on the host gets them on the host, drawn alike),
        and the memory it takes from torch.empty and its kin zeroed."""
        seed = self.spec.get(proto.JOB_SEEDS, [42])[0]
        for keep in (True, False):
            pm = _perf_instance(self._perf_script())
            guard.reseed(seed)
            try:
                with guard.drawn_on_device(self.device, keep=keep), guard.zeroed_empties():
                    pm.get_input_tensors()
                return pm
            except (RuntimeError, TypeError):
                if not keep:
                    raise

    def _cases_plain(self, visit, with_reference):
        if self.mod is None:
            self._load_plain()
        perf = self._perf_script()
        fn = self.fn
        ref = self._ref() if with_reference else None
        guard.reseed(self.spec.get(proto.JOB_SEEDS, [42])[0])
        with guard.zeroed_empties():
            cases = [tuple(c) if isinstance(c, (list, tuple)) else (c,) for c in perf.perf_inputs()]
        meta = Meta(getattr(perf, "gbps", None), getattr(perf, "tflops", None))
        self.cases_total = len(cases)
        for i in spread(len(cases), self.cases_cap):
            inp = cases[i]
            visit(i, lambda poison=False, inp=inp: clone(inp, poison), lambda a: fn(*a), meta, inp, inp,
                  ref=ref)

    def _cases_rocm(self, visit, with_reference):
        from . import rocm
        return rocm.performance(self, visit, with_reference)


def _perf_instance(perf):
    """The perf script's Performance_Metrics subclass, made."""
    from geak_eval.perf.performance_utils import Performance_Metrics
    classes = [v for v in vars(perf).values() if isinstance(v, type)
               and issubclass(v, Performance_Metrics) and v is not Performance_Metrics]
    if not classes:
        raise RuntimeError("the perf script defines no Performance_Metrics subclass")
    return classes[0]()
