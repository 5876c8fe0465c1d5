"""Errors of code under test, as the judge and the model see them."""
import os
import traceback

import torch

# Left in the job's directory when the code ran out of GPU memory:
# geak-eval runs the job again on a drained GPU.  The worker sets it to
# the job's directory, so that the processes a job forks leave it there.
OOM_MARK = "oom"


def classify(exc):
    """The reason class of an exception raised by code under test."""
    if isinstance(exc, SyntaxError):
        return "syntax"
    for cls in type(exc).__mro__:
        if cls.__name__ in ("CompilationError", "CompileTimeAssertionFailure",
                            "UnsupportedLanguageConstruct"):
            return "compile"
    return "runtime"


def trimmed_traceback(exc, own=()):
    """The traceback's frames in the code under test (files in own) and
    the last frame, as text; the whole traceback's tail when none is."""
    frames = traceback.extract_tb(exc.__traceback__)
    keep = [f for f in frames if os.path.realpath(f.filename) in own]
    if frames and (not keep or keep[-1] is not frames[-1]):
        keep.append(frames[-1])
    text = "".join(traceback.format_list(keep)) if keep else ""
    return text + "".join(traceback.format_exception_only(type(exc), exc))


def mark_if_short(exc):
    """Leave the mark that tells geak-eval the job ran out of memory."""
    if isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc):
        try:
            with open(OOM_MARK, "w"):
                pass
        except OSError:
            pass


def error_info(exc, own=()):
    mark_if_short(exc)
    head = f"{type(exc).__name__}: {exc}".strip()
    if getattr(exc, "__notes__", None):
        head = f"{head} ({'; '.join(map(str, exc.__notes__))})"
    return {"kind": classify(exc), "message": head[:2000],
            "traceback": trimmed_traceback(exc, own)[-4000:]}
