#!/bin/sh
# bench.sh: what `make bench` runs, on the benchmark archives in DATA
# (geak-eval-data.tar.gz, tritonbench-g-data.tar.gz):
#
#  1. the harness check (harness-check.sh): every reference evaluated as a
#     candidate; without a GPU only the tasks that Triton's CPU interpreter
#     is known to run (--cpu);
#  2. when an LLM provider is configured (GEAK_LLM_FLAGS or GEAK_MODEL
#     set), the agent over BENCH_SUITE (default tbg) with GEAK's settings
#     (agent-bench.sh; BENCH_AGENT_FLAGS adds its options, e.g. "-R 1 -i 2").
#
# Results go to BENCH_OUT (default out/bench).  BENCH_CPU=1 or 0 forces
# the choice that is otherwise made by asking geak-eval for the GPUs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
PATH=$here/../../bin:$PATH
export PATH
prog=bench.sh
data=${1:-$here/../../../shared/bench}
out=${BENCH_OUT:-out/bench}
geak=$data/geak-eval-data.tar.gz
thunlp=$data/tritonbench-g-data.tar.gz
[ -r "$geak" ] || { echo "$prog: $geak: not readable" >&2; exit 3; }
command -v jq >/dev/null || { echo "$prog: needs jq" >&2; exit 3; }
srcs=$geak
[ -r "$thunlp" ] && srcs="$geak $thunlp"

# The GPUs as geak-eval sees them, through the vendor runtimes.
gpus=$(geak-eval --list-gpus 2>/dev/null) || gpus='[]'
vendor=$(printf '%s' "$gpus" | jq -r '.[0].vendor // "none"')
cpu=${BENCH_CPU:-}
if [ -z "$cpu" ]; then
	cpu=1
	[ "$vendor" = none ] || cpu=0
fi
# On an NVIDIA GPU the 12 kernels that call AMD's libdevice cannot run:
# use their CUDA originals instead.
orig=
[ "$cpu" = 0 ] && [ "$vendor" = nvidia ] && [ -r "$thunlp" ] && orig="--original-hip $thunlp"

status=0
copt=
[ "$cpu" = 1 ] && copt=--cpu
# shellcheck disable=SC2086  # option lists are meant to split
sh "$here/harness-check.sh" $copt ${orig:-} -o "$out/check" $srcs || status=$?
if [ -z "${GEAK_LLM_FLAGS:-}" ] && [ -z "${GEAK_MODEL:-}" ]; then
	echo "$prog: no LLM provider configured (GEAK_LLM_FLAGS, GEAK_MODEL): agent benchmark skipped" >&2
	exit $status
fi
# shellcheck disable=SC2086
sh "$here/agent-bench.sh" --suite "${BENCH_SUITE:-tbg}" ${orig:-} ${BENCH_AGENT_FLAGS:-} \
	-o "$out/agent" $srcs || status=3
exit $status
