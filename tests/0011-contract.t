#!/bin/sh
# The record contract of geak-record(5), once for all seven tools: one
# line out per line in, records a tool does not act on byte for byte, and
# the same error kinds, stages and messages for the same bad input
# (a line that is not JSON, not an object, fields of the wrong type).
# geak-select reads the same way but writes a selection; geak-import
# reads no records, and its error records pass every other tool untouched.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
plan 44
# No tool here may reach a model: nothing listens on port 9.
GEAK_BASE_URL=http://127.0.0.1:9/v1 GEAK_MODEL=test-model
export GEAK_BASE_URL GEAK_MODEL

# contract.jsonl: the lines every tool gets; line 6 is one the tool leaves
# alone, and is written by each tool's own case below.
common() {
	printf '%s\n' '{"schema":1,  "id":"t/err","error":{"tool":"x","stage":"y","kind":"z","message":"m"},"n":1.0e3,"ü":"ünï"}'
	printf '%s\n' '{"id":"t/bad",'
	printf '%s\n' '{"id":"t/code","code":7}'
	printf '%s\n' '{"id":"t/iter","iter":"seven","task":{"instruction":"Do it."}}'
	printf '%s\n' '{"id":5}'
	printf '%s\n' "$1"
	printf '%s\n' '[1, 2]'
}
kinds='z bad_record bad_field bad_field bad_field - bad_record'

# run TOOL UNTOUCHED ARGS...: the tool on the contract, into TOOL.out/.err.
run() {
	t=$1 line=$2
	shift 2
	common "$line" > contract.jsonl
	"$t" "$@" contract.jsonl > "$t.out" 2> "$t.err"
	rc=$?
}
# check_filter TOOL UNTOUCHED(1 when line 6 must come out as it went in)
check_filter() {
	check_same "$1: exit 1" 1 "$rc"
	check_same "$1: one line out per line in" 7 "$(wc -l < "$1.out" | tr -d ' ')"
	check_same "$1: the record with an error, byte for byte" "$(sed -n 1p contract.jsonl)" \
		"$(sed -n 1p "$1.out")"
	if [ "$2" = 1 ]; then
		check_same "$1: the record it leaves alone, byte for byte" "$(sed -n 6p contract.jsonl)" \
			"$(sed -n 6p "$1.out")"
	fi
	check_same "$1: the error kinds" "$kinds" \
		"$(jq -r '.error.kind // "-"' "$1.out" | tr '\n' ' ' | sed 's/ $//')"
	check_same "$1: field errors: stage input, this tool, file and line, fields kept" \
		"input $1 contract.jsonl 3 7|input $1 contract.jsonl 4 seven|input $1 contract.jsonl 5 5" \
		"$(jq -r 'select(.error.kind == "bad_field") |
			"\(.error.stage) \(.error.tool) \(.error.file) \(.error.line) \(.code // .iter // .id)"' \
			"$1.out" | tr '\n' '|' | sed 's/|$//')"
	sed "s/^$1: //" "$1.err" | grep 'contract.jsonl:' > "$1.msgs"
}

run geak-retrieve '{"id":"t/task","task":{"instruction":"Add two vectors."}}'
check_filter geak-retrieve 0
check_same "geak-retrieve: acts on the task record" true "$(sed -n 6p geak-retrieve.out | jq '.oneshot != null')"
run geak-gen '{"id":"t/ok",  "code":"x = 1","code_sha":"aa","eval":{"code_sha":"aa","exec":true}}'
check_filter geak-gen 1
run geak-eval '{"id":"t/task", "task":{"suite":"plain"}}' --cpu --no-cache
check_filter geak-eval 1
run geak-reflect '{"id":"t/noeval",  "code":"x = 1"}'
check_filter geak-reflect 1
run geak-opt '{"id":"t/noeval",  "code":"x = 1"}'
check_filter geak-opt 1

check_same "the same messages on stderr from every filter" "" \
	"$(for t in geak-gen geak-eval geak-reflect geak-opt; do cmp -s geak-retrieve.msgs $t.msgs || echo $t; done)"
check_match "each names file, line and field" \
	"contract.jsonl:3: field 'code': expected a string, got an integer" "$(cat geak-retrieve.msgs)"
check_match "... and the line that is not JSON" "contract.jsonl:2: invalid JSON" "$(cat geak-retrieve.msgs)"

run geak-select '{"id":"t/task"}' -S
check_same "geak-select: exit 1" 1 "$rc"
check_same "geak-select: every line counted" 7 "$(jq .records geak-select.out)"
sed "s/^geak-select: //" geak-select.err | grep 'contract.jsonl:' > geak-select.msgs
check_same "geak-select: the same messages" "" "$(cmp geak-select.msgs geak-retrieve.msgs)"
check_same "geak-select: a bad record is no task" '["t/err","t/task"]' \
	"$(jq -c '[.kernels[].id]' geak-select.out)"

# geak-import: a checkout with one task, one broken file and an id it lacks.
sep=$(printf '%146s' '' | tr ' ' '#')
dir=checkout/geak_eval/data/TritonBench/data
mkdir -p "$dir/TritonBench_G_v1"
printf 'def f(x):\n    return x\n%s\nresult_gold = f(1)\n' "$sep" > "$dir/TritonBench_G_v1/good.py"
printf 'def f(x):\n    return x\n' > "$dir/TritonBench_G_v1/nosep.py"
printf '[{"instruction": "Write f.", "file": "good.py", "difficulty": "1"}, {"instruction": "Write f.", "file": "nosep.py", "difficulty": "1"}]\n' \
	> "$dir/TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json"
geak-import --ids good,nosep,missing checkout > import.jsonl 2> import.err
check_same "geak-import: exit 1" 1 $?
check_same "geak-import: its errors, in the shape of every tool's" \
	'ok|geak-import import bad_task true|geak-import import no_task true' \
	"$(jq -r 'if .error then "\(.error.tool) \(.error.stage) \(.error.kind) \(.error.message | length > 0)"
		else "ok" end' import.jsonl | tr '\n' '|' | sed 's/|$//')"
grep '"error"' import.jsonl > import-errors.jsonl
for t in geak-retrieve geak-gen geak-reflect geak-opt; do
	"$t" import-errors.jsonl > pass.out 2> /dev/null
	check_same "$t passes geak-import's error records untouched" "$(cat import-errors.jsonl)" "$(cat pass.out)"
done
geak-eval --cpu import-errors.jsonl > pass.out 2> /dev/null
check_same "geak-eval passes geak-import's error records untouched" "$(cat import-errors.jsonl)" "$(cat pass.out)"
done_testing
