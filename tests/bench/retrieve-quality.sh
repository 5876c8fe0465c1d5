#!/bin/sh
# Retrieval quality on TritonBench-revised: for each of its 184 tasks, the
# top 3 entries of the shared kernel corpus by instruction, with the
# leakage guard on and off, from an index of the descriptions (the
# default) and from one that adds the code to them (-w).  Prints how many tasks get an example of the
# same operation family, and what the guard removed compared with the
# corpus's list of known overlaps with the benchmark.
#
# Operation families are keyword rules over a name: the benchmark's file
# name, or the corpus entry's file path and function name, lowercased and
# cut at '_', '/', '.', ':' and '-'.  The first rule that matches wins:
#   attention      attn, attention, flash, paged
#   cross_entropy  cross, entropy, xentropy, nll
#   softmax        softmax
#   norm           norm, layernorm, rmsnorm, groupnorm, batchnorm
#   rope           rope, rotary
#   quant          quant, dequant, fp8, int8, int4, w8a8, gptq, awq
#   matmul         matmul, gemm, mm, bmm, linear, dot, addmm
#   dropout        dropout
#   embedding      embedding, embed
#   activation     gelu, silu, swiglu, geglu, relu, sigmoid, tanh, swish, mish
#   reduction      sum, mean, max, min, argmax, argmin, cumsum, prod, var, reduce
#   (none)         anything else: such tasks are left out of the counts
#
#   tests/bench/retrieve-quality.sh
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$top/bin:$PATH"
shared=$top/../shared
corpus=$shared/corpus/triton-kernels.jsonl
overlap=$shared/corpus/overlap-tritonbench-g.tsv
data=$shared/bench/geak-eval-data.tar.gz
for f in "$corpus" "$overlap" "$data"; do
	[ -f "$f" ] || { echo "no $f: nothing to measure" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/geak-quality.XXXXXX")
trap 'rm -rf "$work"' EXIT

tar -xzf "$data" -O GEAK-eval/geak_eval/data/TritonBench/data/TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json |
	jq -c '.[] | {id: ("tbg/" + (.file | sub("\\.py$"; ""))), task: {instruction, reference: .output, file}}' \
	> "$work/tasks.jsonl"

family='
def words: ascii_downcase | [splits("[_/.:\\-]+")] | map(select(length > 0));
def has($w; $set): any($w[]; . as $x | $set | index($x) != null);
def family:
  words as $w
  | if has($w; ["attn","attention","flash","paged"]) then "attention"
    elif has($w; ["cross","entropy","xentropy","nll"]) then "cross_entropy"
    elif any($w[]; test("softmax")) then "softmax"
    elif any($w[]; test("norm$")) then "norm"
    elif has($w; ["rope","rotary"]) then "rope"
    elif any($w[]; test("quant|^fp8$|^int8$|^int4$|^w8a8$|^gptq$|^awq$")) then "quant"
    elif has($w; ["matmul","gemm","mm","bmm","linear","dot","addmm"]) then "matmul"
    elif has($w; ["dropout"]) then "dropout"
    elif has($w; ["embedding","embed"]) then "embedding"
    elif has($w; ["gelu","silu","swiglu","geglu","relu","sigmoid","tanh","swish","mish"]) then "activation"
    elif has($w; ["sum","mean","max","min","argmax","argmin","cumsum","prod","var","reduce"]) then "reduction"
    else null end;
'
score() {  # records -> "tasks top1 top3"
	jq -r "$family"'
	  (.task.file | family) as $f
	  | select($f != null)
	  | [ (.oneshots // [])[] | .id | family ] as $got
	  | "\(if ($got[0] // "") == $f then 1 else 0 end) \(if ($got | index($f)) != null then 1 else 0 end)"' "$1" |
	awk '{ n++; a += $1; b += $2 } END { printf "%d %d %d", n, a, b }'
}
pct() { awk -v a="$1" -v n="$2" 'BEGIN { printf "%.1f", 100 * a / n }'; }
show() {  # label records
	set -- "$1" $(score "$2")
	echo "$1: same family top-1 $3 of $2 ($(pct "$3" "$2")%), in top-3 $4 ($(pct "$4" "$2")%)"
}

# The default index (descriptions; code for entries without one), and
# one built with -w (descriptions and code), each with the guard on and off.
geak-retrieve --index "$work/corpus.idx" -c "$corpus"
geak-retrieve --index "$work/corpus-w.idx" -w -c "$corpus"
for v in "" -w; do
	geak-retrieve -c "$work/corpus$v.idx" -m instruction --top 3 -x "$work/tasks.jsonl" > "$work/on$v.jsonl"
	geak-retrieve -c "$work/corpus$v.idx" -m instruction --top 3 -G "$work/tasks.jsonl" > "$work/off$v.jsonl"
done
echo "tasks with a family: $(score "$work/on.jsonl" | cut -d ' ' -f 1) of 184"
show "default, guard on " "$work/on.jsonl"
show "default, guard off" "$work/off.jsonl"
show "-w,      guard on " "$work/on-w.jsonl"
show "-w,      guard off" "$work/off-w.jsonl"

jq -r '.task.file as $f | .oneshot.excluded_ids[]? | [., $f] | @tsv' "$work/on.jsonl" | sort -u > "$work/caught.tsv"
tail -n +2 "$overlap" | cut -f 1,2 | sort -u > "$work/pairs.tsv"
removed=$(jq -s 'map(.oneshot.excluded // 0) | add' "$work/on.jsonl")
tasks_hit=$(jq -s 'map(select((.oneshot.excluded // 0) > 0)) | length' "$work/on.jsonl")
echo "guard removed $removed entries in $tasks_hit tasks ($(wc -l < "$work/caught.tsv" | tr -d ' ') distinct entry-task pairs)"
echo "known overlap pairs caught: $(comm -12 "$work/pairs.tsv" "$work/caught.tsv" | wc -l | tr -d ' ') of $(wc -l < "$work/pairs.tsv" | tr -d ' ');" \
	"pairs removed beyond the list: $(comm -13 "$work/pairs.tsv" "$work/caught.tsv" | wc -l | tr -d ' ')"
leak_on=$(jq -r '.task.file as $f | .oneshots[]? | [.id, $f] | @tsv' "$work/on.jsonl" | sort -u | comm -12 "$work/pairs.tsv" - | wc -l | tr -d ' ')
leak_off=$(jq -r '.task.file as $f | .oneshots[]? | [.id, $f] | @tsv' "$work/off.jsonl" | sort -u | comm -12 "$work/pairs.tsv" - | wc -l | tr -d ' ')
echo "known overlaps among the top 3: $leak_off with the guard off, $leak_on with it on"
