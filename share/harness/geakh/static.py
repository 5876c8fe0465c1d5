"""Static checks on a candidate's source, read with ast and never run.

Each finding is (rule, line, text).  Rules in STRICT reject the candidate
as a cheat before it runs (under geak-eval --static strict, the default);
the others are warnings that go into eval.notes.  The strict rules are
the ones no reference kernel of either benchmark trips (tests/0370 checks
that on every reference): they name ways to game the evaluation, not
styles of writing kernels.  The runtime checks stay in force either way;
this pass catches the same cheats earlier and some the runtime cannot see
(a candidate that searches the harness's memory for the reference's
outputs).

    python3 -m geakh.static FILE... | --jsonl RECORDS  -> one JSON line each
"""
import ast
import json
import sys

from . import proto

STRICT = {
    "no_triton_kernel",   # no @triton.jit / triton.jit(...) function at all
    "patches_library",    # assigns to an attribute of torch, time, triton, ... (timers, allclose)
    "threads",            # threading, multiprocessing, subprocess, os.fork, ...
    "tensor_subclass",    # subclasses torch.Tensor, _make_subclass, __torch_function__
    "introspection",      # gc, inspect, sys._getframe, sys.modules, ctypes: reach the harness
    "network",            # socket, urllib, http, requests
    "reads_results",      # torch.load / pickle / numpy.load: outputs kept on disk
}

# Modules a candidate has no business importing, by rule (importing a
# thread or process module is only a warning: two ROCm kernel files import
# multiprocessing and never use it; using one is strict).
THREAD_MODULES = ("threading", "_thread", "multiprocessing", "concurrent", "subprocess",
                  "asyncio")
BANNED_IMPORTS = {
    "threading": "imports_threads", "_thread": "imports_threads",
    "multiprocessing": "imports_threads", "concurrent": "imports_threads",
    "subprocess": "imports_threads", "asyncio": "imports_threads",
    "gc": "introspection", "inspect": "introspection", "ctypes": "introspection",
    "importlib": "introspection",
    "socket": "network", "urllib": "network", "http": "network", "requests": "network",
    "ftplib": "network", "smtplib": "network",
    "pickle": "reads_results", "shelve": "reads_results", "marshal": "reads_results",
}
# Roots whose attributes a candidate must not assign: the timers and
# comparisons the harness and the perf scripts rely on live there.
LIBRARY_ROOTS = {"torch", "time", "triton", "tl", "np", "numpy", "statistics", "builtins",
                 "math", "gc", "sys", "os", "random", "functools"}
# Calls that fork, spawn or reach the harness, by dotted name.
BANNED_CALLS = {
    "os.fork": "threads", "os.forkpty": "threads", "os.system": "threads",
    "os.popen": "threads", "os.spawnv": "threads", "os.spawnl": "threads",
    "os.execv": "threads", "os.execl": "threads", "os.posix_spawn": "threads",
    "os.kill": "threads", "os._exit": "threads",
    "sys._getframe": "introspection", "sys.settrace": "introspection",
    "sys.setprofile": "introspection", "__import__": "introspection",
    "torch.load": "reads_results", "np.load": "reads_results", "numpy.load": "reads_results",
    "torch.Tensor._make_subclass": "tensor_subclass", "torch._C._disabled_torch_function_impl":
    "tensor_subclass",
}
# Warnings: legitimate in glue, suspicious in a kernel's hot path.
WARN_CALLS = {
    "torch.cuda.Stream": "stream", "torch.cuda.stream": "stream",
    "torch.cuda.set_stream": "stream", "open": "file_io", "os.getenv": "environment",
    "eval": "dynamic_code", "exec": "dynamic_code", "compile": "dynamic_code",
}
TORCH_COMPUTE = {"matmul", "mm", "bmm", "einsum", "softmax", "log_softmax", "layer_norm",
                 "conv1d", "conv2d", "conv3d", "linear", "scaled_dot_product_attention",
                 "cross_entropy", "gelu", "silu", "relu", "sigmoid", "tanh", "cumsum",
                 "sort", "topk", "argmax", "argsort", "addmm", "baddbmm"}


def dotted(node):
    """a.b.c for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Checker(ast.NodeVisitor):
    def __init__(self):
        self.found = []
        self.kernels = 0
        self.aliases = {}  # local name -> module it stands for ("F" -> "torch.nn.functional")

    def add(self, rule, node, text):
        self.found.append((rule, getattr(node, "lineno", 0), text))

    def name_of(self, node):
        d = dotted(node)
        if d is None:
            return None
        head, _, rest = d.partition(".")
        head = self.aliases.get(head, head)
        return head + ("." + rest if rest else "")

    # ---- imports ----
    def visit_Import(self, node):
        for a in node.names:
            root = a.name.split(".")[0]
            if root in BANNED_IMPORTS:
                self.add(BANNED_IMPORTS[root], node, f"import {a.name}")
            self.aliases[a.asname or root] = a.name if a.asname else root
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        root = mod.split(".")[0]
        if root in BANNED_IMPORTS:
            self.add(BANNED_IMPORTS[root], node, f"from {mod} import ...")
        for a in node.names:
            full = f"{mod}.{a.name}" if mod else a.name
            if full in BANNED_CALLS:
                self.add(BANNED_CALLS[full], node, f"from {mod} import {a.name}")
            self.aliases[a.asname or a.name] = full
        self.generic_visit(node)

    # ---- definitions ----
    def _decorated_kernel(self, node):
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            name = self.name_of(target) or ""
            if name.split(".")[-1] in ("jit", "autotune", "heuristics") and "triton" in name:
                return True
        return False

    def visit_FunctionDef(self, node):
        if self._decorated_kernel(node):
            self.kernels += 1
        if node.name in ("__torch_function__", "__torch_dispatch__"):
            self.add("tensor_subclass", node, f"defines {node.name}")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        for base in node.bases:
            name = self.name_of(base) or ""
            if name in ("torch.Tensor", "Tensor", "torch._C.TensorBase", "torch._C._TensorBase"):
                self.add("tensor_subclass", node, f"class {node.name}({name})")
        self.generic_visit(node)

    # ---- assignments ----
    def _check_target(self, target, node):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._check_target(t, node)
            return
        if isinstance(target, ast.Attribute):
            name = self.name_of(target) or ""
            if name.startswith("torch.backends."):
                self.add("precision_setting", node, f"assigns to {name}")
            elif name.split(".")[0] in LIBRARY_ROOTS:
                self.add("patches_library", node, f"assigns to {name}")
        if isinstance(target, ast.Subscript):
            name = self.name_of(target.value) or ""
            if name in ("sys.modules", "os.environ", "builtins.__dict__"):
                self.add("introspection", node, f"writes into {name}")

    def visit_Assign(self, node):
        for t in node.targets:
            self._check_target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._check_target(node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._check_target(node.target, node)
        self.generic_visit(node)

    # ---- calls and names ----
    def visit_Call(self, node):
        name = self.name_of(node.func) or ""
        if name.endswith("jit") and "triton" in name:
            self.kernels += 1  # triton.jit(fn) called directly
        if name in BANNED_CALLS:
            self.add(BANNED_CALLS[name], node, f"calls {name}")
        elif name.split(".")[0] in THREAD_MODULES:
            self.add("threads", node, f"calls {name}")
        elif name in WARN_CALLS:
            self.add(WARN_CALLS[name], node, f"calls {name}")
        elif name in ("setattr", "builtins.setattr") and node.args:
            root = (self.name_of(node.args[0]) or "").split(".")[0]
            if root in LIBRARY_ROOTS:
                self.add("patches_library", node, f"setattr on {self.name_of(node.args[0])}")
        elif name.startswith(("torch.nn.functional.", "torch.")) and \
                name.split(".")[-1] in TORCH_COMPUTE:
            self.add("torch_compute", node, f"calls {name}")
        elif name.startswith("torch.nn.") and name[9:10].isupper():
            self.add("torch_compute", node, f"uses {name}")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        name = self.name_of(node) or ""
        if name in ("sys.modules", "sys._getframe", "sys.settrace"):
            self.add("introspection", node, f"uses {name}")
        elif name.endswith("_make_subclass"):
            self.add("tensor_subclass", node, f"uses {name}")
        elif name in ("os.environ",):
            self.add("environment", node, f"reads {name}")
        self.generic_visit(node)

    def visit_Try(self, node):
        # A fallback: the handler computes the answer another way.
        if any(isinstance(n, ast.Call) for h in node.handlers for n in ast.walk(h)):
            self.add("try_fallback", node, "try/except whose handler calls something")
        self.generic_visit(node)

    visit_TryStar = visit_Try


def check(source):
    """[(rule, line, text)], strict ones first; a syntax error is left to
    the run, which reports it as such."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    c = Checker()
    try:
        c.visit(tree)
    except RecursionError:
        return [("introspection", 0, "source nested too deeply to check")]
    if c.kernels == 0:
        c.found.append(("no_triton_kernel", 0, "no @triton.jit function"))
    seen, out = set(), []
    for f in sorted(c.found, key=lambda f: (f[0] not in STRICT, f[1])):
        if (f[0], f[1]) not in seen:  # one finding per rule and line
            seen.add((f[0], f[1]))
            out.append(f)
    return out


def findings_json(found):
    return [{proto.FINDING_RULE: r, proto.FINDING_LINE: ln, proto.FINDING_TEXT: t,
             proto.FINDING_STRICT: r in STRICT} for r, ln, t in found]


def main(d, nonce):
    """The worker's "static" job: job.json's code in, static.json out."""
    import os
    with open(os.path.join(d, proto.FILE_JOB)) as fp:
        spec = json.load(fp)
    result = {proto.NONCE: nonce,
              proto.STATIC_FINDINGS: findings_json(check(proto.need(spec, proto.JOB_CODE, proto.FILE_JOB)))}
    tmp = os.path.join(d, proto.FILE_STATIC + ".tmp")
    with open(tmp, "w") as fp:
        json.dump(result, fp)
    os.replace(tmp, os.path.join(d, proto.FILE_STATIC))


def cli(args):
    """FILE.py ... (or --jsonl FILE: the code of each record) -> one JSON
    line each: {"file" or "id", "findings": [...]}."""
    if args[:1] == ["--jsonl"]:
        with open(args[1]) as fp:
            for line in fp:
                rec = json.loads(line)
                print(json.dumps({"id": rec.get("id"),
                                  proto.STATIC_FINDINGS: findings_json(check(rec.get("code") or ""))}))
        return
    for path in args:
        with open(path) as fp:
            print(json.dumps({"file": path, proto.STATIC_FINDINGS: findings_json(check(fp.read()))}))


if __name__ == "__main__":
    cli(sys.argv[1:])
