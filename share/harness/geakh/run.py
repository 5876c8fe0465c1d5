"""Run code under test (a candidate or a reference) and save its outputs.

This is the untrusted side: it imports the code, runs the task's test once
per seed (and the first seed twice), and writes outputs.pt and then
result.json, which carries the run's nonce and the digest of outputs.pt.
Nothing here decides pass or fail.
"""
import ast
import collections
import hashlib
import importlib.util
import json
import os
import resource
import sys
import time
import traceback

import torch

from . import SEPARATOR, guard, judge

_TASK_MODULE_PREFIX = "geak_eval.data.TritonBench.data.TritonBench_G_v1."


class Opaque:
    pass


def classify(exc):
    """The reason class of an exception raised by code under test."""
    if isinstance(exc, SyntaxError):
        return "syntax"
    for cls in type(exc).__mro__:
        if cls.__name__ in ("CompilationError", "CompileTimeAssertionFailure",
                            "UnsupportedLanguageConstruct"):
            return "compile"
    return "runtime"


# Left in the job's directory when the code ran out of GPU memory: run
# beside other jobs, geak-eval then runs the job again on a drained GPU,
# since the memory the others held may be what it lacked.
OOM_MARK = "oom"


def mark_oom(exc):
    if isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc):
        try:
            with open(OOM_MARK, "w"):
                pass
        except OSError:
            pass


def error_info(exc):
    mark_oom(exc)
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(tb)
    head = f"{type(exc).__name__}: {exc}".strip()
    if getattr(exc, "__notes__", None):  # where it happened (timing.calling)
        head = f"{head} ({'; '.join(map(str, exc.__notes__))})"
    return {"kind": classify(exc), "message": head[:2000], "traceback": text[-6000:]}


# ---- assembling the module ------------------------------------------------

def _calls_test(node):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) \
                and sub.func.id.startswith("test_"):
            return True
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) \
                and sub.id.startswith("test_"):
            return True
    return False


def strip_tests(code):
    """Drop the candidate's own test functions and the statements that call
    them (GEAK-eval does the same): the task's test part is the only test."""
    tree = ast.parse(code)
    keep = []
    changed = False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            changed = True
            continue
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and _calls_test(node):
            changed = True
            continue
        keep.append(node)
    if not changed:
        return code
    tree.body = keep
    return ast.unparse(tree) + "\n"


def test_imports(test, own=None):
    """The import statements at the top level of a test part, as source:
    GEAK-eval's perf scripts import the whole file, test part and all, so
    a kernel module may lean on names only its test part imports.  An
    import of the task's own module (own) is left out."""
    try:
        tree = ast.parse(test or "")
    except SyntaxError:
        return ""
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, ast.ImportFrom) and own and (n.module or "").split(".")[-1] == own)
            and not (isinstance(n, ast.Import) and own and any(a.name.split(".")[-1] == own for a in n.names))]
    return "".join(ast.unparse(n) + "\n" for n in keep)


def unshadow(code, test):
    """The test part without its own definitions of functions and classes
    that the code defines: one TritonBench test part carries a copy of
    the kernel and its wrapper, which would replace the candidate's and
    leave the candidate untested."""
    try:
        defined = {n.name for n in ast.parse(code).body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        tree = ast.parse(test)
    except SyntaxError:
        return test
    keep = [n for n in tree.body if not (
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name in defined)]
    if len(keep) == len(tree.body):
        return test
    tree.body = keep
    return ast.unparse(tree) + "\n"


def assemble(code, test):
    """code + separator + test, and the last line that belongs to code."""
    head = code.rstrip("\n") + "\n"
    text = head + "\n" + SEPARATOR + "\n\n" + test.lstrip("\n")
    return text, head.count("\n")


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def gold_call(test):
    """The expression assigned to result_gold in a test part, compiled, so
    that the test can be run again with other seeds."""
    tree = ast.parse(test)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "result_gold" for t in node.targets) \
                and isinstance(node.value, ast.Call):
            return compile(ast.Expression(node.value), "<test>", "eval")
    return None


# ---- outputs ---------------------------------------------------------------

def portable(x, mod_name, notes, depth=0, host=True):
    """Outputs as plain data for torch.save: tensors on the CPU (where
    they are, without host), containers kept; a tensor subclass is kept as
    it is (the judge's safe loader then refuses it); any other object
    becomes a marker naming its class."""
    if depth > 50:
        raise RecursionError("outputs nested too deeply")
    if isinstance(x, torch.Tensor):
        if type(x) not in (torch.Tensor, torch.nn.Parameter):
            notes.add("tensor_subclass")
            return x
        return x.detach().to("cpu").clone() if host else x.detach().clone()
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes, torch.dtype)):
        return x
    if isinstance(x, torch.Size):
        return tuple(int(v) for v in x)
    if isinstance(x, (dict, collections.OrderedDict)):
        return {k if isinstance(k, (str, int, float, bool)) else repr(k):
                portable(v, mod_name, notes, depth + 1, host) for k, v in x.items()}
    if isinstance(x, tuple) and type(x) is not tuple and hasattr(x, "_fields"):
        return tuple(portable(v, mod_name, notes, depth + 1, host) for v in x)
    if type(x) in (list, tuple):
        return type(x)(portable(v, mod_name, notes, depth + 1, host) for v in x)
    try:
        import numpy as np
        if isinstance(x, np.ndarray):
            return torch.from_numpy(x.copy())
        if isinstance(x, np.generic):
            return x.item()
    except ImportError:
        pass
    cls = type(x)
    if getattr(cls, "__module__", "") == mod_name:
        notes.add("foreign_object")
    return {"__opaque__": f"{cls.__module__}.{cls.__qualname__}"}


def snapshot(args):
    return [a.detach().clone() if isinstance(a, torch.Tensor) else None for a in args]


def changed(args, snap):
    for a, s in zip(args, snap):
        if s is not None and isinstance(a, torch.Tensor):
            if a.shape != s.shape or not torch.equal(a.detach().nan_to_num(0.0),
                                                     s.nan_to_num(0.0)):
                return True
    return False


# ---- the job --------------------------------------------------------------

class Job:
    def __init__(self, spec, workdir, nonce, progress, poison=True):
        self.spec = spec
        # False for a task whose reference fails on poisoned memory: then
        # no run of it, the candidate's included, gets the poison, neither
        # from torch.empty nor left in the allocator's free blocks.
        self.poison = poison
        self.dir = workdir
        self.nonce = nonce
        self.progress = progress  # called once the first run (compile) is over
        if not poison:
            guard.LAUNCHES.hold_nothing()
        self.device = "cpu" if spec.get("cpu") else "cuda"
        self.name = spec["name"]
        self.runs = []
        self.outputs = []
        self.notes = set()
        self.part_tunings = []  # the autotuners' choices in run_split's children

    def seeds(self):
        seeds = list(self.spec.get("seeds") or [42])
        return [seeds[0]] + seeds if self.spec.get("repeat", True) else seeds

    def resample(self, again):
        """The reference's job ("resample": N) whose two runs on the first
        seed disagree runs every seed N times more (again(seed) is one
        more run): the judge leaves out every element where runs on one
        seed disagree, and kernels that scatter to colliding places give
        another winner on most calls (on an H200, 5 to 8 distinct outputs
        in 8 calls of kv_cache_filling, quantize_copy_kv, quantize_kv_copy
        and decay_cumsum), so two runs show only a part of what races."""
        extra = int(self.spec.get("resample") or 0)
        if extra < 1 or not self.spec.get("repeat", True) or len(self.outputs) < 2 \
                or not all(r["ok"] for r in self.runs):
            return
        if judge.unstable(self.outputs[0], self.outputs[1], *judge.tolerance(self.spec)) is None:
            return
        for seed in dict.fromkeys(self.seeds()):
            for _ in range(extra):
                if not self.one(seed, lambda: again(seed)):
                    # A reference that reads memory it does not own can
                    # fault on a later call (rotary_emb_nopad on an H200);
                    # what it gave before stands, without this run.
                    self.runs.pop()
                    self.outputs.pop()
                    return

    def one(self, seed, call):
        before = guard.LAUNCHES.count
        guard.LAUNCHES.begin_call()
        threads = guard.python_threads()
        t0 = time.monotonic()
        rec = {"seed": seed}
        try:
            if self.poison:
                guard.poison(self.device)
            guard.reseed(seed)
            out, modified = call()
            if self.device == "cuda":
                torch.cuda.synchronize()
            rec["ok"] = True
            rec["inputs_modified"] = bool(modified)
            rec["tensors"], rec["kernel_tensors"] = guard.kernel_written(out, guard.LAUNCHES.ptrs)
            guard.LAUNCHES.begin_call()  # let the arguments go
            self.outputs.append(portable(out, self.name, self.notes))
        except BaseException as exc:  # noqa: B902 - SystemExit from the code counts too
            rec["ok"] = False
            rec["error"] = error_info(exc)
            self.outputs.append(None)
        rec["seconds"] = round(time.monotonic() - t0, 4)
        rec["launches"] = guard.LAUNCHES.count - before
        if guard.python_threads() > threads:
            self.notes.add("threads_left_running")
        self.runs.append(rec)
        if len(self.runs) == 1:
            self.progress()
        return rec["ok"]

    # -- suites --

    def run_tbg(self):
        spec = self.spec
        code = spec["code"]
        try:
            code = strip_tests(code)
        except SyntaxError as exc:
            return self.fail(exc)
        text, last = assemble(code, unshadow(code, spec.get("test", "")))
        path = os.path.join(self.dir, self.name + ".py")
        with open(path, "w") as fp:
            fp.write(text)
        guard.LAUNCHES.watch(path, last)
        sys.path.insert(0, self.dir)
        holder = {}

        def first():
            holder["mod"] = mod = load_module(self.name, path)
            if "result_gold" not in mod.__dict__:
                expr = gold_call(spec.get("test", ""))
                if expr is None:
                    raise RuntimeError("the test part sets no result_gold")
                return eval(expr, mod.__dict__), False
            return mod.result_gold, False
        seeds = self.seeds()
        if not self.one(seeds[0], first):
            return
        expr = gold_call(spec.get("test", ""))
        if expr is None:
            return

        def again(seed):
            return eval(expr, holder["mod"].__dict__), False
        for s in seeds[1:]:
            if not self.one(s, lambda: again(s)):
                return
        self.resample(again)

    def run_plain(self):
        spec = self.spec
        path = os.path.join(self.dir, self.name + ".py")
        with open(path, "w") as fp:
            fp.write(spec["code"])
        guard.LAUNCHES.watch(path)
        sys.path.insert(0, self.dir)
        try:
            mod = load_module(self.name, path)
        except BaseException as exc:  # noqa: B902
            return self.fail(exc)
        entry = spec.get("entry") or self.name
        fn = getattr(mod, entry, None)
        if not callable(fn):
            return self.fail(AttributeError(f"the code defines no function '{entry}'"))
        tpath = os.path.join(self.dir, "geak_task_test.py")
        with open(tpath, "w") as fp:
            fp.write(spec.get("test", ""))
        test = load_module("geak_task_test", tpath)

        def call():
            if hasattr(test, "test"):
                return test.test(fn), False
            cases = test.inputs()
            if isinstance(cases, tuple):
                cases = [cases]
            outs, modified = [], False
            for args in cases:
                args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
                snap = snapshot(args)
                outs.append(fn(*args))
                modified = modified or changed(args, snap)
            return outs, modified
        for s in self.seeds():
            if not self.one(s, call):
                return
        self.resample(lambda seed: call())

    def run_rocm(self):
        from . import rocm
        self.spec["repeat"] = False  # the file seeds itself; one session
        rocm.main(self)

    def run_split(self, suite):
        """Each run in a process of its own ("one_call": a reference that
        faults on its second call in a process, as token_attn_llama2 does
        on an H200 whatever the harness does, while GEAK-eval calls it
        once): a child forked per run, before anything here has touched
        the GPU, runs the suite's job on that seed alone and leaves its
        runs and outputs in files, which this process reads back with the
        judge's safe loader.  No resampling: every extra call would be
        another process."""
        for k, seed in enumerate(self.seeds()):
            base = os.path.join(self.dir, f"part-{k}")
            pid = os.fork()
            if pid == 0:
                self._one_part(suite, seed, base)
            _, status = os.waitpid(pid, 0)
            if not self._read_part(seed, base, status):
                return

    def _one_part(self, suite, seed, base):
        code = 1
        try:
            spec = dict(self.spec, seeds=[seed], repeat=False, resample=0, one_call=False)
            job = Job(spec, self.dir, self.nonce, self.progress, self.poison)
            getattr(job, "run_" + suite)()
            torch.save(job.outputs, base + ".pt")
            with open(base + ".json", "w") as fp:
                json.dump({"runs": job.runs, "notes": sorted(job.notes),
                           "launched": sorted(guard.LAUNCHES.names), "tunings": tunings()}, fp)
            code = 0
        finally:
            os._exit(code)

    def _read_part(self, seed, base, status):
        """The runs of one child, or one failed run saying why there are
        none; whether the next may follow."""
        try:
            with open(base + ".json") as fp:
                part = json.load(fp)
            runs = part["runs"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return self._no_part(seed, "crash", "the run's own process ended "
                                 f"(status {os.waitstatus_to_exitcode(status)}) without its "
                                 f"result ({str(exc)[:200]})")
        try:
            outs = judge.load_outputs(base + ".pt")
        except judge.Bad as exc:
            return self._no_part(seed, exc.reason, str(exc))
        if not isinstance(outs, list) or not isinstance(runs, list) or len(outs) != len(runs):
            return self._no_part(seed, "crash", "the run's own process left runs and outputs "
                                 "that do not pair up")
        self.runs.extend(runs)
        self.outputs.extend(outs)
        self.notes.update(part.get("notes") or [])
        guard.LAUNCHES.names.update(part.get("launched") or [])
        self.part_tunings.extend(part.get("tunings") or [])
        return all(isinstance(r, dict) and r.get("ok") for r in runs)

    def _no_part(self, seed, kind, message):
        self.runs.append({"seed": seed, "ok": False, "seconds": 0, "launches": 0,
                          "error": {"kind": kind, "message": message}})
        self.outputs.append(None)
        return False

    def fail(self, exc):
        self.runs.append({"seed": None, "ok": False, "error": error_info(exc),
                          "seconds": 0, "launches": 0})
        self.outputs.append(None)
        self.progress()

    def save(self):
        opath = os.path.join(self.dir, "outputs.pt")
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        size = nbytes(self.outputs)
        if limit != resource.RLIM_INFINITY and size > limit:
            # Past the limit torch.save fails with "unexpected pos".
            runs = f"{len(self.outputs)} run" + ("s" if len(self.outputs) != 1 else "")
            raise RuntimeError(f"the outputs of {runs} take {size / 2**20:.0f} MiB, more than a "
                               f"job may write in one file ({limit / 2**20:.0f} MiB: geak-eval "
                               "--file-limit)")
        torch.save(self.outputs, opath)
        with open(opath, "rb") as fp:
            digest = hashlib.sha256(fp.read()).hexdigest()
        result = {
            "nonce": self.nonce,
            "runs": self.runs,
            "outputs_sha256": digest,
            "notes": sorted(self.notes),
            "launched": sorted(guard.LAUNCHES.names),
            "secrets_in_env": guard.secret_names(),
            "tunings": tunings() + self.part_tunings,
        }
        tmp = os.path.join(self.dir, "result.json.tmp")
        with open(tmp, "w") as fp:
            json.dump(result, fp)
        os.replace(tmp, os.path.join(self.dir, "result.json"))


def nbytes(x):
    """The bytes of the tensors in x (in dicts, lists and tuples)."""
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, dict):
        return sum(nbytes(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(nbytes(v) for v in x)
    return 0


def tunings():
    """The autotuners' choices of this process (timing.Tunings.choices),
    where the worker installed the record of them; none where they cannot
    be told (they only steer the reference's second process)."""
    from . import timing  # it imports this module
    try:
        return timing.TUNINGS.choices()
    except Exception:  # noqa: BLE001 - a key or a configuration that cannot be shown
        return []


def main(workdir, nonce, progress, poison=True):
    with open(os.path.join(workdir, "job.json")) as fp:
        spec = json.load(fp)
    guard.LAUNCHES.install()
    job = Job(spec, workdir, nonce, progress, poison)
    suite = spec.get("suite")
    if spec.get("one_call") and suite != "rocm":  # a ROCm file is one pytest session
        job.run_split(suite)
    else:
        getattr(job, "run_" + suite)()
    job.save()
