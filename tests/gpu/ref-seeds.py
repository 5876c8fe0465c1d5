"""Run references of a record file as plain scripts (code, then the test
part, as GEAK-eval runs them), unseeded and under each of a few seeds, to
see whether a reference's failure depends on its random inputs.

    python3 tests/gpu/ref-seeds.py RECORDS.jsonl ID[,ID...] [SEEDS]

Prints one line per reference and seed: the exit status and the last line
of stderr.  Runs up to 8 at once."""
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

SEED = ("import random, numpy, torch\nrandom.seed({0}); numpy.random.seed({0}); "
        "torch.manual_seed({0}); torch.cuda.manual_seed_all({0})\n")


def one(rec, seed, tmp):
    name = rec["task"]["name"]
    path = os.path.join(tmp, f"{name}-{seed}.py")
    with open(path, "w") as fp:
        if seed != "none":
            fp.write(SEED.format(seed))
        fp.write(rec["task"]["reference"] + "\n\n" + rec["task"]["test"] + "\n")
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
    try:
        p = subprocess.run([sys.executable, path], capture_output=True, text=True,
                           timeout=120, cwd=tmp, env=env)
        rc, err = p.returncode, p.stderr.strip().splitlines()
    except subprocess.TimeoutExpired:
        rc, err = "timeout", []
    return f"{rec['id']}\tseed {seed}\texit {rc}\t{err[-1][:160] if err else ''}"


def main():
    recs = {}
    with open(sys.argv[1]) as fp:
        for line in fp:
            r = json.loads(line)
            recs[r["id"]] = r
    ids = sys.argv[2].split(",")
    seeds = sys.argv[3].split(",") if len(sys.argv) > 3 else ["none", "42", "43", "44"]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(8) as pool:
        jobs = [pool.submit(one, recs[i], s, tmp) for i in ids for s in seeds]
        for j in jobs:
            print(j.result(), flush=True)


if __name__ == "__main__":
    main()
