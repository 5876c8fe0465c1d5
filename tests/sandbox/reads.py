# Hostile: read files outside what a job needs: a file of the test's
# beside the run, the invoking user's home, /etc.
import os

for path in ("@OUTSIDE@/outside.txt", "/root/.gitconfig", "/etc/shadow", "/etc/hostname"):
    try:
        with open(path) as fp:
            print("sandbox-probe: read", path, fp.read(200).strip())
    except OSError as exc:
        print("sandbox-probe: unreadable", path, exc.strerror)
for path in ("@OUTSIDE@", "/root", os.path.dirname(os.getcwd())):
    try:
        print("sandbox-probe: listed", path, sorted(os.listdir(path))[:20])
    except OSError as exc:
        print("sandbox-probe: unlistable", path, exc.strerror)
