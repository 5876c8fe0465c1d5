#!/bin/sh
# parallel.sh: parallel scaling.  RUNS independent runs of the loop (each
# its own folder, run index and, with -G, GPU), JOBS at a time through
# xargs -P, then geak-select across all of them for pass@k and the best
# kernel per task.  Resumable like loop.sh: finished steps are not redone.
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
		"$GEAK_PAR_TASKS" 2>"$GEAK_PAR_OUT/run-$1.log"' sh
status=$?
if [ $status -ne 0 ]; then
	echo "parallel.sh: a run failed; see $out/run-*.log" >&2
	exit 3
fi
geak-select -k "$passk" -s "$out/summary.json" -r "$out/report.html" \
	"$out"/run-*/evaluated-*.jsonl > "$out/best.jsonl.tmp"
[ $? -le 1 ] && mv -f "$out/best.jsonl.tmp" "$out/best.jsonl" || exit 3
echo "parallel.sh: $runs runs; best kernels in $out/best.jsonl, report in $out/report.html" >&2
