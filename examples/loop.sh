#!/bin/sh
# loop.sh: the sequential agent loop on a task file, resumable.
#
#   iteration 0:  tasks -> geak-retrieve | geak-gen            -> iter-0.jsonl
#   iteration i:  iter-i.jsonl -> geak-eval                     -> evaluated-i.jsonl
#                 evaluated-i.jsonl -> geak-reflect | geak-opt | geak-gen -> iter-(i+1).jsonl
#   at the end:   geak-select over every evaluated-i.jsonl -> best.jsonl,
#                 summary.json, report.html
#
# Each file is written under a temporary name and renamed when its step is
# complete; a file that exists is never made again.  Kill the loop at any
# point and run the same command: it carries on from the last complete
# step.  Tool flags: GEAK_LLM_FLAGS, GEAK_GEN_FLAGS, GEAK_EVAL_FLAGS, ... as
# described in geak-iter.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here/../bin:$PATH
export PATH

iters=3 out=out run= gpu= passk=1 verbose=
usage() {
	cat >&2 <<USAGE
usage: loop.sh [-v] [-n ITERS] [-o DIR] [-r RUN] [-g GPU] [-k LIST] TASKS.jsonl
  -n ITERS  iterations (default 3)
  -o DIR    output folder (default out)
  -r RUN    run index written into the records (parallel scaling)
  -g GPU    make only this GPU visible to the evaluator
  -k LIST   pass@k values for the summary (default 1)
  -v        progress on stderr even when it is not a terminal
USAGE
	exit 2
}
while getopts n:o:r:g:k:vh opt; do
	case $opt in
	n) iters=$OPTARG ;;
	o) out=$OPTARG ;;
	r) run=$OPTARG ;;
	g) gpu=$OPTARG ;;
	k) passk=$OPTARG ;;
	v) verbose=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
tasks=$1
case $iters in ''|*[!0-9]*|0) echo "loop.sh: -n: want a whole number above 0" >&2; exit 2 ;; esac
if [ -n "$gpu" ]; then
	CUDA_VISIBLE_DEVICES=$gpu HIP_VISIBLE_DEVICES=$gpu
	export CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES
fi
{ [ -t 2 ] || [ -n "${GEAK_VERBOSE:-}" ]; } && verbose=1
mkdir -p "$out" || exit 3

# step FILE COMMAND...: make FILE unless a complete one exists.
step() {
	file=$1
	shift
	[ -f "$file" ] && return 0
	"$@" || exit 3
}

step "$out/iter-0.jsonl" geak-iter.sh first "$tasks" "$out/iter-0.jsonl" $run
evaluated=
i=0
while [ "$i" -lt "$iters" ]; do
	step "$out/evaluated-$i.jsonl" geak-iter.sh eval "$out/iter-$i.jsonl" "$out/evaluated-$i.jsonl"
	evaluated="$evaluated $out/evaluated-$i.jsonl"
	[ -n "$verbose" ] && geak-iter.sh progress "$i" "$out/evaluated-$i.jsonl"
	next=$((i + 1))
	if [ "$next" -lt "$iters" ]; then
		step "$out/iter-$next.jsonl" geak-iter.sh next "$out/evaluated-$i.jsonl" \
			"$out/iter-$next.jsonl" "$next"
	fi
	i=$next
done
# Cheap, and its inputs may have grown: always made afresh.
# shellcheck disable=SC2086  # a list of file names without blanks
geak-select -k "$passk" -s "$out/summary.json" -r "$out/report.html" $evaluated \
	> "$out/best.jsonl.tmp"
[ $? -le 1 ] && mv -f "$out/best.jsonl.tmp" "$out/best.jsonl" || exit 3
[ -n "$verbose" ] && echo "loop.sh: best kernels in $out/best.jsonl, report in $out/report.html" >&2
exit 0
