#!/bin/sh
# What a record may claim (geak-record(5), LIMITS), in every tool that
# reads records: integer fields out of their ranges and names with control
# characters are bad_field errors naming the line and the field; no number
# in a record sizes a loop or an allocation, nor overflows a sum; messages
# print control characters escaped.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
plan 18
# No tool here may reach a model: nothing listens on port 9.
GEAK_BASE_URL=http://127.0.0.1:9/v1
export GEAK_BASE_URL

# watch SECONDS CMD...: CMD under a watchdog, its peak RSS (KiB) in rss.
watch() {
	s=$1
	shift
	/usr/bin/time -f %M -o rss timeout -s KILL "$s" "$@"
}

# One number made geak-select loop and allocate once per iteration up to it.
echo '{"schema":1,"id":"t","best":[{"code_sha":"x","iter":10000000}]}' > big-iter.jsonl
watch 20 geak-select -S big-iter.jsonl > big-iter.json
check_same "best[].iter 10^7: geak-select ends" 0 $?
check_same "best[].iter 10^7: a row per iteration named" '[0,10000000]' \
	"$(jq -c '[.by_iter[].iter]' big-iter.json)"
check_same "best[].iter 10^7: under 200 MiB" yes "$([ "$(tail -n 1 rss)" -lt 204800 ] && echo yes)"

# Out of range, in each tool, at any depth: the line and the field named.
{
	echo '{"id":"t/a","iter":2000000000}'
	echo '{"id":"t/b","run":-1}'
	echo '{"id":"t/c","best":[{"code_sha":"x","iter":1},{"code_sha":"y","iter":-5}]}'
	echo '{"id":"t/d","usage_total":{"calls":9223372036854775807}}'
	echo '{"id":"t\u0000a"}'
	echo '{"id":"t\u001b[2Jb"}'
	echo '{"id":"t","task":{"name":"n\u0007"}}'
} > bad.jsonl
want="1 iter|2 run|3 best[1].iter|4 usage_total.calls|5 id|6 id|7 task.name"
for t in "geak-eval --python /bin/false" "geak-gen --dry-run" "geak-opt --replay /dev/null" \
	"geak-reflect --replay /dev/null" "geak-retrieve" passthru; do
	name=${t%% *}
	$t bad.jsonl > "$name.out" 2> "$name.err"
	check_same "$name: each bad_field names its line and field" "$want" \
		"$(jq -r 'select(.error.kind == "bad_field") | "\(.error.line) \(.error.message |
			sub("^field .(?<f>[^'"'"']*).*"; "\(.f)"))"' "$name.out" | paste -sd'|' -)"
done
geak-select -S bad.jsonl > sel.json 2> sel.err
check_same "geak-select: each bad line reported" 7 "$(grep -c 'bad.jsonl:[1-7]: field' sel.err)"

# Ids with NUL are not one task with a shorter id.
printf '%s\n' '{"id":"t\u0000a","code":"a","code_sha":"a","eval":{"code_sha":"a","call":true,"exec":true}}' \
	'{"id":"t\u0000b","code":"b","code_sha":"b","eval":{"code_sha":"b","call":true,"exec":true}}' \
	'{"id":"t"}' > nul.jsonl
geak-select -S nul.jsonl > nul.json 2> nul.err
check_same "NUL in ids: no candidate taken from them" "0 1" \
	"$(jq -r '"\(.exec_pass) \(.tasks)"' nul.json)"

# Totals of many lineages stop at 2^63-1 (UBSan fails the old sums).
jq -nc 'range(9300) | {id: "t", sample: ., usage_total: {calls: 1000000000000000,
	input_tokens: 1000000000000000, output_tokens: 1000000000000000}}' > many.jsonl
geak-select -S -r many.html many.jsonl > many.json 2> many.err
# (jq reads numbers as doubles: the text is compared.)
check_same "usage sums: saturated, not wrapped" 9223372036854775807 \
	"$(grep -Eo '"(calls|input_tokens|output_tokens)": [-0-9]+' many.json | sed 's/.* //' | sort -u)"
check_same "usage sums: no sanitizer report" "" "$(grep -E 'runtime error|Sanitizer' many.err)"
check_same "usage sums: the report is written" yes "$([ -s many.html ] && echo yes)"

# A debug attempt whose record has no task: a prompt, not a fatal error.
echo '{"id":"x","code":"y","eval":{"exec":false}}' > notask.jsonl
geak-gen --dry-run notask.jsonl > notask.out 2> notask.err
check_same "geak-gen, debug record without a task: exit 0" 0 $?
check_same "geak-gen, debug record without a task: a prompt" yes \
	"$(jq -r 'if (.prompt | length) > 0 then "yes" else "no" end' notask.out)"

# Control characters in what a message quotes are escaped: a file name.
esc=$(printf 'in\033[2J\302\233x.jsonl')
echo '{"id":' > "$esc"
geak-select -S "$esc" > /dev/null 2> esc.err
check_same "messages: no raw ESC or C1 byte" 0 "$(tr -cd '\033\302' < esc.err | wc -c | tr -d ' ')"
check_match "messages: the name escaped" 'in\\x1b\[2J\\u009bx\.jsonl:1: invalid JSON' "$(cat esc.err)"
done_testing
