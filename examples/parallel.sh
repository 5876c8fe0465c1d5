#!/bin/sh
# parallel.sh: parallel scaling.  RUNS independent runs of the loop (each
# its own folder, run index and, with -G, GPU), JOBS at a time through
# xargs -P, then geak-select across all of them for pass@k and the best
# kernel per task.  Resumable like loop.sh: finished steps are not redone.
# The output folder is locked while it runs, as each run's folder is by
# its loop.sh.  On SIGTERM or SIGINT no further run is started, the runs
# are stopped (each as loop.sh stops) and waited for, and it exits 128
# plus the signal's number.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here/../bin:$PATH
export PATH

iters=3 runs=4 jobs=2 out=out gpus= passk=
usage() {
	cat >&2 <<USAGE
usage: parallel.sh [-n ITERS] [-R RUNS] [-P JOBS] [-o DIR] [-G GPU,GPU...] [-k LIST] TASKS.jsonl
  -n ITERS  iterations per run (default 3)
  -R RUNS   independent runs (default 4)
  -P JOBS   runs at a time (default 2)
  -o DIR    output folder (default out); run r goes to DIR/run-r
  -G LIST   GPUs to spread the runs over, round robin
  -k LIST   pass@k values (default 1,...,RUNS)
USAGE
	exit 2
}
while getopts n:R:P:o:G:k:h opt; do
	case $opt in
	n) iters=$OPTARG ;;
	R) runs=$OPTARG ;;
	P) jobs=$OPTARG ;;
	o) out=$OPTARG ;;
	G) gpus=$OPTARG ;;
	k) passk=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
tasks=$1
[ -n "$passk" ] || passk=$(seq -s, 1 "$runs")
mkdir -p "$out" || exit 3
command -v flock >/dev/null 2>&1 || { echo "parallel.sh: flock(1) is needed (util-linux)" >&2; exit 3; }
exec 9>>"$out/.geak.lock" || exit 3
if ! flock -n 9; then
	echo "parallel.sh: $out is in use by another run (pid $(head -n 1 "$out/.geak.lock" 2>/dev/null)); stop it or wait for it" >&2
	exit 3
fi
: > "$out/.geak.lock"
echo $$ >&9

# The runs' loop.sh processes are children of xargs, which does not pass
# a signal on: each names itself in its folder's lock, and that lock is
# free once every process of the run has ended.
xargs_pid=
caught=
stop_runs() {
	caught=$1
	[ -n "$xargs_pid" ] && kill -TERM "$xargs_pid" 2>/dev/null
	told=
	while :; do
		busy=
		for l in "$out"/run-*/.geak.lock; do
			[ -f "$l" ] || continue
			flock -n "$l" true && continue
			busy=1
			p=$(head -n 1 "$l" 2>/dev/null)
			case " $told " in *" $p "*) continue ;; esac
			[ -n "$p" ] && kill -TERM "$p" 2>/dev/null
			told="$told $p"
		done
		[ -z "$busy" ] && break
		sleep 0.2
	done
	echo "parallel.sh: stopped by signal $caught; run the same command again to carry on" >&2
	exit $((128 + caught))
}
trap 'stop_runs 15' TERM
trap 'stop_runs 2' INT
trap 'rm -f "$out/best.jsonl.tmp"' EXIT

# One line per run: "RUN GPU" (GPU "-" for none).
r=0
ngpu=$(printf '%s' "$gpus" | tr ',' '\n' | grep -c .)
while [ "$r" -lt "$runs" ]; do
	if [ "$ngpu" -gt 0 ]; then
		echo "$r $(printf '%s' "$gpus" | cut -d, -f$((r % ngpu + 1)))"
	else
		echo "$r -"
	fi
	r=$((r + 1))
done | GEAK_PAR_HERE=$here GEAK_PAR_ITERS=$iters GEAK_PAR_OUT=$out GEAK_PAR_TASKS=$tasks xargs -P "$jobs" -L 1 sh -c '
	gpu=
	[ "$2" = - ] || gpu="-g $2"
	exec "$GEAK_PAR_HERE/loop.sh" -v -n "$GEAK_PAR_ITERS" -r "$1" $gpu -o "$GEAK_PAR_OUT/run-$1" \
		"$GEAK_PAR_TASKS" 2>"$GEAK_PAR_OUT/run-$1.log"' sh &
xargs_pid=$!
wait "$xargs_pid"
status=$?
if [ $status -ne 0 ]; then
	echo "parallel.sh: a run failed; see $out/run-*.log" >&2
	exit 3
fi
geak-select -k "$passk" -s "$out/summary.json" -r "$out/report.html" \
	"$out"/run-*/evaluated-*.jsonl > "$out/best.jsonl.tmp"
[ $? -le 1 ] && mv -f "$out/best.jsonl.tmp" "$out/best.jsonl" || exit 3
echo "parallel.sh: $runs runs; best kernels in $out/best.jsonl, report in $out/report.html" >&2
