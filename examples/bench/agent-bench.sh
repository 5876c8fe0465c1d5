#!/bin/sh
# agent-bench.sh: the agent over a benchmark suite with GEAK's settings,
# scored the way GEAK's tables are: call accuracy, execution accuracy,
# mean speedup over the kernels that passed, plus pass@k over the runs.
#
#   geak-import SOURCE... > DIR/tasks.jsonl
#   geak-parallel (RUNS runs of geak-loop, ITERS iterations, SAMPLES per round)
#   geak-select --tasks N over every evaluated candidate -> DIR/summary.json
#
# Defaults follow GEAK's configuration: 10 iterations, 8 samples per
# round, 5 independent runs at temperature 1.  LLM flags come from
# GEAK_LLM_FLAGS (e.g. "--provider anthropic --model M"); the other tool
# flags as geak-loop takes them.  Resumable: run the same command again.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here/..:$here/../../bin:$PATH
export PATH
prog=agent-bench.sh

suite=tbg iters=10 samples=8 runs=5 jobs=1 gpus= out=bench-agent ids= diff= orig=
usage() {
	[ "$1" -eq 0 ] && fd=1 || fd=2
	cat >&$fd <<USAGE
usage: $prog [--suite tbg|rocm|all] [--difficulty LIST] [--ids IDS|FILE]
       [--original-hip SOURCE] [-i ITERS] [-n SAMPLES] [-R RUNS] [-j JOBS]
       [-g GPUS] [-o DIR] SOURCE...
      --suite SUITE         suite (default tbg)
      --difficulty LIST     only these difficulties (geak-import --difficulty)
      --ids IDS             only these tasks (geak-import --ids)
      --original-hip SOURCE thunlp/TritonBench archive: CUDA originals of the
                            kernels that use AMD's libdevice
  -i, --iters N             iterations per run (default 10)
  -n, --samples N           first candidates per task, each a lineage (default 8)
  -R, --runs N              independent runs, for pass@k (default 5)
  -j, --jobs N              runs at a time (default 1; one per GPU with -g)
  -g, --gpus LIST           GPUs to spread the runs over
  -o, --out DIR             output folder (default bench-agent)
  -h, --help                this help
USAGE
	exit "$1"
}
need() { [ "$2" -ge 2 ] || { echo "$prog: $1 needs a value" >&2; usage 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--*=*) a=${1%%=*} v=${1#*=}; shift; set -- "$a" "$v" "$@"; continue ;;
	-h|--help) usage 0 ;;
	--suite) need "$1" $#; suite=$2; shift 2 ;;
	--difficulty) need "$1" $#; diff=$2; shift 2 ;;
	--ids) need "$1" $#; ids=$2; shift 2 ;;
	--original-hip) need "$1" $#; orig=$2; shift 2 ;;
	-i|--iters) need "$1" $#; iters=$2; shift 2 ;;
	-n|--samples) need "$1" $#; samples=$2; shift 2 ;;
	-R|--runs) need "$1" $#; runs=$2; shift 2 ;;
	-j|--jobs) need "$1" $#; jobs=$2; shift 2 ;;
	-g|--gpus) need "$1" $#; gpus=$2; shift 2 ;;
	-o|--out) need "$1" $#; out=$2; shift 2 ;;
	--) shift; break ;;
	-?*) echo "$prog: unknown option $1" >&2; usage 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage 2
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

geak-parallel.sh -i "$iters" -n "$samples" -R "$runs" -j "$jobs" ${gpus:+-g "$gpus"} -o "$out/agent" \
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
