"""geakh: the evaluation harness of geak-eval (see geak-eval(1)).

The modules split by trust: worker.py serves requests and forks one child
per job; run.py executes code under test (untrusted side); judge.py decides
pass/fail and never imports the code under test; timing.py times kernels.
"""
import hashlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SEPARATOR = "#" * 146


def harness_version():
    """A digest of every harness source file: any change to the harness
    changes the version, and with it every cache key."""
    h = hashlib.sha256()
    root = os.path.dirname(HERE)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            if f.endswith(".py") or f == "requirements.txt":
                p = os.path.join(dirpath, f)
                h.update(os.path.relpath(p, root).encode() + b"\0")
                with open(p, "rb") as fp:
                    h.update(fp.read())
    return "h1-" + h.hexdigest()[:16]
