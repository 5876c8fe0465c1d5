"""geak-eval's warm worker: imports torch and Triton once, then serves
jobs read as JSON lines from descriptor 3, forking one child per job.

Its first request is {"op": "start", "sandbox": {...}}, the jobs' sandbox
settings; the greeting answers it.  Then
Request:  {"op": "run"|"calibrate"|"regenerate"|"judge"|"static", "dir": DIR, "nonce": HEX,
           "timeout": S, "compile_timeout": S, "handshake": BOOL, ...}
Response: {"status": "exit"|"signal"|"timeout"|"aborted"|"bad_request", "code": N,
           "signal": N, "wall": S, "landlock": BOOL, "phase": "compile"|"run",
           "sandbox": {"pidns", "mountns", "uid", "cgroup", "memory", "procs"},
           "limit": "memory" (when the job's memory cgroup killed it),
           "error": why a request was refused}
(geak-harness(7) specifies the requests and the files of each job, and
share/harness/protocol.tsv names every key: geakh/proto.py.)

The worker itself never runs code under test and never touches a GPU:
the children do, so that a crash or a CUDA context stays with one job.
Each job is two processes: a relay, which keeps the tails of the job's
output (stdout.txt and stderr.txt, OUT_CAP bytes each), and the job
itself, isolated by geakh/sandbox.py (in a PID namespace of its own when
the kernel allows).
The first line written is a greeting with the harness version, library
versions and the device.
"""
import gc
import hashlib
import importlib
import json
import os
import select
import signal
import socket
import stat
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

from geakh import proto  # noqa: E402

CPU = os.environ.get(proto.ENV_EVAL_CPU) == "1"
if CPU:
    os.environ["TRITON_INTERPRET"] = "1"

import numpy  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402

import geakh  # noqa: E402
from geakh import cachetrust, calibrate, guard, judge, pyprof, regen, run, sandbox, static  # noqa: E402

# Every job is a fork of this process: what a job imports after the fork,
# each job imports again (about a second a job, most of it compiling
# sources).  These are what the harness's paths and the suites' tests
# import: pytest and the plugins its main loads, numpy's and torch's
# testing helpers, Triton's benchmarking and the modules its language
# pulls in lazily.  A name missing from this install is passed over.
PRELOAD = (
    "pytest", "_pytest.assertion.rewrite", "_pytest.faulthandler", "_pytest.helpconfig",
    "_pytest.junitxml", "_pytest.pastebin", "_pytest.setuponly", "_pytest.setupplan",
    "_pytest.skipping", "_pytest.threadexception", "_pytest.tracemalloc",
    "_pytest.unittest", "_pytest.unraisableexception", "_pytest.warnings", "pdb",
    "xml.etree.ElementTree", "numpy.random", "numpy.testing", "torch.testing",
    "triton.testing", "triton.experimental.gluon", "geakh.rocm", "geakh.bench",
    "geak_eval.perf.performance_utils", "geak_eval.perf.ROCm.performance_utils_pytest",
)


def _preload():
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


_preload()
guard.drop_absent_seeding()


# Job layers (geakh/sandbox.py's letters, and L for Landlock) that the GPU
# runtime does not start under, found by probe_device: jobs skip them.
JOB_SKIP = frozenset()
# Tried in turn until the device shows: each drops the layer likeliest to
# be the one in the way.
# A PID namespace goes with the mount namespace: without a /proc of its
# own, a job's /proc names other processes than its getpid(), and the GPU
# runtime does not start.
SKIP_LADDER = (frozenset(), frozenset("L"), frozenset("LU"), frozenset("LUMP"))


def _device_seen():
    info = {proto.DEVICE_NAME: None, "kind": "none"}
    if not torch.cuda.is_available():
        torch.cuda.init()  # raises with the runtime's reason
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        p = torch.cuda.get_device_properties(0)
        info = {proto.DEVICE_NAME: p.name, "kind": "hip" if torch.version.hip else "cuda",
                "memory": p.total_memory, "sms": p.multi_processor_count,
                "l2": getattr(p, "L2_cache_size", 0),
                "count": torch.cuda.device_count()}
    return info


def _probe_device(d, skip, pidns):
    """The device as a job's forked run sees it (runs are the job's
    children, as calibrate.py and run.py fork them)."""
    try:
        layers = sandbox.enter(d, [], [], skip, pidns)
        if "L" not in skip and not sandbox.restrict_writes(_written(d, [], layers)):
            raise OSError("Landlock could not be applied")
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                try:
                    out = _device_seen()
                except Exception as exc:  # noqa: BLE001
                    out = {proto.DEVICE_NAME: None, "kind": "none", proto.DEVICE_ERROR: str(exc)[:500]}
                os.write(w, json.dumps(out).encode())
            finally:
                os._exit(0)
        os.close(w)
        with os.fdopen(r, "rb") as fp:
            data = fp.read()
        os.waitpid(pid, 0)
        info = json.loads(data) if data else {proto.DEVICE_NAME: None, "kind": "none",
                                              proto.DEVICE_ERROR: "the probe's run ended without a word"}
        info["layers"] = "".join(sorted(layers | ({"L"} if "L" not in skip else set())))
    except Exception as exc:  # noqa: BLE001
        info = {proto.DEVICE_NAME: None, "kind": "none", proto.DEVICE_ERROR: str(exc)[:500]}
    return info


def _written(d, rw, layers):
    """What a job may write under Landlock: its directories, /dev (the GPU's
    nodes are opened for writing), and /proc where it is the job's own
    (see sandbox._writable_proc): the GPU runtime names every process's
    threads there, and does not start where it cannot."""
    own = []
    if "M" in layers:
        own = ["/proc"] + (["/tmp"] if sandbox.VIEW else [])
    return [d, "/dev"] + list(rw) + own


def _probe(skip):
    """The device, seen from a process isolated as a job is, minus the
    layers in skip."""
    r, w = os.pipe()
    d = os.path.join(os.getcwd(), "probe")
    os.makedirs(d, exist_ok=True)
    pidns = "P" not in skip and sandbox.new_pid_namespace()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            guard.die_with_parent()
            job = os.fork()
            if job == 0:
                os.write(w, json.dumps(_probe_device(d, skip, pidns)).encode())
                os._exit(0)
            os.close(w)
            os.waitpid(job, 0)
        finally:
            os._exit(0)
    if pidns:
        sandbox.restore_pid_namespace()
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
        return {proto.DEVICE_NAME: None, "kind": "none"}


def probe_device():
    """The device, seen from a job; with every job layer first, and with
    fewer where the GPU runtime cannot start under them."""
    global JOB_SKIP
    if CPU:
        return {proto.DEVICE_NAME: "cpu (Triton interpreter)", "kind": "cpu"}
    first = _probe(SKIP_LADDER[0])
    # Without a device under no layer either, no layer is to blame: the
    # jobs keep them all.
    if first.get(proto.DEVICE_NAME) or not _probe(SKIP_LADDER[-1]).get(proto.DEVICE_NAME):
        return first
    tried = [{"skip": "", proto.DEVICE_ERROR: first.get(proto.DEVICE_ERROR)}]
    for skip in SKIP_LADDER[1:]:
        info = _probe(skip)
        if not info.get(proto.DEVICE_NAME):
            tried.append({"skip": "".join(sorted(skip)), proto.DEVICE_ERROR: info.get(proto.DEVICE_ERROR)})
            continue
        # A rung drops every layer up to the one in the way: the layers
        # depend on each other (a uid of its own needs the private root),
        # so fewer is not tried.
        JOB_SKIP = skip
        info["sandbox_error"] = first.get(proto.DEVICE_ERROR)
        info["probes"] = tried
        if "L" in skip:
            info["landlock_error"] = first.get(proto.DEVICE_ERROR)
        return info
    return first


def _reference_cache(d):
    """The compile cache of the reference of this job's task, where its
    calibration compiled its kernels (this job may only read it)."""
    root = os.environ.get(proto.ENV_TRITON_CACHE)
    try:
        with open(os.path.join(d, proto.FILE_JOB)) as fp:
            ref = json.load(fp).get(proto.JOB_REFERENCE)
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
    root = os.environ.get(proto.ENV_TRITON_CACHE)
    try:
        with open(os.path.join(d, proto.FILE_JOB)) as fp:
            code = json.load(fp).get(proto.JOB_CODE)
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


def _hold_cache(path):
    """A shared lock on the code cache path for a job of that code, taken
    after the cache is pruned (cachetrust.prune) where no other job of
    that code is in flight; the lock's descriptor, or None.  The lock
    file lies beside the cache, out of the job's view."""
    if not path:
        return None
    import fcntl
    try:
        fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        cachetrust.prune(path)  # what a worker that died left
    except OSError:
        pass
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def _release_cache(fd, path):
    """After the job, with none of its processes left: the cache pruned
    where no other job of its code is in flight (the last one to end
    prunes it), then the lock let go."""
    if fd is None:
        return
    import fcntl
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        cachetrust.prune(path)
    except OSError:
        pass
    finally:
        os.close(fd)


# The worker's lock on the running job's code cache, which the job's
# processes must not hold (closed in the relay).
_CACHE_LOCK = [None]

# Bytes of each of a job's streams kept (the last ones); what went before
# is counted in stdout.txt.cut and stderr.txt.cut.
OUT_CAP = 1 << 20


class _Tail:
    """The last OUT_CAP bytes of a stream, kept in a file that is brought up
    to date every FLUSH_S, so that a job killed at its timeout still leaves
    what it last said."""
    FLUSH_S = 0.2

    def __init__(self, path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                          0o644)
        self.buf = bytearray()
        self.cut = self.written = self.cut_written = 0

    def add(self, data):
        self.buf += data
        if len(self.buf) > 2 * OUT_CAP:
            drop = len(self.buf) - OUT_CAP
            del self.buf[:drop]
            self.cut += drop

    def flush(self):
        if len(self.buf) > OUT_CAP:
            drop = len(self.buf) - OUT_CAP
            del self.buf[:drop]
            self.cut += drop
        if self.cut == self.cut_written:
            if self.written < len(self.buf):
                os.pwrite(self.fd, bytes(self.buf[self.written:]), self.written)
        else:
            os.pwrite(self.fd, bytes(self.buf), 0)
            os.ftruncate(self.fd, len(self.buf))
            self._write_cut()
        self.written, self.cut_written = len(self.buf), self.cut

    def _write_cut(self):
        """The count of bytes cut, in PATH.cut: a file the job may have
        made first, so it is written only where it is a regular file of
        one link, opened without following a link or waiting on a FIFO
        (and truncated only once it is known to be one); otherwise it is
        left as it is, for geak-eval to refuse."""
        try:
            fd = os.open(self.path + ".cut", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                         | os.O_CLOEXEC, 0o644)
        except OSError:
            return
        try:
            st = os.fstat(fd)
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                os.ftruncate(fd, 0)
                os.write(fd, f"{self.cut}\n".encode())
        except OSError:
            pass
        finally:
            os.close(fd)


def _keep_tails(job, d, out_r, err_r):
    """Drain the job's stdout and stderr into their tails until it has ended
    and they are closed (or 0.5 s after, if something it left holds them);
    its wait status."""
    tails = {out_r: _Tail(os.path.join(d, proto.FILE_STDOUT)),
             err_r: _Tail(os.path.join(d, proto.FILE_STDERR))}
    try:
        pidfd = os.pidfd_open(job)
    except (AttributeError, OSError):
        pidfd = None
    status, until, flushed = None, None, time.monotonic()
    while tails and (until is None or time.monotonic() < until):
        waits = list(tails) + ([pidfd] if pidfd is not None and status is None else [])
        ready = select.select(waits, [], [], 0.05 if pidfd is None else 0.2)[0]
        for fd in ready:
            if fd in tails:
                data = os.read(fd, 65536)
                if data:
                    tails[fd].add(data)
                else:
                    tails.pop(fd).flush()
                    os.close(fd)
        if status is None:
            done, st = os.waitpid(job, os.WNOHANG)
            if done:
                status, until = st, time.monotonic() + 0.5
        if time.monotonic() - flushed >= _Tail.FLUSH_S:
            for t in tails.values():
                t.flush()
            flushed = time.monotonic()
    for fd, t in tails.items():
        t.flush()
        os.close(fd)
    if status is None:
        _, status = os.waitpid(job, 0)
    return status


def _end_like(st):
    """Leave as the job did: the same exit status, or the same signal."""
    if os.WIFSIGNALED(st):
        sig = os.WTERMSIG(st)
        try:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(st) if os.WIFEXITED(st) else 1)


def relay(req, status_w, go_r, exit_w, pidns):
    """In the forked child: the job's first process (in a PID namespace of
    its own, its first).  It forks the job (child), keeps the tails of its
    output, tells the worker on exit_w how the job ended (a namespace's
    first process cannot end by a signal of its own) and ends as it did.
    Never returns."""
    try:
        if _CACHE_LOCK[0] is not None:
            os.close(_CACHE_LOCK[0])
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        guard.die_with_parent()
        (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
        job = os.fork()
        if job == 0:
            os.close(out_r)
            os.close(err_r)
            os.close(exit_w)
            child(req, status_w, go_r, out_w, err_w, pidns)
        os.close(status_w)
        os.close(out_w)
        os.close(err_w)
        if go_r is not None:
            os.close(go_r)
        st = _keep_tails(job, req[proto.REQ_DIR], out_r, err_r)
        if not pidns:
            _kill_children()  # what it left behind, come to this subreaper
        os.write(exit_w, b"%d\n" % st)
        _end_like(st)
    except BaseException:  # noqa: B902 - report anything, then leave
        import traceback
        traceback.print_exc()
    os._exit(1)


def child(req, status_w, go_r, out_w, err_w, pidns):
    """In the job's own process: isolate, then do the job.  Never returns."""
    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        guard.die_with_parent()
        for fd, src in ((1, out_w), (2, err_w)):
            os.dup2(src, fd)
            os.close(src)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        d = req[proto.REQ_DIR]
        code_cache = _code_cache(d)
        mps = os.environ.get("CUDA_MPS_PIPE_DIRECTORY")  # an MPS daemon's, if one runs
        rw = [code_cache] if code_cache else []
        rw += [mps] if mps and os.path.isdir(mps) else []
        ref_cache = _reference_cache(d)
        ro = [p for p in (req.get(proto.REQ_PROFILE), req.get(proto.REQ_CAND)) if isinstance(p, str)]
        ro += [ref_cache] if ref_cache and ref_cache != code_cache and os.path.isdir(ref_cache) else []
        if isinstance(req.get(proto.REQ_MEMORY), int):  # the task's own limit
            sandbox.CONF[proto.BOX_MEMORY] = req[proto.REQ_MEMORY]
        layers = sandbox.enter(d, rw, ro, JOB_SKIP, pidns)
        os.chdir(d)
        from geakh import errors
        errors.OOM_MARK = os.path.join(d, proto.FILE_OOM)
        tmp = os.path.join(d, "tmp")
        os.makedirs(tmp, exist_ok=True)
        os.environ["TMPDIR"] = tmp
        # A module imported before the fork may have fixed tempfile's
        # folder to the worker's, which the job may not even see.
        tempfile.tempdir = tmp
        os.environ["HOME"] = d
        os.environ["XDG_CACHE_HOME"] = os.path.join(d, ".cache")
        os.environ["TRITON_CACHE_DIR"] = code_cache or os.path.join(d, "triton")
        if ref_cache and ref_cache != code_cache:
            os.environ[proto.ENV_REF_TRITON_CACHE] = ref_cache
        os.environ["TRITON_HOME"] = d
        os.environ["CUDA_CACHE_PATH"] = os.path.join(d, "nv")
        os.environ["PYTHONHASHSEED"] = "0"
        if "L" not in JOB_SKIP and sandbox.restrict_writes(_written(d, rw, layers)):
            layers.add("L")
        # The layers in force, then a full stop: after it only progress
        # ("c"), readiness ("r") and the end of the timing ("t") count.
        os.write(status_w, "".join(sorted(layers)).encode() + b".")

        def progress():
            os.write(status_w, b"c")

        def ready():
            # Set up, and waiting for the GPU alone: geak-eval says go.
            if go_r is None:
                return True
            os.write(status_w, b"r")
            return os.read(go_r, 1) == b"g"
        def timed():
            # Done with the GPU alone: geak-eval lets the others go on.
            if go_r is not None:
                os.write(status_w, b"t")
        hooks = {"progress": progress, "ready": ready, "timed": timed}
        op = req[proto.REQ_OP]
        if op in (proto.OP_RUN, proto.OP_CALIBRATE, proto.OP_REGENERATE) and CPU:
            from geakh import cpu
            cpu.install()
        pyprof.start()
        if op == proto.OP_RUN:
            run.main(d, req[proto.REQ_NONCE], req, hooks)
        elif op == proto.OP_CALIBRATE:
            calibrate.main(d, req[proto.REQ_NONCE], req, hooks)
        elif op == proto.OP_REGENERATE:
            regen.main(d, req[proto.REQ_NONCE], req, hooks)
        elif op == proto.OP_JUDGE:
            progress()
            judge.main(req, d)
        elif op == proto.OP_STATIC:
            progress()
            static.main(d, req[proto.REQ_NONCE])
        else:
            raise ValueError(f"unknown op {op!r}")
        code = 0
        pyprof.dump(d, f"op {op}")
    except BaseException as exc:  # noqa: B902 - report anything, then leave
        import traceback
        traceback.print_exc()
        from geakh import errors
        if os.path.isabs(errors.OOM_MARK):  # in the job's directory
            errors.mark_if_short(exc)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


def _children():
    pids = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as fp:
                pids += [int(x) for x in fp.read().split()]
    except OSError:
        pass
    return pids


def _kill_children():
    """This process is its descendants' subreaper: every child left, which
    can only be something a job left behind (a daemon that escaped its
    group), is killed and reaped, until none is left."""
    for _ in range(200):
        kids = _children()
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        if not kids:
            return
        time.sleep(0.005)


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
    {"ready": true} (and its layers) when it is set up and waits for
    {"go": true}; the
    wait does not count against its time."""
    status_r, status_w = os.pipe()
    go_r, go_w = os.pipe() if req.get(proto.REQ_HANDSHAKE) else (None, None)
    t0 = time.monotonic()
    ooms = sandbox.oom_kills()
    exit_r, exit_w = os.pipe()
    code_cache = _code_cache(req[proto.REQ_DIR])
    _CACHE_LOCK[0] = _hold_cache(code_cache)
    try:
        return _serve_locked(req, sock, rfile, wfile, t0, ooms, status_r, status_w, go_r, go_w,
                             exit_r, exit_w)
    finally:
        _release_cache(_CACHE_LOCK[0], code_cache)
        _CACHE_LOCK[0] = None


def _serve_locked(req, sock, rfile, wfile, t0, ooms, status_r, status_w, go_r, go_w, exit_r, exit_w):
    """serve_one's job, with its code cache held."""
    pidns = "P" not in JOB_SKIP and sandbox.new_pid_namespace()
    pid = os.fork()
    if pid == 0:
        os.close(status_r)
        os.close(exit_r)
        if go_w is not None:
            os.close(go_w)
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)
        relay(req, status_w, go_r, exit_w, pidns)
    if pidns:
        sandbox.restore_pid_namespace()
    os.close(exit_w)
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
    compile_s = float(req[proto.REQ_COMPILE])
    run_s = float(req[proto.REQ_TIMEOUT])
    deadline = t0 + compile_s + run_s
    phase, timed_out = proto.INPHASE_COMPILE, False
    layers, told = set(), False  # the job's layers, and whether it has said them all
    open_pipe = True
    try:  # readable when the relay has ended: no polling interval to wait out
        wake = [os.pidfd_open(pid)]
    except (AttributeError, OSError):
        wake = []
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
                    go = json.loads(line).get(proto.MSG_GO) is True
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
            ready, _, _ = select.select([status_r] + wake, [], [],
                                        min(0.05, max(0.0, deadline + _PAUSE["paused"] - now)))
            if status_r in ready:
                data = os.read(status_r, 64)
                if not data:
                    open_pipe = False
                for b in data:
                    if not told:
                        told = b == ord(".")
                        layers |= set() if told else {chr(b)}
                    elif b == ord("r") and go_w is not None and not ready_sent:
                        ready_sent = True
                        waiting_since = time.monotonic()
                        # The layers in force already: geak-eval reports
                        # them for the candidate's run from this message.
                        wfile.write(json.dumps({proto.MSG_READY: True, proto.RESP_LANDLOCK: "L" in layers,
                                                proto.RESP_JOB_SANDBOX: _layers_json(layers)}).encode()
                                    + b"\n")
                        wfile.flush()
                    elif b == ord("t") and ready_sent and waiting_since is None:
                        wfile.write(json.dumps({proto.MSG_TIMED: True}).encode() + b"\n")
                        wfile.flush()
                    elif b == ord("c") and phase == proto.INPHASE_COMPILE:
                        phase = proto.INPHASE_RUN
                        deadline = time.monotonic() + run_s
                        _PAUSE["paused"] = 0.0
        else:
            select.select(wake, [], [], 0.02) if wake else time.sleep(0.02)
    for fd in wake:
        os.close(fd)
    while open_pipe and select.select([status_r], [], [], 0)[0]:
        data = os.read(status_r, 64)
        open_pipe = bool(data)
        for b in data if not told else b"":
            told = told or b == ord(".")
            layers |= set() if told else {chr(b)}
    os.close(status_r)
    if go_w is not None:
        os.close(go_w)
    st = _relayed(exit_r, st)
    _PAUSE.update(pid=None, since=None)
    # Whatever the job left behind: its group, its cgroup, and what came
    # to this process as the subreaper.
    kill_group(pid)
    sandbox.kill_cgroup()
    _kill_children()
    wall = round(time.monotonic() - t0, 3)
    out = {proto.RESP_PHASE: phase, proto.RESP_WALL: wall, proto.RESP_LANDLOCK: "L" in layers,
           proto.RESP_JOB_SANDBOX: _layers_json(layers if told else set())}
    if ooms >= 0 and sandbox.oom_kills() > ooms:
        out[proto.RESP_LIMIT] = proto.LIMIT_MEMORY
        # The request's limit, where it gives one, is what held the job.
        limit = req[proto.REQ_MEMORY] if isinstance(req.get(proto.REQ_MEMORY), int) \
            else sandbox.CONF.get(proto.BOX_MEMORY, 0)
        _say(req[proto.REQ_DIR], f"the job was killed at its memory limit "
             f"({limit >> 20} MiB, geak-eval --memory-limit)")
    if aborted:
        return dict(out, **{proto.RESP_STATUS: proto.ENDED_ABORTED})
    if timed_out:
        return dict(out, **{proto.RESP_STATUS: proto.ENDED_TIMEOUT})
    if os.WIFSIGNALED(st):
        return dict(out, **{proto.RESP_STATUS: proto.ENDED_SIGNAL, proto.RESP_SIGNAL: os.WTERMSIG(st)})
    return dict(out, **{proto.RESP_STATUS: proto.ENDED_EXIT, proto.RESP_CODE: os.WEXITSTATUS(st)})


def _relayed(exit_r, st):
    """The job's own wait status, as its relay told it; st (the relay's)
    when it did not (it was killed)."""
    try:
        data = os.read(exit_r, 64) if select.select([exit_r], [], [], 0)[0] else b""
        return int(data) if data.strip() else st
    except (OSError, ValueError):
        return st
    finally:
        os.close(exit_r)


def _layers_json(layers):
    conf = sandbox.CONF
    return {proto.LAYER_PIDNS: "P" in layers, proto.LAYER_MOUNTNS: "M" in layers,
            proto.LAYER_UID: conf.get(proto.BOX_UID) if "U" in layers else None,
            proto.LAYER_CGROUP: "G" in layers,
            proto.LAYER_MEMORY: "cgroup" if "G" in layers and conf.get(proto.BOX_MEMORY_CGROUP)
            else "rlimit" if "A" in layers else None,
            proto.LAYER_PROCS: "cgroup" if "G" in layers and conf.get(proto.BOX_PIDS_CGROUP)
            else "rlimit" if "N" in layers else None}


def _say(d, line):
    """A line of the worker's own at the end of the job's stderr."""
    try:
        with open(os.path.join(d, proto.FILE_STDERR), "a") as fp:
            fp.write(f"\ngeak-eval: {line}\n")
    except OSError:
        pass


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


def _warm_triton():
    """Triton's cache key hashes its own files once per process; done
    here, every job forked from this worker has it (it cost each job
    most of a second)."""
    if CPU:
        return
    try:
        from triton.runtime.cache import triton_key
        triton_key()
    except Exception:  # noqa: BLE001 - another Triton: each job hashes for itself
        pass


def main():
    _warm_triton()
    # What the worker holds now (the imports: several hundred thousand
    # objects) lives as long as it does: out of the collector's sight,
    # a job's collections scan its own objects only, and never write to
    # the pages it shares with the worker.
    gc.collect()
    gc.freeze()
    guard.become_subreaper()
    signal.signal(signal.SIGUSR1, _on_pause_signal)
    signal.signal(signal.SIGUSR2, _on_pause_signal)
    sock = socket.socket(fileno=3)
    rfile = sock.makefile("rb")
    wfile = sock.makefile("wb")
    start = _start_request(rfile)
    sandbox.CONF.update(start[proto.REQ_SANDBOX])
    hello = {
        proto.HELLO_HARNESS: geakh.harness_version(),
        proto.HELLO_VERSIONS: {"python": sys.version.split()[0], proto.VERSIONS_TORCH: torch.__version__,
                               "triton": triton.__version__, "numpy": numpy.__version__},
        proto.HELLO_DEVICE: probe_device(),
        # What torch was built for: a CPU build can never use a GPU, which
        # geak-eval says in those words rather than as a failing reference.
        proto.HELLO_BUILD: {proto.BUILD_CUDA: torch.version.cuda,
                            proto.BUILD_HIP: getattr(torch.version, "hip", None)},
        proto.HELLO_CPU: CPU,
        proto.HELLO_FINGERPRINT: fingerprint(),
    }
    wfile.write((json.dumps(hello) + "\n").encode())
    wfile.flush()
    for line in rfile:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if isinstance(req, dict) and req.get(proto.REQ_OP) == proto.OP_QUIT:
                break
            _check_request(req)
        except (ValueError, proto.ProtocolError) as exc:
            resp = {proto.RESP_STATUS: proto.ENDED_BAD_REQUEST, proto.RESP_ERROR: str(exc)[:500]}
        else:
            resp = serve_one(req, sock, rfile, wfile)
        wfile.write((json.dumps(resp) + "\n").encode())
        wfile.flush()


def _start_request(rfile):
    """The first request, which names the jobs' sandbox settings; the
    worker cannot go on without it."""
    try:
        req = json.loads(rfile.readline())
        if not isinstance(req, dict) or req.get(proto.REQ_OP) != proto.OP_START:
            raise proto.ProtocolError(f"the first request is not {proto.OP_START!r}")
        if not isinstance(proto.need(req, proto.REQ_SANDBOX, "the start request"), dict):
            raise proto.ProtocolError(f"the start request's {proto.REQ_SANDBOX!r} is not an object")
    except (ValueError, proto.ProtocolError) as exc:
        sys.exit(f"geak_worker: {exc}")
    return req


# What each operation's request must hold beside what every one does:
# geak-eval decides every limit, and the worker takes none of its own.
_EVERY = (proto.REQ_DIR, proto.REQ_NONCE, proto.REQ_TIMEOUT, proto.REQ_COMPILE)
_NEEDS = {proto.OP_STATIC: (), proto.OP_RUN: (proto.REQ_PLAN,),
          proto.OP_CALIBRATE: (proto.REQ_RUN_BUDGET, proto.REQ_PERF),
          proto.OP_REGENERATE: (proto.REQ_RUN_BUDGET, proto.REQ_PERF, proto.REQ_PROFILE),
          proto.OP_JUDGE: (proto.REQ_PROFILE, proto.REQ_CAND, proto.REQ_CAND_NONCE, proto.REQ_PART)}


def _check_request(req):
    """A ProtocolError naming what req lacks."""
    if not isinstance(req, dict):
        raise proto.ProtocolError("a request is not a JSON object")
    op = proto.need(req, proto.REQ_OP, "the request")
    if op not in _NEEDS:
        raise proto.ProtocolError(f"unknown op {op!r}")
    for key in _EVERY + _NEEDS[op]:
        proto.need(req, key, f"the {op} request")
    for key in (proto.REQ_TIMEOUT, proto.REQ_COMPILE) + \
            ((proto.REQ_RUN_BUDGET,) if op in (proto.OP_CALIBRATE, proto.OP_REGENERATE) else ()):
        if isinstance(req[key], bool) or not isinstance(req[key], (int, float)) or req[key] <= 0:
            raise proto.ProtocolError(f"the {op} request's {key!r} is not a positive number")


if __name__ == "__main__":
    main()
