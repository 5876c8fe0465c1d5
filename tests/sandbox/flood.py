# Hostile: print 300 MB.  The job's output is kept to its last bytes,
# with the cut counted; the run goes on.
import sys

line = "x" * 1023 + "\n"
block = line * 1024
for _ in range(300):
    sys.stdout.write(block)
sys.stdout.flush()
print("sandbox-probe: flood done")
