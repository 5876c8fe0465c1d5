#!/bin/sh
# harness-check.sh: evaluate every benchmark reference as if it were a
# candidate.  A reference must pass its own test, so every failure here
# is a fault of the harness or the machine, not of a model:
#
#   geak-import --as-candidate SOURCE... | geak-eval | geak-select -S
#
# Writes DIR/tasks.jsonl, DIR/evaluated.jsonl and DIR/summary.json, prints
# one line per task and the summary, and exits 0 when every reference
# passed, 1 when some did not, 2 on a usage error, 3 when a stage failed.
# geak-eval's flags come from GEAK_EVAL_FLAGS (split at white space).
set -u
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here/../../bin:$PATH
export PATH
prog=harness-check.sh

suite=all ids= out=bench-check cpu= orig=
usage() {
	[ "$1" -eq 0 ] && fd=1 || fd=2
	cat >&$fd <<USAGE
usage: $prog [--cpu] [--suite tbg|rocm|all] [--ids IDS|FILE] [--original-hip SOURCE]
       [-o DIR] SOURCE...
      --cpu                 evaluate on Triton's interpreter (geak-eval --cpu), and
                            only the tasks measured to run there (task.cpu_ok;
                            without that list, the smoke set smoke-tbg.txt, or
                            smoke-rocm.txt for --suite rocm)
      --suite SUITE         suite to check (default all)
      --ids IDS             only these tasks (geak-import --ids)
      --original-hip SOURCE thunlp/TritonBench archive: check the CUDA originals
                            of the kernels that use AMD's libdevice
  -o, --out DIR             output folder (default bench-check)
  -h, --help                this help
SOURCE: the benchmark archives or checkouts, as geak-import(1) takes them.
USAGE
	exit "$1"
}
need() { [ "$2" -ge 2 ] || { echo "$prog: $1 needs a value" >&2; usage 2; }; }
while [ $# -gt 0 ]; do
	case $1 in
	--*=*) a=${1%%=*} v=${1#*=}; shift; set -- "$a" "$v" "$@"; continue ;;
	-h|--help) usage 0 ;;
	--cpu) cpu=1; shift ;;
	--suite) need "$1" $#; suite=$2; shift 2 ;;
	--ids) need "$1" $#; ids=$2; shift 2 ;;
	--original-hip) need "$1" $#; orig=$2; shift 2 ;;
	-o|--out) need "$1" $#; out=$2; shift 2 ;;
	--) shift; break ;;
	-?*) echo "$prog: unknown option $1" >&2; usage 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage 2
command -v jq >/dev/null || { echo "$prog: needs jq" >&2; exit 3; }
mkdir -p "$out" || exit 3

# Keep the import's status: a bad task (1) is reported, not fatal.
import_tasks() {
	geak-import --as-candidate --suite "$suite" ${ids:+--ids "$ids"} \
		${orig:+--original-hip "$orig"} "$@"
}
import_tasks "$@" > "$out/tasks.all.jsonl"
[ $? -le 1 ] || exit 3
if [ -n "$cpu" ]; then
	if [ -z "$ids" ] && jq -e 'select(.task.cpu_ok != null)' "$out/tasks.all.jsonl" >/dev/null; then
		jq -c 'select(.task.cpu_ok or .error)' "$out/tasks.all.jsonl" > "$out/tasks.jsonl"
	elif [ -z "$ids" ]; then
		ids=$here/smoke-tbg.txt
		[ "$suite" = rocm ] && ids=$here/smoke-rocm.txt
		import_tasks "$@" > "$out/tasks.jsonl"
		[ $? -le 1 ] || exit 3
	else
		cp "$out/tasks.all.jsonl" "$out/tasks.jsonl" || exit 3
	fi
else
	cp "$out/tasks.all.jsonl" "$out/tasks.jsonl" || exit 3
fi
rm -f "$out/tasks.all.jsonl"
ntasks=$(grep -c . "$out/tasks.jsonl")
echo "$prog: $ntasks references to evaluate${cpu:+ on the CPU}" >&2

# shellcheck disable=SC2086  # flags are meant to split
geak-eval ${cpu:+--cpu} ${GEAK_EVAL_FLAGS:-} "$out/tasks.jsonl" > "$out/evaluated.jsonl.tmp"
[ $? -le 1 ] || { echo "$prog: geak-eval failed" >&2; exit 3; }
mv -f "$out/evaluated.jsonl.tmp" "$out/evaluated.jsonl" || exit 3
geak-select --tasks "$ntasks" -S "$out/evaluated.jsonl" > "$out/summary.json"
[ $? -le 1 ] || { echo "$prog: geak-select failed" >&2; exit 3; }

# One line per task: id, call, exec, speedup, evaluator flags, and why it
# failed.  A flag (e.g. unstable_reference: the reference itself gives
# different outputs for one seed) does not fail the check, but
# geak-select does not count a flagged candidate as correct.
jq -r '[.id,
	(if .error then "error" else (.eval.call | tostring) end),
	(.eval.exec // false | tostring),
	(.eval.speedup // "-" | tostring),
	((.eval.flags // []) | if length > 0 then join(",") else "-" end),
	(.error.message // .eval.message // .eval.reason // "" | tostring
		| split("\n")[0] | .[0:160])] | @tsv' "$out/evaluated.jsonl"
jq -r '"references: \(.total_tasks // .tasks)  call accuracy: \(.call_accuracy)  exec accuracy: \(.exec_accuracy)  mean speedup: \(.speedup_mean // "-")"' \
	"$out/summary.json"
failed=$(jq -r 'select(.eval.exec != true) | .id' "$out/evaluated.jsonl")
if [ -n "$failed" ]; then
	echo "$prog: references that did not pass:" $failed >&2
	exit 1
fi
exit 0
