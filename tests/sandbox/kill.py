# Hostile: kill a process outside, by the PID the test gives it, and its
# own parent.  In a PID namespace of its own that PID is no one it can
# reach.
import os
import signal

for pid in (@PID@, os.getppid()):
    if pid <= 0:
        continue
    try:
        os.kill(pid, signal.SIGKILL)
        print("sandbox-probe: killed", pid)
    except OSError as exc:
        print("sandbox-probe: could not kill", pid, exc.strerror)
