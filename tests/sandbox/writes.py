# Hostile: write outside its job directory: /tmp, /dev/shm, $HOME, the
# invoking user's home, the directory above, and a directory of the
# test's.  What it may write lands in places of its own that go with it.
import os
import pwd

tag = "geak-sbx-@TAG@"
homes = {os.environ.get("HOME", ""), os.path.expanduser("~"), "/root"}
try:
    homes.add(pwd.getpwuid(0).pw_dir)
except KeyError:
    pass
targets = [f"/tmp/{tag}", f"/dev/shm/{tag}", f"../{tag}", f"@OUTSIDE@/{tag}"]
targets += [os.path.join(h, tag) for h in sorted(homes) if h]
for path in targets:
    try:
        with open(path, "w") as fp:
            fp.write("escaped\n")
        print("sandbox-probe: wrote", path)
    except OSError as exc:
        print("sandbox-probe: refused", path, exc.strerror)
