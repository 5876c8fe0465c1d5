"""Errors of code under test, as the judge and the model see them."""
import json
import os
import re
import traceback

import torch

from . import guard, proto

# Left in the job's directory when the code ran out of GPU memory, with
# the device memory the run showed it needs ({"need_mib": N}): geak-eval
# runs the job again with that much free.  The worker sets it to the
# job's directory, so that the processes a job forks leave it there.
OOM_MARK = proto.FILE_OOM
_ASKED = re.compile(r"Tried to allocate ([0-9.]+) (GiB|MiB|KiB|B)\b")
_UNIT = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "B": 1}


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


def shown_need_mib(message):
    """The device memory (MiB) a process that ran out with message showed
    it needs: the most its allocator held, and what it then asked for."""
    held = guard.device_peak_mib("cuda" if torch.cuda.is_initialized() else "cpu")
    asked = _ASKED.search(message)
    if asked:
        held += int(float(asked.group(1)) * _UNIT[asked.group(2)]) >> 20
    return held


def mark_if_short(exc):
    """Leave the mark that tells geak-eval the job ran out of memory, with
    the most any of its processes showed it needs."""
    if not (isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc)):
        return
    need = shown_need_mib(str(exc))
    try:
        with open(OOM_MARK) as fp:
            need = max(need, int(json.load(fp)[proto.OOM_NEED_MIB]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(OOM_MARK, "w") as fp:
            json.dump({proto.OOM_NEED_MIB: need}, fp)
    except OSError:
        pass


def error_info(exc, own=()):
    mark_if_short(exc)
    head = f"{type(exc).__name__}: {exc}".strip()
    if getattr(exc, "__notes__", None):
        head = f"{head} ({'; '.join(map(str, exc.__notes__))})"
    return {"kind": classify(exc), "message": head[:2000],
            "traceback": trimmed_traceback(exc, own)[-4000:]}
