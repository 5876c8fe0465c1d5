#!/bin/sh
# Evaluate task records with geak-eval on this machine's GPUs (references
# imported as candidates: geak-import --as-candidate) and print a summary
# table: pass counts, seconds per candidate, the spread of the
# reference-against-itself speedups.  Records come from files made where
# geak-import runs (the GPU machine may lack libarchive).
#
#   tests/gpu/eval-refs.sh [-j N] [-g GPUS] [-b SECONDS] [-c CACHE] [-o DIR] FILE...
#
# -j N      concurrent evaluations (default: 4 per GPU)
# -g GPUS   geak-eval --gpus (default auto)
# -b S      time budget: geak-eval is stopped after S seconds and the
#           records finished by then are summarised (default 3000)
# -c DIR    geak-eval --cache (default: a fresh directory, a cold cache)
# -o DIR    where evaluated.jsonl and summary.txt go (default eval-refs.out)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
jobs= gpus=auto budget=3000 cache= out=eval-refs.out
while getopts j:g:b:c:o: o; do
	case $o in
	j) jobs=$OPTARG ;; g) gpus=$OPTARG ;; b) budget=$OPTARG ;;
	c) cache=$OPTARG ;; o) out=$OPTARG ;;
	*) echo "usage: $0 [-j N] [-g GPUS] [-b S] [-c CACHE] [-o DIR] FILE..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "$0: no record files" >&2; exit 2; }
: "${GEAK_SHAREDIR:=$top/share}" "${GEAK_PYTHON:=python3}"
export GEAK_SHAREDIR GEAK_PYTHON
mkdir -p "$out" || exit 3
[ -n "$cache" ] || cache=$(mktemp -d "${TMPDIR:-/tmp}/geak-eval-cache.XXXXXX")
if [ -z "$jobs" ]; then
	n=$("$top/bin/geak-eval" --list-gpus | grep -c '"index"')
	jobs=$(( (n > 0 ? n : 1) * 4 ))
fi
start=$(date +%s)
timeout -s TERM "$budget" "$top/bin/geak-eval" -j "$jobs" --gpus "$gpus" --cache "$cache" "$@" \
	> "$out/evaluated.jsonl" 2> "$out/stderr.txt"
status=$?
end=$(date +%s)
{
	python3 "$top/tests/gpu/eval-summary.py" "$out/evaluated.jsonl"
	echo "geak-eval -j $jobs --gpus $gpus: exit $status, $((end - start)) s wall," \
		"$(grep -c . "$out/evaluated.jsonl") of $(cat "$@" | grep -c .) records"
} | tee "$out/summary.txt"
[ "$status" -le 1 ]
