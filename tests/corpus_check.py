#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the retrieval corpus in share/corpus/ and report the result as TAP.

Every share/corpus/*.py file is run in a process of its own (TRITON_INTERPRET=1,
60 s timeout), forked from this one once it has imported torch and Triton
(seconds an import, more than most checks take): the module is imported by
path, the wrapper named by its module-level ENTRY is called on
_example_inputs("cpu") and the result is compared with _reference() using
torch.testing.assert_close. Tolerances come
from an optional module-level TOLERANCE (a dict of atol/rtol, or a list of such
dicts, one per returned tensor), otherwise from a per-dtype default table.
The same test line also checks the file's form: SPDX header, module docstring,
docstrings on every @triton.jit function, the ENTRY/_reference/_example_inputs
names, and no CUDA-only calls (torch.cuda, is_cuda).

Usage: corpus_check.py [FILE...]     (default: every file in share/corpus/)
Environment: GEAK_CORPUS_JOBS sets how many files are checked in parallel.
"""

import ast
import glob
import os
import signal
import sys
import tempfile
import time
import traceback

sys.dont_write_bytecode = True  # leave no __pycache__ in share/corpus/

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "share", "corpus")
TIMEOUT_S = int(os.environ.get("GEAK_CORPUS_TIMEOUT", "60"))
HEADER = "# SPDX-License-Identifier: MIT\n"
FORBIDDEN = ("torch.cuda", "is_cuda")
REQUIRED_NAMES = ("ENTRY", "_reference", "_example_inputs")


# ----------------------------------------------------------------------------
# Static checks (run in the parent, no torch needed)
# ----------------------------------------------------------------------------

def _is_triton_jit(decorator):
    """True for `@triton.jit` and `@triton.jit(...)`."""
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    return (isinstance(decorator, ast.Attribute) and decorator.attr == "jit"
            and isinstance(decorator.value, ast.Name)
            and decorator.value.id == "triton")


def static_problems(path):
    """Return a list of human-readable problems with the file's form."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    problems = []
    if not src.startswith(HEADER):
        problems.append("first line is not the SPDX MIT header")
    for word in FORBIDDEN:
        if word in src:
            problems.append("contains %r" % word)
    try:
        tree = ast.parse(src, filename=path)
    except SyntaxError as e:
        return problems + ["syntax error: %s" % e]
    if not ast.get_docstring(tree):
        problems.append("no module docstring")
    kernels = [node for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef)
               and any(_is_triton_jit(d) for d in node.decorator_list)]
    if not kernels:
        problems.append("no @triton.jit function")
    for node in kernels:
        if not ast.get_docstring(node):
            problems.append("@triton.jit %s has no docstring" % node.name)
    defined = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    for name in REQUIRED_NAMES:
        if name not in defined:
            problems.append("no module-level %s" % name)
    return problems


# ----------------------------------------------------------------------------
# Numerical check (run in a forked process)
# ----------------------------------------------------------------------------

def _default_tolerance(dtype):
    import torch
    table = {
        torch.float64: dict(atol=1e-7, rtol=1e-7),
        torch.float32: dict(atol=1e-5, rtol=1e-5),
        torch.float16: dict(atol=2e-3, rtol=2e-3),
        torch.bfloat16: dict(atol=1.6e-2, rtol=1.6e-2),
    }
    if dtype in table:
        return table[dtype]
    if dtype.is_floating_point:      # 8-bit floats: one ulp is 1/8 relative
        return dict(atol=1e-3, rtol=0.125)
    return dict(atol=0, rtol=0)      # integers and bool: exact


def _flatten(obj):
    if isinstance(obj, (tuple, list)):
        out = []
        for item in obj:
            out.extend(_flatten(item))
        return out
    return [obj]


def _clone(obj):
    import torch
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, (tuple, list)):
        return type(obj)(_clone(o) for o in obj)
    return obj


def _compare(actual, expected, tolerance):
    import torch
    actual, expected = _flatten(actual), _flatten(expected)
    if len(actual) != len(expected):
        raise AssertionError("wrapper returned %d values, _reference %d"
                             % (len(actual), len(expected)))
    if isinstance(tolerance, dict):
        tolerance = [tolerance] * len(actual)
    if tolerance is not None and len(tolerance) != len(actual):
        raise AssertionError("TOLERANCE lists %d entries for %d outputs"
                             % (len(tolerance), len(actual)))
    for i, (a, e) in enumerate(zip(actual, expected)):
        if not isinstance(e, torch.Tensor):
            e = torch.as_tensor(e)
        if not isinstance(a, torch.Tensor):
            raise AssertionError("output %d is %s, not a tensor" % (i, type(a).__name__))
        if a.dtype != e.dtype:
            raise AssertionError("output %d: dtype %s, expected %s" % (i, a.dtype, e.dtype))
        tol = tolerance[i] if tolerance is not None else _default_tolerance(e.dtype)
        if e.dtype.is_floating_point and e.element_size() == 1:
            # assert_close has no arithmetic for 8-bit floats; compare values.
            a, e = a.float(), e.float()
        # Fast path: same acceptance rule as assert_close (|a - e| <= atol +
        # rtol * |e|, NaNs equal), without the costly import of its helpers;
        # assert_close itself runs only to explain a failure.
        try:
            if (a.shape == e.shape and a.device == e.device
                    and bool(torch.isclose(a, e, equal_nan=True, **tol).all())):
                continue
        except RuntimeError:
            pass
        try:
            torch.testing.assert_close(a, e, **tol)
        except AssertionError as err:
            raise AssertionError("output %d: %s" % (i, " ".join(str(err).split())))


def run_one(path):
    """Import the corpus file by path and check its wrapper against _reference."""
    import importlib.util
    name = "corpus_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entry = getattr(module, getattr(module, "ENTRY"))
    inputs = module._example_inputs("cpu")
    if not isinstance(inputs, tuple):
        raise AssertionError("_example_inputs must return a tuple")
    # The reference sees its own copy so in-place wrappers cannot affect it.
    expected = module._reference(*_clone(inputs))
    actual = entry(*inputs)
    _compare(actual, expected, getattr(module, "TOLERANCE", None))


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------

def start(path):
    """Fork the check of one corpus file: (pid, the file its stderr goes to)."""
    err = tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(ROOT)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(err.fileno(), 2)
            run_one(path)
            code = 0
        except BaseException:  # noqa: B902 - reported as the file's failure
            traceback.print_exc()
        finally:
            sys.stderr.flush()
            os._exit(code)
    return pid, err


def verdict(status, err):
    """(ok, reason) from a check's wait status and its stderr."""
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return True, ""
    err.seek(0)
    lines = [l for l in err.read().decode("utf-8", "replace").splitlines() if l.strip()]
    if lines:
        return False, lines[-1].strip()[:500]
    if os.WIFSIGNALED(status):
        return False, "killed by signal %d" % os.WTERMSIG(status)
    return False, "exit status %d" % os.WEXITSTATUS(status)


def check_all(paths, jobs):
    """(ok, reason) for each corpus file, yielded in the order of paths:
    at most jobs checks run at once, each killed at TIMEOUT_S."""
    results = {}
    running = {}  # pid: (index, stderr's file, deadline)
    todo = list(enumerate(paths))
    done = 0
    while done < len(paths):
        while todo and len(running) < jobs:
            k, path = todo.pop(0)
            problems = static_problems(path)
            if problems:
                results[k] = (False, "; ".join(problems))
            else:
                pid, err = start(path)
                running[pid] = (k, err, time.monotonic() + TIMEOUT_S)
        while done in results:
            yield results.pop(done)
            done += 1
        if not running:
            continue
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid in running:
            k, err, _ = running.pop(pid)
            results[k] = verdict(status, err)
            err.close()
            continue
        now = time.monotonic()
        for pid, (k, err, deadline) in list(running.items()):
            if now >= deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                del running[pid]
                results[k] = (False, "timed out after %d s" % TIMEOUT_S)
                err.close()
        time.sleep(0.02)


def main(argv):
    paths = [os.path.abspath(p) for p in argv[1:]] or sorted(glob.glob(os.path.join(CORPUS, "*.py")))
    print("1..%d" % len(paths))
    sys.stdout.flush()
    jobs = int(os.environ.get("GEAK_CORPUS_JOBS", "0")) or min(8, os.cpu_count() or 1)
    # What the checks' processes inherit: set before torch and Triton are
    # imported, which read them then.
    os.environ["TRITON_INTERPRET"] = "1"
    os.environ.setdefault("OMP_NUM_THREADS", "1")   # parallel checks share the CPUs
    import torch  # noqa: F401
    import triton  # noqa: F401
    start_s = time.time()
    failed = 0
    for k, (path, (ok, reason)) in enumerate(zip(paths, check_all(paths, jobs)), 1):
        name = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
        if ok:
            print("ok %d - %s" % (k, name))
        else:
            failed += 1
            print("not ok %d - %s # %s" % (k, name, reason.replace("#", "\\#")))
        sys.stdout.flush()
    print("# %d of %d corpus files passed in %.1f s" % (len(paths) - failed, len(paths),
                                                          time.time() - start_s))
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
