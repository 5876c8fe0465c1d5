#!/bin/sh
# geak-retrieve on the shared test data: the kernel archive read in place
# gives exactly the entries of the corpus's JSON Lines form, and the
# leakage guard catches every known overlap of that corpus with
# TritonBench-revised.
. "$(dirname "$0")/lib.sh"
shared=$top/../shared
corpus=$shared/corpus
bench=$shared/bench/geak-eval-data.tar.gz
[ -f "$corpus/triton-kernels.jsonl" ] && [ -f "$corpus/triton-kernels.tar.gz" ] &&
	[ -f "$corpus/overlap-tritonbench-g.tsv" ] && [ -f "$bench" ] ||
	skip_all "no shared corpus and benchmark data in $shared"
plan 8

# Archive ids are owner__repo/path:function; the JSON Lines ids are
# owner/repo:path:function.
geak-retrieve -l -c "$corpus/triton-kernels.tar.gz" |
	jq -c '[(.id | sub("__"; "/") | sub("^(?<r>[^/]+/[^/]+)/"; "\(.r):")), .description, .code]' > tar.out
jq -c '[.id, .description, .code]' "$corpus/triton-kernels.jsonl" > jsonl.out
check_same "the archive yields 1275 kernels" 1275 "$(wc -l < tar.out | tr -d ' ')"
if cmp -s tar.out jsonl.out; then
	ok "ids, order, descriptions and code equal the JSON Lines form"
else
	not_ok "ids, order, descriptions and code equal the JSON Lines form"
	diff tar.out jsonl.out | head -n 5 | cut -c 1-200 | sed 's/^/# /'
fi

check "an index of the JSON Lines corpus" geak-retrieve --index shared.idx -c "$corpus/triton-kernels.jsonl"
check_same "it holds every entry" 1275 "$(geak-retrieve -l -c shared.idx | wc -l | tr -d ' ')"

# The 184 TritonBench-revised tasks, with their reference kernels.
tar -xzf "$bench" -O GEAK-eval/geak_eval/data/TritonBench/data/TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json |
	jq -c '.[] | {id: ("tbg/" + (.file | sub("\\.py$"; ""))), task: {instruction, reference: .output, file}}' > tasks.jsonl
check_same "184 tasks" 184 "$(wc -l < tasks.jsonl | tr -d ' ')"
geak-retrieve -c shared.idx -x --top 3 tasks.jsonl > out.jsonl
jq -r '.task.file as $f | .oneshot.excluded_ids[]? | [., $f] | @tsv' out.jsonl | sort -u > caught.tsv
tail -n +2 "$corpus/overlap-tritonbench-g.tsv" | cut -f 1,2 | sort -u > pairs.tsv
check_same "the guard catches all 73 known overlapping pairs" "73 73" \
	"$(wc -l < pairs.tsv | tr -d ' ') $(comm -12 pairs.tsv caught.tsv | wc -l | tr -d ' ')"
# The guard works on the same 5-gram Jaccard; its tokens differ from
# Python's tokenize in small ways, so a few more pairs may pass 0.8.
extra=$(comm -13 pairs.tsv caught.tsv | wc -l | tr -d ' ')
if [ "$extra" -le 5 ]; then ok "few pairs beyond the list ($extra)"; else not_ok "few pairs beyond the list ($extra)"; fi
leaked=$(jq -r '.task.file as $f | .oneshots[]? | [.id, $f] | @tsv' out.jsonl | sort -u | comm -12 pairs.tsv - | wc -l | tr -d ' ')
check_same "no retrieved example is a known overlap" 0 "$leaked"
done_testing
