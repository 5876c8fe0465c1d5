"""The code under test as text and as modules: the surgery its source gets
before it runs, and where its compiled kernels come from."""
import ast
import importlib.util
import os
import shutil
import sys
import tempfile

from . import SEPARATOR, proto


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
    """The code without its own test functions and the statements that call
    them: the task's test is the only test."""
    tree = ast.parse(code)
    keep = [n for n in tree.body if not (
        (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_"))
        or (not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _calls_test(n)))]
    if len(keep) == len(tree.body):
        return code
    tree.body = keep
    return ast.unparse(tree) + "\n"


def unshadow(code, test):
    """The test part without its own definitions of functions and classes
    that the code defines (a test part that carries a copy of the kernel's
    wrapper would otherwise test that copy)."""
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


def test_imports(test, own=None):
    """The top-level imports of a test part (a perf script imports the whole
    file, so a kernel module may lean on names only its test imports), an
    import of the task's own module left out."""
    try:
        tree = ast.parse(test or "")
    except SyntaxError:
        return ""
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, ast.ImportFrom) and own and (n.module or "").split(".")[-1] == own)
            and not (isinstance(n, ast.Import) and own and any(a.name.split(".")[-1] == own for a in n.names))]
    return "".join(ast.unparse(n) + "\n" for n in keep)


def gold_call(test):
    """The expression assigned to result_gold, compiled, to run the test
    again under other seeds."""
    tree = ast.parse(test)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "result_gold" for t in node.targets) \
                and isinstance(node.value, ast.Call):
            return compile(ast.Expression(node.value), "<test>", "eval")
    return None


def assemble(code, test):
    """code + separator + test as one file, and the last line of code."""
    head = code.rstrip("\n") + "\n"
    return head + "\n" + SEPARATOR + "\n\n" + test.lstrip("\n"), head.count("\n")


def load_module(name, path, aliases=()):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    for n in (name,) + tuple(aliases):
        sys.modules[n] = mod
    spec.loader.exec_module(mod)
    return mod


def _read_only(path):
    """Whether this process cannot add a file to the directory path, tried
    (a read-only mount, another owner and Landlock all refuse it)."""
    probe = os.path.join(path, f".geak-probe-{os.getpid()}-{os.urandom(6).hex()}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except OSError:
        return True
    os.unlink(probe)
    return False


def on_reference_cache(fn):
    """fn calling the reference's kernels from the reference's own compile
    cache, which its calibration filled (GEAK_REF_TRITON_CACHE, set by the
    worker), where this job can only read it.  A kernel missing there,
    or every kernel where the cache is missing or writable, is compiled
    into a directory made for that call alone and removed after it: never
    into the job's own cache, which the code under test writes and later
    jobs of that code read.  Around each such call, what the reference's
    own code changes in its modules is taken as theirs (intact.py).  The
    result's unwrapped is fn."""
    ref_dir = os.environ.get(proto.ENV_REF_TRITON_CACHE)
    usable = bool(ref_dir) and os.path.isdir(ref_dir) and _read_only(ref_dir)

    def call(x):
        from . import intact
        own = os.environ.get("TRITON_CACHE_DIR")
        scratch = None
        intact.reference_begins()
        try:
            if usable:
                os.environ["TRITON_CACHE_DIR"] = ref_dir
                try:
                    return fn(x)
                except OSError:  # a kernel not there, which this job cannot write
                    pass
            scratch = tempfile.mkdtemp(prefix="geak-ref-triton-")
            os.environ["TRITON_CACHE_DIR"] = scratch
            return fn(x)
        finally:
            if own is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = own
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            intact.reference_ends()
    # Once its kernels are loaded, the timed calls take fn itself: the
    # swap of the environment costs tens of microseconds a call, on the
    # reference's side only, as much as a small kernel's whole time.
    call.unwrapped = fn
    return call
