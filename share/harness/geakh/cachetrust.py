"""A code's Triton compile cache as the next job of that code finds it:
what Triton's file cache holds for compiled kernels, and nothing else.

A job writes its code's cache (the worker's GEAK_TRITON_CACHE/<code>), and
whatever ran in the job may have written anything there.  The worker,
outside the sandbox, prunes it before and after each job of that code
(prune), with no process of the job left: what stays is

  <52 characters of base32>/          a kernel's directory (Triton's key)
      __grp__<name>.json              its group: {"child_paths": {file: path}}
      <name>.<kind>                   a file its group names, at the path
                                      <cache>/<key>/<name>.<kind>

(a group is kept with all of its files, or not at all)
with <kind> one of KINDS, every file a regular file of one link and at
most FILE_CAP bytes.  Everything else goes: other files and directories,
links (never followed), FIFOs and devices, Triton's half-written
tmp.pid_* directories, and the launcher modules (.so) Triton builds
there, which are host code: any job of the code could have written their
bytes, and the next would load them.  What stays is kernel-shaped, not
proven genuine: its bytes are the code's own, read by that code's jobs
alone (each job sees its own code's cache only).

Every step opens by descriptor, relative to the directory above, with
O_NOFOLLOW; subdirectories of what is removed are moved up to the cache
directory and cleared from there, so that no depth of nesting costs more
than two descriptors.
"""
import json
import os
import re
import stat

KEY = re.compile(r"[A-Z2-7]{52}\Z")  # base32 of a SHA-256, as triton.runtime.cache names them
KINDS = ("json", "ttir", "ttgir", "llir", "ptx", "cubin", "hsaco", "amdgcn", "source")
GROUP = re.compile(r"__grp__([^/]+)\.json\Z")
FILE_CAP = 64 << 20
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def prune(root):
    """Remove from the cache directory root all but compiled kernels, as
    the module's docstring says; the removed entries (paths under root),
    sorted.  A root that is missing or a link is left alone."""
    removed = []
    try:
        top = os.open(root, _DIR)
    except OSError:
        return removed
    try:
        _own(top)
        for name in _names(top):
            if name.startswith(".geak-prune-"):
                continue
            if not (KEY.match(name) and _is_dir(top, name) and _keep_kernels(top, name, root, removed)):
                _remove(top, name, removed, name)
        for name in _names(top):  # what an interrupted prune moved up
            if name.startswith(".geak-prune-"):
                _remove(top, name, [], name)
    finally:
        os.close(top)
    return sorted(removed)


def _names(fd):
    try:
        with os.scandir(fd) as it:
            return [e.name for e in it]
    except OSError:
        return []


def _is_dir(dirfd, name):
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _own(fd):
    """The directory fd writable by its owner again (a job may have taken
    the write bit away to keep what it holds)."""
    try:
        os.fchmod(fd, 0o700)
    except OSError:
        pass


def _read_small(dirfd, name):
    """name's bytes where it is a regular file of one link and at most
    FILE_CAP bytes; None otherwise (a FIFO is never waited on)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dirfd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > FILE_CAP:
            return None
        return os.read(fd, st.st_size + 1)[:FILE_CAP]
    finally:
        os.close(fd)


def _plain_file(dirfd, name):
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_size <= FILE_CAP


def _group_children(data, stem, where):
    """The files a group names, where it is Triton's group of the kernel
    stem in the directory where; None where it is not."""
    try:
        grp = json.loads(data)
    except ValueError:
        return None
    children = grp.get("child_paths") if isinstance(grp, dict) else None
    if not isinstance(children, dict):
        return None
    for name, path in children.items():
        kind = name[len(stem) + 1:] if name.startswith(stem + ".") else None
        if kind not in KINDS or path != os.path.join(where, name):
            return None
    return set(children)


def _keep_kernels(top, key, root, removed):
    """Prune the kernel directory key to its groups and their files; False
    where nothing of it stays (the caller removes it)."""
    try:
        fd = os.open(key, _DIR, dir_fd=top)
    except OSError:
        return False
    try:
        _own(fd)
        names = _names(fd)
        keep = set()
        for name in names:
            m = GROUP.match(name)
            if not m:
                continue
            data = _read_small(fd, name)
            children = _group_children(data, m.group(1), os.path.join(root, key)) \
                if data is not None else None
            if children is not None and all(_plain_file(fd, c) for c in children):
                keep |= {name} | children
        for name in names:
            if name not in keep:
                _remove(fd, name, removed, os.path.join(key, name), top)
        return bool(keep)
    finally:
        os.close(fd)


def _remove(dirfd, name, removed, shown, top=None):
    """Remove dirfd/name, not followed; a directory's subdirectories are
    moved up to top (dirfd where None) and cleared from there."""
    top = dirfd if top is None else top
    removed.append(shown)
    queue = [(dirfd, name)]
    while queue:
        parent, cur = queue.pop()
        try:
            fd = os.open(cur, _DIR, dir_fd=parent)
        except OSError:  # not a directory (or a link to one): the entry itself
            try:
                os.unlink(cur, dir_fd=parent)
            except OSError:
                pass
            continue
        try:
            _own(fd)
            for sub in _names(fd):
                if _is_dir(fd, sub):
                    up = _free_name(top)
                    try:
                        os.rename(sub, up, src_dir_fd=fd, dst_dir_fd=top)
                        queue.append((top, up))
                    except OSError:
                        pass
                else:
                    try:
                        os.unlink(sub, dir_fd=fd)
                    except OSError:
                        pass
        finally:
            os.close(fd)
        try:
            os.rmdir(cur, dir_fd=parent)
        except OSError:
            pass


_serial = [0]


def _free_name(top):
    while True:
        _serial[0] += 1
        name = f".geak-prune-{os.getpid()}-{_serial[0]}"
        try:
            os.stat(name, dir_fd=top, follow_symlinks=False)
        except FileNotFoundError:
            return name
        except OSError:
            pass
