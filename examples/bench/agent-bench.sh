#!/bin/sh
# agent-bench.sh: the agent over a benchmark suite with GEAK's settings,
# scored the way GEAK's tables are: call accuracy, execution accuracy,
# mean speedup over the kernels that passed, plus pass@k over the runs.
#
#   geak-import SOURCE... > DIR/tasks.jsonl
#   parallel.sh (RUNS runs of loop.sh, ITERS iterations, geak-gen -n SAMPLES)
#   geak-select --tasks N over every evaluated candidate -> DIR/summary.json
#
# Defaults follow GEAK's configuration: 10 iterations, 8 samples per
# round, 5 independent runs at temperature 1.  LLM flags come from
# GEAK_LLM_FLAGS (e.g. "--provider anthropic --model M"); the other tool
# flags as loop.sh takes them.  Resumable: run the same command again.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here/..:$here/../../bin:$PATH
export PATH
prog=agent-bench.sh

suite=tbg iters=10 samples=8 runs=5 jobs=1 gpus= out=bench-agent ids= diff= orig=
usage() {
	cat >&2 <<USAGE
usage: $prog [-s tbg|rocm|all] [-d LIST] [-i IDS|FILE] [-H SOURCE] [-n ITERS]
       [-m SAMPLES] [-R RUNS] [-P JOBS] [-G GPU,...] [-o DIR] SOURCE...
  -s SUITE    suite (default tbg)
  -d LIST     only these difficulties (geak-import --difficulty)
  -i IDS      only these tasks (geak-import --ids)
  -H SOURCE   thunlp/TritonBench archive: CUDA originals of the kernels that
              use AMD's libdevice (geak-import --original-hip)
  -n ITERS    iterations per run (default 10)
  -m SAMPLES  candidates per task and round (default 8)
  -R RUNS     independent runs, for pass@k (default 5)
  -P JOBS     runs at a time (default 1; one per GPU with -G)
  -G LIST     GPUs to spread the runs over
  -o DIR      output folder (default bench-agent)
USAGE
	exit 2
}
while getopts s:d:i:H:n:m:R:P:G:o:h opt; do
	case $opt in
	s) suite=$OPTARG ;;
	d) diff=$OPTARG ;;
	i) ids=$OPTARG ;;
	H) orig=$OPTARG ;;
	n) iters=$OPTARG ;;
	m) samples=$OPTARG ;;
	R) runs=$OPTARG ;;
	P) jobs=$OPTARG ;;
	G) gpus=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
command -v jq >/dev/null || { echo "$prog: needs jq" >&2; exit 3; }
mkdir -p "$out" || exit 3

# No provider, no benchmark: say so before any work is done.
# shellcheck disable=SC2086  # flags are meant to split
if ! geak-gen --check ${GEAK_LLM_FLAGS:-} >&2; then
	echo "$prog: no working LLM provider (set GEAK_LLM_FLAGS or GEAK_MODEL)" >&2
	exit 3
fi

if [ ! -f "$out/tasks.jsonl" ]; then
	geak-import --suite "$suite" ${diff:+--difficulty "$diff"} ${ids:+--ids "$ids"} \
		${orig:+--original-hip "$orig"} "$@" > "$out/tasks.jsonl.tmp"
	[ $? -le 1 ] || exit 3
	# A task that failed to import cannot be attempted; it still counts.
	mv -f "$out/tasks.jsonl.tmp" "$out/tasks.jsonl" || exit 3
fi
ntasks=$(grep -c . "$out/tasks.jsonl")
echo "$prog: $ntasks tasks, $runs runs x $iters iterations x $samples samples" >&2

GEAK_GEN_FLAGS="-n $samples ${GEAK_GEN_FLAGS:-}"
export GEAK_GEN_FLAGS
parallel.sh -n "$iters" -R "$runs" -P "$jobs" ${gpus:+-G "$gpus"} -o "$out/agent" \
	"$out/tasks.jsonl" || exit 3

# Accuracies over every task imported, not just those that got an answer.
passk=$(seq -s, 1 "$runs")
geak-select --tasks "$ntasks" -k "$passk" -r "$out/report.html" -S \
	"$out"/agent/run-*/evaluated-*.jsonl > "$out/summary.json"
[ $? -le 1 ] || exit 3
jq -r '"tasks             \(.total_tasks // .tasks)",
	"call accuracy     \(.call_accuracy)",
	"exec accuracy     \(.exec_accuracy)",
	"speedup (mean)    \(.speedup_mean // "-") over \(.speedup_n) kernels",
	"speedup (geomean) \(.speedup_geomean // "-")",
	(.pass_at_k // [] | .[] | "pass@\(.k)            call \(.call)  exec \(.exec)")' \
	"$out/summary.json"
echo "$prog: report in $out/report.html" >&2
