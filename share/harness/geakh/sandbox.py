"""What a job's process gets from the worker before it runs any code.

The worker forks a relay per job into a PID namespace of its own
(new_pid_namespace): the relay is its first process, and the job, the
relay's child, sees no process outside; when the relay ends, everything
the job started ends with it.  (The job is not the first process itself:
that one ignores every signal it has no handler for, its own included.)
The job then calls enter(), which applies, each where the kernel allows
it:

  G  a cgroup of its own (memory.max, pids.max; killed whole at its end)
  M  a mount namespace of its own: a fresh /proc (written only where
     it concerns the job's own processes), a private /tmp and
     /dev/shm, and, of geak-eval's directories, only its own job
     directory and compile cache (written) and what it reads (the
     judge's profile and run); every other mount read-only, and outside
     geak-eval's private root a /dev of its own
  U  an unprivileged uid of its own (in geak-eval's private root, as
     root), else no capabilities at all
  N  RLIMIT_NPROC (under its own uid, or in a user namespace)
  A  RLIMIT_AS (in the CPU mode, without a memory cgroup)

The job's /tmp and /dev/shm hold memory too.  Under a memory cgroup their
pages are charged to the job's cgroup, within its one limit; without one,
each is an eighth of the limit, and RLIMIT_AS gets the three quarters they
leave, so that what the job holds in all stays within the limit.

and returns the letters of those applied; the relay adds P for the PID
namespace and restrict_writes (Landlock) gives L.  geak-eval passes its
settings in the worker's first request (start's sandbox: proto.py's BOX_
names), which the worker puts in CONF before it probes the device.
"""
import ctypes
import errno
import os
import resource
import stat

from . import proto

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID = 0x00020000, 0x08000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
ST_FLAGS = ((os.ST_RDONLY, MS_RDONLY), (os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV),
            (os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME),
            (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))
PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 4, 24, 38

_libc = ctypes.CDLL(None, use_errno=True)
CONF = {}
# geak-eval's private root (lib/eval/sandbox.c) has this file at its top.
VIEW = os.path.exists("/.geak-view")


def _b(s):
    return None if s is None else os.fsencode(s)


def _check(r, what):
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _mount(src, target, fstype, flags, data=None):
    _check(_libc.mount(_b(src), _b(target), _b(fstype), ctypes.c_ulong(flags), _b(data)),
           f"mount {target}")


def _kept_flags(path):
    """The per-mount flags a bind inherits and, in a user namespace, may
    not drop."""
    f = os.statvfs(path).f_flag
    flags = 0
    for st, ms in ST_FLAGS:
        if f & st:
            flags |= ms
    return flags if flags & (MS_NOATIME | MS_RELATIME) else flags | MS_STRICTATIME


def _remount(path, flags, write=False):
    kept = _kept_flags(path) & ~(MS_RDONLY if write else 0)
    _mount(None, path, None, MS_REMOUNT | MS_BIND | flags | kept)


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _read_only_all():
    """Every mount of this namespace read-only: a job that stays root owns
    the host's files and its /proc and /sys, and may write what its owner
    may, capabilities or not."""
    SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 1
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    if _libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_long(AT_FDCWD), b"/",
                     ctypes.c_long(AT_RECURSIVE), ctypes.byref(attr),
                     ctypes.c_long(ctypes.sizeof(attr))) == 0:
        return
    with open("/proc/self/mountinfo") as fp:  # before Linux 5.12: one by one
        points = [ln.split()[4].replace("\\040", " ") for ln in fp]
    for p in points:
        try:
            _remount(p, MS_RDONLY)
        except OSError:
            pass


_DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")


def _private_dev():
    """Outside geak-eval's private root, a /dev of the standard nodes and
    the GPU's alone: the host's holds its disks."""
    names = [n for n in os.listdir("/dev")
             if n in _DEV_NODES or n.startswith("nvidia") or n in ("kfd", "dri")]
    fds = [(n, os.open("/dev/" + n, os.O_PATH | os.O_CLOEXEC)) for n in names]
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name, fd in fds:
        path = "/dev/" + name
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.mkdir(path)
        else:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, "/dev/" + name)
    os.mkdir("/dev/shm")


def _under(path, root):
    return path == root or path.startswith(root.rstrip("/") + "/")


_OWN_PIDNS = None


def new_pid_namespace():
    """In the worker, before it forks a job's relay: True when the relay
    will be the first process of a PID namespace of its own (and the job,
    its child, see no process outside).  restore_pid_namespace after the
    fork."""
    global _OWN_PIDNS
    if _OWN_PIDNS is None:
        try:
            _OWN_PIDNS = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            _OWN_PIDNS = -1
    return _OWN_PIDNS >= 0 and _libc.unshare(ctypes.c_int(CLONE_NEWPID)) == 0


def restore_pid_namespace():
    """The worker's next children in its own PID namespace again, so that
    the next job can have a new one."""
    _check(_libc.setns(ctypes.c_int(_OWN_PIDNS), ctypes.c_int(CLONE_NEWPID)), "setns")


def in_user_namespace():
    try:
        with open("/proc/self/uid_map") as fp:
            return fp.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


# ---- the cgroup -------------------------------------------------------------

def _cgroup():
    return CONF.get(proto.BOX_CGROUP) if VIEW else CONF.get(proto.BOX_CGROUP_HOST)


def _join_cgroup():
    cg = _cgroup()
    if not cg:
        return False
    try:
        with open(os.path.join(cg, "cgroup.procs"), "w") as fp:
            fp.write("0\n")
        return True
    except OSError:
        return False


def oom_kills():
    """How many times the job cgroup's memory limit has killed (-1: no
    such cgroup)."""
    try:
        with open(os.path.join(_cgroup() or "", "memory.events")) as fp:
            for line in fp:
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    return int(v)
    except (OSError, ValueError):
        pass
    return -1


def kill_cgroup():
    """Kill whatever is left in the job cgroup and wait (2 s at most) for
    it to empty."""
    import time
    cg = _cgroup()
    if not cg or not os.path.isdir(cg):
        return
    for _ in range(200):
        try:
            with open(os.path.join(cg, "cgroup.events")) as fp:
                if "populated 1" not in fp.read():
                    return
            with open(os.path.join(cg, "cgroup.kill"), "w") as fp:
                fp.write("1\n")
        except OSError:
            return
        time.sleep(0.01)


# ---- the mounts -------------------------------------------------------------

def _covers():
    """The directories replaced by empty ones, as (path, tmpfs mode,
    writable): /tmp where it is the view's (outside one, /tmp holds
    geak-eval's own directories), then geak-eval's (its run directory,
    the cache), outermost first."""
    out = [("/tmp", "1777", True)] if VIEW else []
    for h in sorted(CONF.get(proto.BOX_HIDE) or []):
        if os.path.isdir(h) and not any(_under(h, c[0]) for c in out):
            out.append((h, "0755", False))
    return out


# Without a memory cgroup, the share of the job's memory limit that each of
# its /tmp and /dev/shm may hold.
TMPFS_SHARE = 8


def _tmpfs_bytes(charged):
    """The size of each of the job's /tmp and /dev/shm (0: no limit);
    charged: their pages count in the job's memory cgroup."""
    mem = CONF.get(proto.BOX_MEMORY) or 0
    return mem if charged else mem // TMPFS_SHARE


def _mounts(keep, pidns, charged):
    """keep: (path, read_only) of the job's directories; shown again, alone,
    where their parents are covered.  Everything else is read-only but the
    job's /tmp and /dev/shm."""
    try:
        _check(_libc.unshare(ctypes.c_int(CLONE_NEWNS | CLONE_NEWIPC)), "unshare")
        # Refused where the worker is under Landlock: then no mount at all.
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError:
        return False
    if pidns:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if not VIEW:
        _private_dev()
    tmpfs = _tmpfs_bytes(charged)
    size = f",size={tmpfs}" if tmpfs else ""
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777" + size)
    covers = _covers()
    # The worker's own reads (the Python environment, the harness) stay
    # where a cover would hide them.
    # (Not one that holds the job's own: its real directories between
    # would bar the job's uid from them.)
    keep = keep + [(p, True) for p in CONF.get(proto.BOX_RO) or []
                   if not any(_under(p, k) or _under(k, p) for k, _ in keep)]
    written = [p for p, ro in keep if not ro and os.path.isdir(p)]
    fds = [(os.open(p, os.O_PATH | os.O_CLOEXEC), p) for p, ro in keep
           if os.path.exists(p) and any(_under(p, c[0]) for c in covers)]
    for path, mode, _ in covers:
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode}" + size)
    for fd, path in sorted(fds, key=lambda f: f[1]):
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.makedirs(path, exist_ok=True)
        elif not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
    for path in written:
        if not os.path.ismount(path):  # a mount of its own, to be written
            _mount(path, path, None, MS_BIND | MS_REC)
    _read_only_all()
    for path in written + ["/dev/shm"] + [c[0] for c in covers if c[2]]:
        _remount(path, MS_NOSUID | MS_NODEV, write=True)
    _writable_proc()
    return True


# What of /proc reaches beyond the job's own processes: kept read-only, or
# hidden, while the rest is written.
_PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs")
_PROC_HIDDEN = ("kcore", "keys", "timer_list", "sched_debug")


def _writable_proc():
    """/proc written again, but for what reaches beyond the job: the GPU
    runtime names its threads through /proc/self/task/*/comm and does not
    start where it cannot.  Where a part cannot be shut, /proc stays
    read-only."""
    try:
        for name in _PROC_READ_ONLY:
            path = "/proc/" + name
            if os.path.exists(path):
                _mount(path, path, None, MS_BIND | MS_REC)
                _remount(path, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for name in _PROC_HIDDEN:
            path = "/proc/" + name
            if os.path.isfile(path):
                _mount("/dev/null", path, None, MS_BIND)
    except OSError:
        return
    _remount("/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, write=True)


# ---- the uid ------------------------------------------------------------------

def _grant(d, rw, ro, gid):
    """The job's directories opened to the group of every job's uid (so that
    a judge reads the runs and profiles of the others).  They stay root's
    and sticky: the job adds files, but cannot replace those the worker
    keeps there (its output's tails) or geak-eval gave it (job.json)."""
    for p in [d] + rw:
        os.chown(p, 0, gid)
        os.chmod(p, 0o3770)
    job = os.path.join(d, proto.FILE_JOB)
    if os.path.isfile(job):
        os.chown(job, 0, gid)
        os.chmod(job, 0o640)
    for top in ro:
        if os.stat(top).st_gid == gid:
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            for name in [""] + filenames:
                path = os.path.join(dirpath, name) if name else dirpath
                st = os.lstat(path)
                if not stat.S_ISLNK(st.st_mode):
                    os.chown(path, -1, gid)
                    os.chmod(path, st.st_mode | (0o050 if stat.S_ISDIR(st.st_mode) else 0o040))


def _gpu_groups():
    """The groups that own the GPU's device nodes (render, video), for a
    job that is not root to open them."""
    groups = set()
    paths = [os.path.join("/dev", n) for n in os.listdir("/dev")]
    if os.path.isdir("/dev/dri"):
        paths += [os.path.join("/dev/dri", n) for n in os.listdir("/dev/dri")]
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_gid != 0 and st.st_mode & 0o060:
            groups.add(st.st_gid)
    return sorted(groups)


def _drop_uid(uid, gid):
    os.setgroups([gid] + [g for g in _gpu_groups() if g != gid])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    # The change of uid gave the process's /proc entries to root: they are
    # its own again, so that its threads can name themselves.
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    return os.getuid() == uid and os.geteuid() == uid


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _drop_caps():
    """Root without a uid to become (in a user namespace, or without the
    private root): no capability left, none to gain back."""
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), data), "capset")


# ---- the limits -----------------------------------------------------------------

def _vm_size():
    with open("/proc/self/statm") as fp:
        return int(fp.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _limits(own_uid, charged):
    done = set()
    procs = CONF.get(proto.BOX_PROCS)
    # RLIMIT_NPROC counts the processes of the real uid, and never holds
    # the real root back: only a uid of the job's own makes it the job's.
    if procs and (own_uid or in_user_namespace()):
        resource.setrlimit(resource.RLIMIT_NPROC, (procs, procs))
        done.add("N")
    mem = CONF.get(proto.BOX_MEMORY)
    # CUDA reserves far more address space than it uses: RLIMIT_AS only
    # in the CPU mode, counted from what the job starts with.
    if mem and os.environ.get(proto.ENV_EVAL_CPU) == "1" and not charged:
        lim = _vm_size() + mem - 2 * _tmpfs_bytes(charged)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        done.add("A")
    return done


# ---- Landlock ------------------------------------------------------------

_SYS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_WRITE_ACCESS = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | \
    (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)  # write file, remove, make *
_REFER, _TRUNCATE = 1 << 13, 1 << 14


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def restrict_writes(dirs):
    """Allow writes only beneath dirs and this process's /proc entries, for
    this process and its children.
    Returns True when the kernel applied the rule set."""
    nums = _SYS.get(os.uname().machine)
    if not nums:
        return False
    create, add, restrict = nums
    libc = ctypes.CDLL(None, use_errno=True)
    abi = libc.syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return False
    access = _WRITE_ACCESS
    if abi >= 2:
        access |= _REFER
    if abi >= 3:
        access |= _TRUNCATE
    attr = _RulesetAttr(access)
    rs = libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                      ctypes.c_uint32(0))
    if rs < 0:
        return False
    try:
        # The process's own /proc entries stay writable: the GPU runtime
        # names its threads there and does not start where it cannot.
        for d in list(dirs) + ["/proc/self"]:
            try:
                fd = os.open(d, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            pb = _PathBeneath(access, fd)
            libc.syscall(add, ctypes.c_int(rs), ctypes.c_int(1), ctypes.byref(pb),
                         ctypes.c_uint32(0))
            os.close(fd)
        PR_SET_NO_NEW_PRIVS = 38
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.syscall(restrict, ctypes.c_int(rs), ctypes.c_uint32(0)) == 0
    finally:
        os.close(rs)


# ---- the names of secrets ------------------------------------------------------

# The marks of a credential's name, one a line: geak-eval's own rule
# (lib/secrets.c is built from this file).
SECRET_MARKS_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                 "secret-marks")


def secret_marks():
    with open(SECRET_MARKS_FILE) as fp:
        return [ln.strip() for ln in fp if ln.strip() and not ln.startswith("#")]


def secret_names():
    """Names in the environment that look like credentials (must be none):
    those holding one of secret_marks(), case aside."""
    marks = secret_marks()
    return sorted(n for n in os.environ if any(m in n.upper() for m in marks))


# ---- all of it -----------------------------------------------------------------

def enter(d, rw, ro, skip=(), pidns=False):
    """Isolate this process (the job, in its directory d) before it runs any
    code: rw are the other directories it writes, ro those it reads.
    Returns the letters of the layers applied; skip names layers not to
    apply (a GPU runtime that does not start under them)."""
    applied = {"P"} if pidns else set()
    uid, gid = CONF.get(proto.BOX_UID), CONF.get(proto.BOX_GID)
    own_uid = (VIEW and "U" not in skip and uid is not None and gid is not None
               and os.geteuid() == 0 and not in_user_namespace())
    if "G" not in skip and _join_cgroup():
        applied.add("G")
    if own_uid:
        try:
            _grant(d, rw, ro, gid)
        except OSError:  # a root without CAP_CHOWN (a container's)
            own_uid = False
    charged = "G" in applied and bool(CONF.get(proto.BOX_MEMORY_CGROUP))
    keep = [(p, False) for p in [d] + rw] + [(p, True) for p in ro]
    if "M" not in skip and _mounts(keep, pidns, charged):
        applied.add("M")
    try:
        dropped = own_uid and _drop_uid(uid, gid)
    except OSError:  # a root without CAP_SETUID
        dropped = False
    if dropped:
        applied.add("U")
        os.environ["USER"] = os.environ["LOGNAME"] = "geak"
    else:
        _drop_caps()
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    os.umask(0o007)
    applied |= _limits("U" in applied, charged)
    return applied
