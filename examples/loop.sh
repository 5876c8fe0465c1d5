#!/bin/sh
# loop.sh: the sequential agent loop on a task file, resumable.
#
#   iteration 0:  tasks -> geak-retrieve | geak-gen            -> iter-0.jsonl
#   iteration i:  iter-i.jsonl -> geak-eval                     -> evaluated-i.jsonl
#                 evaluated-i.jsonl -> geak-reflect | geak-opt | geak-retrieve
#                 | geak-gen                                     -> iter-(i+1).jsonl
#   at the end:   geak-select over every evaluated-i.jsonl -> best.jsonl,
#                 summary.json, report.html
#
# Each file is written under a temporary name and renamed when its step is
# complete; a file that exists is never made again.  Stop the loop at any
# point (kill PID, or ^C) and run the same command: it carries on from
# the last complete step, and a step that was stopped asks the model only
# what it has no answer to yet.  The output folder is locked while the
# loop runs: a second loop on it fails at once.  Before a step that asks
# the model, the provider is checked (geak-gen --check); a step whose
# requests failed for reasons that are not the records' (a refused key,
# the network, the budget) is not kept, and the loop stops.
#
# Exit status: 0 done; 2 bad usage; 3 a step failed; 4 the model could
# not be used (see the message); 128+N stopped by signal N.  Tool flags:
# GEAK_LLM_FLAGS, GEAK_GEN_FLAGS, GEAK_EVAL_FLAGS, ... as described in
# geak-iter.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here/../bin:$PATH
export PATH
prog=loop.sh

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
case $iters in ''|*[!0-9]*|0) echo "$prog: -n: want a whole number above 0" >&2; exit 2 ;; esac
if [ -n "$gpu" ]; then
	CUDA_VISIBLE_DEVICES=$gpu HIP_VISIBLE_DEVICES=$gpu
	export CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES
fi
{ [ -t 2 ] || [ -n "${GEAK_VERBOSE:-}" ]; } && verbose=1
mkdir -p "$out" || exit 3

# One run per folder: the lock lives as long as this shell and every
# process it starts (they inherit it), and names the pid that holds it.
command -v flock >/dev/null 2>&1 || { echo "$prog: flock(1) is needed (util-linux)" >&2; exit 3; }
exec 9>>"$out/.geak.lock" || exit 3
if ! flock -n 9; then
	echo "$prog: $out is in use by another run (pid $(head -n 1 "$out/.geak.lock" 2>/dev/null)); stop it or wait for it" >&2
	exit 3
fi
: > "$out/.geak.lock"
echo $$ >&9
GEAK_LOCKED=$(cd "$out" && pwd)
export GEAK_LOCKED

# Each step runs in the background so that a signal reaches this shell
# at once; the step is then told to stop and waited for.
child=
caught=
on_signal() {
	caught=$1
	[ -n "$child" ] && kill -TERM "$child" 2>/dev/null
}
trap 'on_signal 15' TERM
trap 'on_signal 2' INT
trap 'rm -f "$out/.geak.check" "$out/best.jsonl.tmp"' EXIT

# run COMMAND...: run it as the current step; its exit status.
run() {
	"$@" &
	child=$!
	while :; do
		wait "$child"
		s=$?
		if [ -n "$caught" ] && kill -0 "$child" 2>/dev/null; then
			continue
		fi
		break
	done
	child=
	if [ -n "$caught" ]; then
		echo "$prog: stopped by signal $caught; run the same command again to carry on" >&2
		exit $((128 + caught))
	fi
	return "$s"
}

# step FILE COMMAND...: make FILE unless a complete one exists.
step() {
	file=$1
	shift
	[ -f "$file" ] && return 0
	run "$@"
	s=$?
	[ "$s" -eq 0 ] && return 0
	if [ "$s" -eq 4 ]; then
		echo "$prog: the model could not be used for $file (see above); fix that and run the same command again" >&2
		exit 4
	fi
	echo "$prog: $file could not be made (see above)" >&2
	exit 3
}

# The provider is checked once, before the first step that asks it.
checked=
preflight() {
	[ -n "$checked" ] && return 0
	checked=1
	# shellcheck disable=SC2086  # a word list
	run geak-gen --check ${GEAK_LLM_FLAGS:-} > "$out/.geak.check" 2>&1
	s=$?
	if [ "$s" -ne 0 ]; then
		sed "s/^/$prog: /" "$out/.geak.check" >&2
		echo "$prog: the model provider does not work (geak-gen --check); nothing was run" >&2
		exit 4
	fi
	[ -n "$verbose" ] && sed "s/^/$prog: /" "$out/.geak.check" >&2
	rm -f "$out/.geak.check"
}
model_step() {
	[ -f "$1" ] && return 0
	preflight
	step "$@"
}

model_step "$out/iter-0.jsonl" geak-iter.sh first "$tasks" "$out/iter-0.jsonl" $run
evaluated=
i=0
while [ "$i" -lt "$iters" ]; do
	step "$out/evaluated-$i.jsonl" geak-iter.sh eval "$out/iter-$i.jsonl" "$out/evaluated-$i.jsonl"
	evaluated="$evaluated $out/evaluated-$i.jsonl"
	[ -n "$verbose" ] && geak-iter.sh progress "$i" "$out/evaluated-$i.jsonl"
	next=$((i + 1))
	if [ "$next" -lt "$iters" ]; then
		model_step "$out/iter-$next.jsonl" geak-iter.sh next "$out/evaluated-$i.jsonl" \
			"$out/iter-$next.jsonl" "$next"
	fi
	i=$next
done
# Cheap, and its inputs may have grown: always made afresh.
# shellcheck disable=SC2086  # a list of file names without blanks
run geak-select -k "$passk" -s "$out/summary.json" -r "$out/report.html" $evaluated \
	> "$out/best.jsonl.tmp"
[ $? -le 1 ] && mv -f "$out/best.jsonl.tmp" "$out/best.jsonl" || exit 3
[ -n "$verbose" ] && echo "$prog: best kernels in $out/best.jsonl, report in $out/report.html" >&2
exit 0
