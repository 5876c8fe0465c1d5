# Hostile, bounded: take memory 256 MiB at a time, touching it, up to
# @CHUNKS@ chunks (4 GiB in the CPU test).  The job's memory limit stops
# it (MemoryError under an rlimit, the job killed under a cgroup).
chunks = []
try:
    while len(chunks) < @CHUNKS@:
        chunks.append(bytearray(b"x") * (256 << 20))
except MemoryError:
    pass
print(f"sandbox-probe: allocated {len(chunks) * 256} MiB")
del chunks
