#!/usr/bin/env python3
"""The Python profiles of tests/gpu/profile-check.sh, merged by pass and
job kind: the functions that cost the most, own time and cumulative.

    tests/gpu/pyprof-summary.py [-n N] [-k KIND] PROF_DIR

PROF_DIR is the unpacked prof/ folder (PASS/TASK/JOB/pyprofile*.prof);
KIND picks the job kind (cand, judge, calibrate, static; default all)."""
import collections
import glob
import os
import pstats
import sys


def kind(job):
    return job.split("-", 1)[0]


def main(argv):
    top, only = 25, None
    while argv[:1] in (["-n"], ["-k"]):
        if argv[0] == "-n":
            top = int(argv[1])
        else:
            only = argv[1]
        argv = argv[2:]
    if len(argv) != 1:
        sys.exit(__doc__)
    groups = collections.defaultdict(list)
    for f in glob.glob(os.path.join(argv[0], "*", "*", "*", "pyprofile*.prof")):
        pass_, _task, job = f.split(os.sep)[-4:-1]
        stem = os.path.basename(f)[len("pyprofile"):-len(".prof")]
        k = "calibrate" + stem if pass_ == "calibrate" else kind(job)
        if only and k != only:
            continue
        groups[(pass_, k)].append(f)
    for (pass_, k), files in sorted(groups.items()):
        print(f"==== {pass_} / {k}: {len(files)} profiles")
        stats = pstats.Stats(*files, stream=sys.stdout)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)


if __name__ == "__main__":
    main(sys.argv[1:])
