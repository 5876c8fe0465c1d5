"""One sandbox layer set, applied to this process, then the GPU runtime
started and a Triton kernel launched: prints one JSON line with the
layers asked for, the time, and the error if any.

    python3 tests/gpu/sandbox-layers.py LETTERS [WORKDIR]

Run as root on a GPU machine (tests/gpu/sandbox-trace.sh runs every set,
and traces the ones that fail).  The letters, applied in this order:

  P  a PID namespace of its own (unshare, then fork: the rest runs in
     the child)
  I  an IPC namespace of its own
  M  a mount namespace of its own, every mount private
  R  a fresh /proc (needs M)
  D  a private /dev of the standard and GPU nodes (needs M)
  S  a private /dev/shm (needs M)
  T  a private /tmp (needs M)
  O  every mount read-only but WORKDIR, and /tmp and /dev/shm where
     they are mounts (needs M)
  F  geakh/sandbox.py's own mounts, as a job gets them (in place of
     MRDSTO and I)
  U  uid and gid 65534, with the groups of the GPU's nodes
  C  no capability left
  N  no_new_privs
  L  Landlock: writes beneath WORKDIR and /dev only
"""
import ctypes
import json
import os
import sys
import time

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(top, "share", "harness"))
from geakh import sandbox  # noqa: E402

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18


def check(r, what):
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def apply(letters, work):
    if "I" in letters:
        check(libc.unshare(CLONE_NEWIPC), "unshare ipc")
    if "M" in letters:
        check(libc.unshare(CLONE_NEWNS), "unshare mnt")
        sandbox._mount(None, "/", None, MS_REC | MS_PRIVATE)
    if "R" in letters:
        sandbox._mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if "D" in letters:
        sandbox._private_dev()
    if "S" in letters:
        sandbox._mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    if "T" in letters:
        sandbox._mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    if "O" in letters:
        sandbox._mount(work, work, None, 4096 | MS_REC)
        sandbox._read_only_all()
        for p in [work] + [q for q in ("/tmp", "/dev/shm") if os.path.ismount(q)]:
            sandbox._remount(p, MS_NOSUID | MS_NODEV, write=True)
    if "F" in letters:
        if not sandbox._mounts([(work, False)], "P" in letters):
            raise OSError("sandbox._mounts refused")
    if "U" in letters:
        os.chmod(work, 0o777)
        if not sandbox._drop_uid(65534, 65534):
            raise OSError("uid not dropped")
    if "C" in letters:
        sandbox._drop_caps()
    if "N" in letters:
        check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")
    if "L" in letters and not sandbox.restrict_writes([work, "/dev"]):
        raise OSError("Landlock refused")


def writable(path):
    try:
        with open(path, "r+"):
            return True
    except OSError as exc:
        return exc.strerror


def gpu(work):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

    torch.cuda.init()
    x = torch.arange(1000, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    add[(4,)](x, x, out, 1000, BLOCK=256)
    torch.cuda.synchronize()
    if not torch.equal(out, 2 * x):
        raise RuntimeError("wrong sum")
    return torch.cuda.get_device_name(0)


def main():
    letters = sys.argv[1] if len(sys.argv) > 1 else ""
    work = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "layers-work")
    os.makedirs(work, exist_ok=True)
    os.environ.update(TRITON_CACHE_DIR=os.path.join(work, "triton"), HOME=work, TMPDIR=work,
                      CUDA_CACHE_PATH=os.path.join(work, "nv"))
    # Imported before any layer, as the worker does before it forks a job.
    import torch  # noqa: F401
    import triton  # noqa: F401
    t0 = time.time()
    if "P" in letters:
        if not sandbox.new_pid_namespace():
            print(json.dumps({"layers": letters, "ok": False, "error": "no PID namespace"}))
            return 1
        pid = os.fork()
        if pid:
            _, st = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(st)
    rec = {"layers": letters or "-", "pid": os.getpid()}
    try:
        apply(letters, work)
        rec["writes"] = {p: writable(p) for p in ("/proc/self/comm", "/proc/sys/kernel/hostname")}
        rec["device"] = gpu(work)
        rec["ok"] = True
    except Exception as exc:  # noqa: BLE001
        rec["ok"] = False
        rec["error"] = f"{type(exc).__name__}: {exc}"[:300]
    rec["seconds"] = round(time.time() - t0, 2)
    print(json.dumps(rec), flush=True)
    return 0 if rec["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
