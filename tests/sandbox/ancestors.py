# Hostile: read the environment of every process it can see, its
# ancestors first (geak-eval, the shell above it), and print what looks
# like a credential.  In a PID namespace of its own it sees only itself
# and the namespace's first process, its relay, which it may not read.
import os

seen, found, chain = 0, [], []
pid = os.getpid()
while pid > 0 and len(chain) < 16:
    chain.append(pid)
    try:
        with open(f"/proc/{pid}/status") as fp:
            pid = int([ln for ln in fp if ln.startswith("PPid:")][0].split()[1])
    except (OSError, IndexError, ValueError):
        break
for entry in os.listdir("/proc"):
    if not entry.isdigit():
        continue
    seen += 1
    try:
        with open(f"/proc/{entry}/environ", "rb") as fp:
            env = fp.read().split(b"\0")
    except OSError:
        continue
    found += [e.decode(errors="replace") for e in env if b"KEY" in e or b"TOKEN" in e]
print(f"sandbox-probe: ancestors {len(chain) - 1} processes {seen} secrets {len(found)}")
for e in found:
    print("sandbox-probe: found", e)
