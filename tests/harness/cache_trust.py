"""The rules of tests/0322-eval-cache-trust.t on a cache made here, one
line each: NAME ok|FAIL.  A kernel directory as Triton 3.6 writes it stays;
everything else a job could leave goes, and no link is followed."""
import json
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "share", "harness"))
from geakh import cachetrust  # noqa: E402

work = os.path.abspath(sys.argv[2])
root = os.path.join(work, "cache")
outside = os.path.join(work, "outside")
os.makedirs(outside)
with open(os.path.join(outside, "victim"), "w") as fp:
    fp.write("keep me\n")
KEY = "A" * 52
OTHER = "B" * 52


def put(rel, data=b"x"):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fp:
        fp.write(data)
    return path


def group(key, stem, kinds, where=None):
    children = {f"{stem}.{k}": os.path.join(where or os.path.join(root, key), f"{stem}.{k}")
                for k in kinds}
    put(f"{key}/__grp__{stem}.json", json.dumps({"child_paths": children}).encode())
    for name in children:
        put(f"{key}/{name}")


# A kernel as Triton writes it, and beside it what is not one.
group(KEY, "_add_kernel", ("source", "ttir", "ttgir", "llir", "ptx", "cubin", "json"))
put(f"{KEY}/_add_kernel.so")                       # a file no group names
put(f"{KEY}/tmp.pid_7_abc/_add_kernel.cubin")      # a put cut short
os.symlink(os.path.join(outside, "victim"), os.path.join(root, KEY, "_add_kernel.hsaco"))
group(OTHER, "k", ("json", "cubin"), where=outside)  # a group naming files elsewhere
put("planted/geak-planted.json")
put("CUDA_UTILS.cpython-311-x86_64-linux-gnu.so")
os.mkfifo(os.path.join(root, "fifo"))
with open(os.path.join(root, "huge"), "wb") as fp:
    fp.truncate(cachetrust.FILE_CAP + 1)
os.symlink(outside, os.path.join(root, "C" * 52))  # a kernel directory that is a link
deep = os.path.join(root, "deep")
path = deep
for _ in range(300):
    path = os.path.join(path, "d")
os.makedirs(path)
os.chmod(os.path.join(deep, "d"), 0o500)
put("D" * 52 + "/__grp__b.json", json.dumps({"child_paths": {"b.cubin": os.path.join(
    root, "D" * 52, "b.cubin")}}).encode())
with open(os.path.join(root, "D" * 52, "b.cubin"), "wb") as fp:
    fp.truncate(cachetrust.FILE_CAP + 1)

removed = cachetrust.prune(root)
left = sorted(os.path.relpath(os.path.join(d, f), root)
              for d, dirs, files in os.walk(root) for f in files + [x for x in dirs
                                                                   if os.path.islink(os.path.join(d, x))])
kept = sorted([f"{KEY}/__grp___add_kernel.json"] + [f"{KEY}/_add_kernel.{k}" for k in (
    "source", "ttir", "ttgir", "llir", "ptx", "cubin", "json")])
checks = [
    ("kernel_files_kept", left == kept),
    ("targets_of_links_untouched", sorted(os.listdir(outside)) == ["victim"]
     and open(os.path.join(outside, "victim")).read() == "keep me\n"),
    ("planted_files_removed", "planted" in removed and f"{KEY}/_add_kernel.so" in removed),
    ("fifo_link_huge_removed", all(n in removed for n in ("fifo", "C" * 52, "huge", f"{KEY}/_add_kernel.hsaco"))),
    ("foreign_group_removed", OTHER in removed and "D" * 52 in removed),
    ("deep_tree_removed", not os.path.exists(deep)),
    ("second_prune_removes_nothing", cachetrust.prune(root) == []),
]
for name, ok in checks:
    print(f"{name} {'ok' if ok else 'FAIL'}")
if not all(ok for _, ok in checks):
    print("left:", left, file=sys.stderr)
    print("removed:", removed, file=sys.stderr)
