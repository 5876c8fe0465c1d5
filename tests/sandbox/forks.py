# Hostile, bounded: fork 400 sleepers that stay.  The job's process limit
# stops the flood well before, and none of them outlives the job.
import ctypes
import os
import time

libc = ctypes.CDLL(None)
made = 0
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        libc.prctl(15, b"geak-sbx-flood", 0, 0, 0)  # PR_SET_NAME
        time.sleep(120)
        os._exit(0)
    made += 1
print(f"sandbox-probe: forked {made} of 400")
