"""geak-eval's warm worker: imports torch and Triton once, then serves
jobs read as JSON lines from descriptor 3, forking one child per job.

Request:  {"op": "run"|"calibrate"|"judge"|"static", "dir": DIR, "nonce": HEX,
           "timeout": S, "compile_timeout": S, "handshake": BOOL, ...}
Response: {"status": "exit"|"signal"|"timeout"|"aborted", "code": N, "signal": N,
           "wall": S, "landlock": BOOL, "phase": "compile"|"run"}
(geak-harness(7) specifies the requests and the files of each job.)

The worker itself never runs code under test and never touches a GPU:
the children do, so that a crash or a CUDA context stays with one job.
The first line written is a greeting with the harness version, library
versions and the device.
"""
import hashlib
import json
import os
import select
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

CPU = os.environ.get("GEAK_EVAL_CPU") == "1"
if CPU:
    os.environ["TRITON_INTERPRET"] = "1"

import numpy  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402

import geakh  # noqa: E402
from geakh import calibrate, guard, judge, run, static  # noqa: E402


def _probe(restrict):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        info = {"name": None, "kind": "none"}
        try:
            if restrict and not guard.restrict_writes([os.getcwd(), "/dev"]):
                raise OSError("Landlock could not be applied")
            if torch.cuda.is_available() and torch.cuda.device_count() > 0:
                p = torch.cuda.get_device_properties(0)
                info = {"name": p.name, "kind": "hip" if torch.version.hip else "cuda",
                        "memory": p.total_memory, "sms": p.multi_processor_count,
                        "l2": getattr(p, "L2_cache_size", 0),
                        "count": torch.cuda.device_count()}
        except Exception as exc:  # noqa: BLE001
            info = {"name": None, "kind": "none", "error": str(exc)[:500]}
        os.write(w, json.dumps(info).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    try:
        return json.loads(data)
    except ValueError:
        return {"name": None, "kind": "none"}


INNER_LANDLOCK = True


def probe_device():
    """The device, seen from a child; with the jobs' write restriction
    first, and without it when the GPU runtime cannot start under it."""
    global INNER_LANDLOCK
    if CPU:
        return {"name": "cpu (Triton interpreter)", "kind": "cpu"}
    info = _probe(True)
    if info.get("name"):
        return info
    plain = _probe(False)
    if plain.get("name"):
        INNER_LANDLOCK = False
        plain["landlock_error"] = info.get("error")
        return plain
    return info


def _reference_cache(d):
    """The compile cache of the reference of this job's task, where its
    calibration compiled its kernels (this job may only read it)."""
    root = os.environ.get("GEAK_TRITON_CACHE")
    try:
        with open(os.path.join(d, "job.json")) as fp:
            ref = json.load(fp).get("reference")
    except (OSError, ValueError):
        return None
    if not root or not isinstance(ref, str):
        return None
    return os.path.join(root, hashlib.sha256(ref.encode()).hexdigest()[:32])


def _code_cache(d):
    """The Triton cache of the code this job runs: one directory per code
    text under GEAK_TRITON_CACHE, so that repeated runs of one code (the
    reference for many candidates, a candidate and its timing run) compile
    once, while a job can write no other code's cache."""
    root = os.environ.get("GEAK_TRITON_CACHE")
    try:
        with open(os.path.join(d, "job.json")) as fp:
            code = json.load(fp).get("code")
    except (OSError, ValueError):
        return None
    if not root or not isinstance(code, str):
        return None
    path = os.path.join(root, hashlib.sha256(code.encode()).hexdigest()[:32])
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None
    return path


def child(req, status_w, go_r):
    """In the forked child: isolate, then do the job.  Never returns."""
    code = 1
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        guard.die_with_parent()
        d = req["dir"]
        os.chdir(d)
        from geakh import errors
        errors.OOM_MARK = os.path.join(d, "oom")
        for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
            f = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(f, fd)
            os.close(f)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        tmp = os.path.join(d, "tmp")
        os.makedirs(tmp, exist_ok=True)
        os.environ["TMPDIR"] = tmp
        code_cache = _code_cache(d)
        os.environ["TRITON_CACHE_DIR"] = code_cache or os.path.join(d, "triton")
        ref_cache = _reference_cache(d)
        if ref_cache and ref_cache != code_cache:
            os.environ["GEAK_REF_TRITON_CACHE"] = ref_cache
        os.environ["TRITON_HOME"] = d
        os.environ["CUDA_CACHE_PATH"] = os.path.join(d, "nv")
        os.environ["PYTHONHASHSEED"] = "0"
        ok = INNER_LANDLOCK and guard.restrict_writes(
            [d, "/dev"] + ([code_cache] if code_cache else []) + list(req.get("write_dirs", [])))
        os.write(status_w, b"L" if ok else b"l")

        def progress():
            os.write(status_w, b"c")

        def ready():
            # Set up, and waiting for the GPU alone: geak-eval says go.
            if go_r is None:
                return True
            os.write(status_w, b"r")
            return os.read(go_r, 1) == b"g"
        hooks = {"progress": progress, "ready": ready}
        op = req["op"]
        if op in ("run", "calibrate") and CPU:
            from geakh import cpu
            cpu.install()
        if op == "run":
            run.main(d, req["nonce"], req, hooks)
        elif op == "calibrate":
            calibrate.main(d, req["nonce"], req, hooks)
        elif op == "judge":
            progress()
            judge.main(req, d)
        elif op == "static":
            progress()
            static.main(d, req["nonce"])
        else:
            raise ValueError(f"unknown op {op!r}")
        code = 0
    except BaseException:  # noqa: B902 - report anything, then leave
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


# A timing run pauses the correctness jobs in flight on its GPU: geak-eval
# sends SIGUSR1 to their workers, and SIGUSR2 when they may go on.  The
# worker stops the job's process group and stops the job's clock.
_PAUSE = {"want": False, "pid": None, "since": None, "paused": 0.0}


def _apply_pause():
    pid = _PAUSE["pid"]
    if pid is None:
        return
    try:
        if _PAUSE["want"] and _PAUSE["since"] is None:
            os.killpg(pid, signal.SIGSTOP)
            _PAUSE["since"] = time.monotonic()
        elif not _PAUSE["want"] and _PAUSE["since"] is not None:
            os.killpg(pid, signal.SIGCONT)
            _PAUSE["paused"] += time.monotonic() - _PAUSE["since"]
            _PAUSE["since"] = None
    except OSError:
        pass


def _on_pause_signal(signum, frame):
    _PAUSE["want"] = signum == signal.SIGUSR1
    _apply_pause()


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def serve_one(req, sock, rfile, wfile):
    """Run one job in a child.  A timing job with "handshake" reports
    {"ready": true} when it is set up and waits for {"go": true}; the
    wait does not count against its time."""
    status_r, status_w = os.pipe()
    go_r, go_w = os.pipe() if req.get("handshake") else (None, None)
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(status_r)
        if go_w is not None:
            os.close(go_w)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)
        child(req, status_w, go_r)
    try:
        os.setpgid(pid, pid)  # the child does too; either may come first
    except OSError:
        pass
    _PAUSE.update(pid=pid, since=None, paused=0.0)
    _apply_pause()  # a pause asked for before the job began
    os.close(status_w)
    if go_r is not None:
        os.close(go_r)
    waiting_since = None  # the job waits for geak-eval's go
    ready_sent = aborted = False
    # Two budgets: the first call (which pays for cold compiles) gets
    # compile_timeout, the rest of the job timeout after that.
    compile_s = float(req.get("compile_timeout") or 300)
    run_s = float(req.get("timeout") or 120)
    deadline = t0 + compile_s + run_s
    phase, landlock, timed_out = "compile", False, False
    open_pipe = True
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        now = time.monotonic()
        if waiting_since is not None:
            if select.select([sock], [], [], 0.05)[0]:
                line = rfile.readline()
                go = False
                try:
                    go = json.loads(line).get("go") is True
                except (ValueError, AttributeError):
                    pass
                if not go:  # geak-eval went away or said no
                    kill_group(pid)
                    os.waitpid(pid, 0)
                    aborted = True
                    break
                # The timing gets a run's whole allowance afresh.
                deadline = time.monotonic() + compile_s + run_s
                _PAUSE["paused"] = 0.0
                waiting_since = None
                try:
                    os.write(go_w, b"g")
                except OSError:
                    pass  # the job is gone; waitpid says how
            continue
        if _PAUSE["since"] is not None:
            time.sleep(0.02)  # paused: the clock stands still
            continue
        if now >= deadline + _PAUSE["paused"]:
            timed_out = True
            kill_group(pid)
            os.waitpid(pid, 0)
            break
        if open_pipe:
            ready, _, _ = select.select([status_r], [], [],
                                        min(0.05, max(0.0, deadline + _PAUSE["paused"] - now)))
            if ready:
                data = os.read(status_r, 64)
                if not data:
                    open_pipe = False
                for b in data:
                    if b == ord("L"):
                        landlock = True
                    elif b == ord("r") and go_w is not None and not ready_sent:
                        ready_sent = True
                        waiting_since = time.monotonic()
                        wfile.write(b'{"ready": true}\n')
                        wfile.flush()
                    elif b == ord("c") and phase == "compile":
                        phase = "run"
                        deadline = time.monotonic() + run_s
                        _PAUSE["paused"] = 0.0
        else:
            time.sleep(0.02)
    while open_pipe and select.select([status_r], [], [], 0)[0]:
        data = os.read(status_r, 64)
        open_pipe = bool(data)
        landlock = landlock or b"L" in data
    os.close(status_r)
    if go_w is not None:
        os.close(go_w)
    _PAUSE.update(pid=None, since=None)
    kill_group(pid)  # whatever the job left behind
    wall = round(time.monotonic() - t0, 3)
    if aborted:
        return {"status": "aborted", "phase": phase, "wall": wall, "landlock": landlock}
    if timed_out:
        return {"status": "timeout", "phase": phase, "wall": wall, "landlock": landlock}
    if os.WIFSIGNALED(st):
        return {"status": "signal", "signal": os.WTERMSIG(st), "phase": phase,
                "wall": wall, "landlock": landlock}
    return {"status": "exit", "code": os.WEXITSTATUS(st), "phase": phase,
            "wall": wall, "landlock": landlock}


def fingerprint():
    """What the greeting depends on, as (path, mtime_ns, size, inode): the
    interpreter, the library packages and the harness's files.  geak-eval
    reuses a stored greeting, without starting a worker, while none of
    these changed."""
    paths = [os.path.realpath(sys.executable)]
    paths += [os.path.dirname(os.path.realpath(m.__file__)) for m in (torch, triton, numpy)]
    root = os.path.dirname(os.path.abspath(__file__))
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        paths.append(dirpath)
        paths += [os.path.join(dirpath, f) for f in sorted(filenames)
                  if f.endswith(".py") or f == "requirements.txt"]
    out = []
    for p in paths:
        st = os.stat(p)
        out.append([p, st.st_mtime_ns, st.st_size, st.st_ino])
    return out


def main():
    signal.signal(signal.SIGUSR1, _on_pause_signal)
    signal.signal(signal.SIGUSR2, _on_pause_signal)
    sock = socket.socket(fileno=3)
    rfile = sock.makefile("rb")
    wfile = sock.makefile("wb")
    hello = {
        "harness": geakh.harness_version(),
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "triton": triton.__version__, "numpy": numpy.__version__},
        "device": probe_device(),
        # What torch was built for: a CPU build can never use a GPU, which
        # geak-eval says in those words rather than as a failing reference.
        "build": {"cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None)},
        "cpu": CPU,
        "fingerprint": fingerprint(),
    }
    wfile.write((json.dumps(hello) + "\n").encode())
    wfile.flush()
    for line in rfile:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError:
            resp = {"status": "bad_request"}
        else:
            if req.get("op") == "quit":
                break
            resp = serve_one(req, sock, rfile, wfile)
        wfile.write((json.dumps(resp) + "\n").encode())
        wfile.flush()


if __name__ == "__main__":
    main()
