#!/bin/sh
# KernelBench on a GPU machine: import the archive, calibrate every
# reference as geak-eval prepares it (each problem the reference of a stub
# candidate, as tests/bench/eval-cpu-ok.sh does on the CPU), evaluate the
# hand-written candidates of tests/kernelbench/l1_*.py at the problems'
# own sizes, and print the counts and the reasons of what failed.
#
#   sh tests/gpu/kernelbench-check.sh [-c] [-j N] [-g GPUS] [-a ARCHIVE] [-t DIR] OUT_DIR [STEP[:SECONDS]...]
#
# -c runs geak-eval in its CPU mode instead: a dry run of the steps on an
# archive of problems made small (the published sizes need a GPU).
# Run from the repository root with bin/ built; ARCHIVE defaults to
# ../shared/bench/kernelbench-data.tar.gz.  Steps (default: all of them,
# in this order), each stopped after SECONDS (default 540, under a
# 10-minute lease):
#   env      GPUs and library versions
#   import   geak-import --suite kernelbench: OUT_DIR/tasks.jsonl and the
#            counts per level (import.txt); where geak-import cannot run
#            (no libarchive), make tasks.jsonl elsewhere and copy it in:
#            every later step reads OUT_DIR/tasks.jsonl
#   cands    the hand-written candidates (timed), checked against each
#            file's "# expect:" line, then the PyTorch one again with
#            --static off, so that the run itself must find the fallback
#   level1, level2, level3
#            every reference of that level calibrated: a record without
#            an error is a reference that calibrated (its stub candidate
#            then fails, as it must); an error of kind harness says why
#            the reference did not
#   summary  the counts per level and the failure reasons, from what
#            the steps left in OUT_DIR (summary.txt)
# geak-eval -u writes each result as it finishes and the cache is
# OUT_DIR/cache, so a step cut short and run again resumes.
#
# Disk: a reference's profile keeps its inputs and outputs of every seed,
# about six times a level-1 elementwise problem's 6.4 GB output.  While a
# level step runs, the profiles' tensors (profile.pt, read only to judge
# a candidate that ran, which the stub never does) are deleted once no
# longer written; -t DIR puts the run directories on a larger disk.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs=2 gpus=auto archive=$top/../shared/bench/kernelbench-data.tar.gz tmpdir=${TMPDIR:-/tmp}
usage="usage: $0 [-c] [-j N] [-g GPUS] [-a ARCHIVE] [-t DIR] OUT_DIR [STEP[:SECONDS]...]"
while getopts cj:g:a:t: o; do
	case $o in
	c) gpus= ;;
	t) tmpdir=$OPTARG ;;
	j) jobs=$OPTARG ;; g) gpus=$OPTARG ;; a) archive=$OPTARG ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
o=$1
shift
[ $# -gt 0 ] || set -- env import cands level1 level2 level3 summary
mkdir -p "$o/cache" || exit 3
GEAK_PYTHON=${GEAK_PYTHON:-python3} GEAK_SHAREDIR=$top/share
export GEAK_PYTHON GEAK_SHAREDIR
py=$GEAK_PYTHON
eval=$top/bin/geak-eval

# The records of tasks.jsonl that the Python snippet on stdin picks or
# makes, into the file $1; the GPU machine may lack jq.
records() {
	out=$1
	shift
	"$py" - "$o/tasks.jsonl" "$@" > "$out"
}

# evaluate LABEL BUDGET FILE [geak-eval flags...]: OUT_DIR/LABEL.jsonl,
# the trace in LABEL.trace, one line of how it ended.
evaluate() {
	label=$1 budget=$2 file=$3
	shift 3
	start=$(date +%s)
	if [ -n "$gpus" ]; then set -- --gpus "$gpus" "$@"; else set -- --cpu "$@"; fi
	timeout -s TERM "$budget" "$eval" -u -v -j "$jobs" --cache "$o/cache" --tmpdir "$tmpdir" \
		--timeout 120 --compile-timeout 240 "$@" "$file" > "$o/$label.jsonl" 2> "$o/$label.trace"
	status=$?
	echo "$label: geak-eval $*: exit $status, $(($(date +%s) - start)) s," \
		"$(grep -c . "$o/$label.jsonl") of $(grep -c . "$file") records" | tee "$o/$label.txt"
}

need_tasks() {
	[ -s "$o/tasks.jsonl" ] && return 0
	echo "$0: no $o/tasks.jsonl: run the import step first" >&2
	exit 3
}

for step; do
	name=${step%%:*} b=540
	case $step in *:*) b=${step#*:} ;; esac
	echo "== $name ($b s)"
	case $name in
	env)
		{
			nvidia-smi -L
			"$py" -c 'import sys, torch, triton, numpy; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__)'
			echo "$(nproc) CPUs"
			"$eval" --list-gpus
		} > "$o/env.txt" 2>&1
		cat "$o/env.txt" ;;
	import)
		[ -r "$archive" ] || { echo "$0: no archive $archive" >&2; exit 3; }
		"$top/bin/geak-import" --suite kernelbench "$archive" > "$o/tasks.jsonl" 2> "$o/import.txt"
		echo "geak-import: exit $?" >> "$o/import.txt"
		cat "$o/import.txt" ;;
	cands)
		need_tasks
		records "$o/cands-in.jsonl" "$top"/tests/kernelbench/l1_*.py <<'PY' || exit 3
import json, os, re, sys
tasks = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    tasks[r["id"]] = r
for path in sys.argv[2:]:
    code = open(path).read()
    problem = re.search(r"^# problem: (\S+)", code, re.M).group(1)
    if "kernelbench/" + problem not in tasks:
        print(f"{path}: no task kernelbench/{problem} in tasks.jsonl; left out", file=sys.stderr)
        continue
    r = dict(tasks["kernelbench/" + problem])
    r["code"] = code
    r["cand"] = os.path.basename(path)[:-3]
    r["expect"] = re.search(r"^# expect: (\S+)", code, re.M).group(1)
    print(json.dumps(r))
PY
		evaluate cands "$b" "$o/cands-in.jsonl"
		"$py" - "$o/cands-in.jsonl" > "$o/torch-in.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if json.loads(line)["expect"] == "cheat":
        sys.stdout.write(line)
PY
		evaluate cands-static-off "$b" "$o/torch-in.jsonl" --static off ;;
	level1 | level2 | level3)
		need_tasks
		records "$o/$name-in.jsonl" "$name" <<'PY' || exit 3
import json, sys
level = int(sys.argv[2][-1])
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("task", {}).get("level") == level and "error" not in r:
        # A stub candidate: the reference is calibrated, the stub fails.
        r["code"] = "import torch\n"
        print(json.dumps(r))
PY
		( while :; do
			find "$o/cache/profile" -name profile.pt -mmin +1 -delete 2>/dev/null
			sleep 10
		done ) &
		pruner=$!
		evaluate "$name" "$b" "$o/$name-in.jsonl" --static off
		kill "$pruner"
		find "$o/cache/profile" -name profile.pt -delete 2>/dev/null ;;
	summary)
		"$py" - "$o" "$top/bin/geak-select" <<'PY' | tee "$o/summary.txt"
import collections, json, os, re, subprocess, sys
o = sys.argv[1]

def rows(name):
    path = os.path.join(o, name + ".jsonl")
    if not os.path.exists(path):
        return None
    with open(path) as fp:
        return [json.loads(l) for l in fp if l.strip()]

if os.path.exists(os.path.join(o, "import.txt")):
    print(open(os.path.join(o, "import.txt")).read().rstrip())
for level in (1, 2, 3):
    want, got = rows(f"level{level}-in"), rows(f"level{level}")
    if want is None or got is None:
        print(f"level {level}: not run")
        continue
    failed = [r for r in got if r.get("error")]
    print(f"level {level}: {len(want)} references, {len(got)} reached, "
          f"{len(got) - len(failed)} calibrated, {len(failed)} did not")
    why = collections.Counter()
    for r in failed:
        msg = (r["error"].get("message") or "").splitlines() or [""]
        why[re.sub(r"0x[0-9a-f]+|\d+(\.\d+)?", "N", msg[-1])[:160]] += 1
        print(f"  {r['id']}: {r['error'].get('kind')}: {msg[-1][:200]}")
    for text, n in why.most_common():
        print(f"  {n:3d} x {text}")
cands = rows("cands")
if cands is not None:
    print("hand-written candidates (expect: got, speedup):")
    for r in cands:
        ev = r.get("eval") or {}
        got = "pass" if ev.get("exec") and not ev.get("reason") else ev.get("reason") or (r.get("error") or {}).get("kind")
        mark = "ok" if got == r.get("expect") else "NOT AS EXPECTED"
        print(f"  {mark}: {r.get('cand')}: expect {r.get('expect')}: {got}, speedup {ev.get('speedup')}, "
              f"{(ev.get('message') or (r.get('error') or {}).get('message') or '')[:160]}")
    for r in rows("cands-static-off") or []:
        ev = r.get("eval") or {}
        print(f"  {r.get('cand')} with --static off: {ev.get('exec')} {ev.get('reason')}: {(ev.get('message') or '')[:160]}")
    sel = subprocess.run([sys.argv[2], "-S", os.path.join(o, "cands.jsonl")],
                         capture_output=True, text=True)
    if sel.returncode == 0:
        s = json.loads(sel.stdout)
        print(f"  geak-select over their {s['tasks']} tasks: " + ", ".join(
            f"fast_{f['p']:g} {f['tasks']}" for f in s.get("fast_p", [])))
PY
		;;
	*) echo "$0: unknown step '$name'" >&2; exit 2 ;;
	esac
done
