# Hostile: leave a daemon behind: fork, setsid, fork again, and exec a
# sleeper from a string built at run time.  It must not outlive the job.
import os

pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        exec("os.execv('/bin/sleep', ['sleep', '" + "3133" + "7.5'])")
    os._exit(0)
os.waitpid(pid, 0)
print("sandbox-probe: daemon started")
