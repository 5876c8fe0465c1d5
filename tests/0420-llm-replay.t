#!/bin/sh
# Record and replay (--record/--replay) and the budget (--max-tokens-total,
# --max-cost): a replay needs no server and no key; a miss and a request
# the budget stopped are errors on their record, no record is lost, and
# the exit status (4) says the output is not a result to keep.
. "$(dirname "$0")/lib.sh"
. "$top/tests/04lib-llm.sh"
command -v jq >/dev/null || skip_all "jq is not installed"
plan 22

start_server s --key "$KEY"
for t in alpha beta; do task "$t" "Write $t."; done >two.in

OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" -n 2 --record rec.jsonl <two.in >live.out 2>live.err
check_same "recording run: exit 0" 0 "$?"
check_same "recording run: one exchange per sample" 4 "$(lines rec.jsonl)"
check_same "an exchange: key, request, reply" "true true true" \
	"$(jq -r '"\(.key | test("^[0-9a-f]{64}$")) \(.request.messages | length == 1) \(.reply.text | length > 0)"' rec.jsonl | sort -u)"
check_same "exchanges differ by sample index" 4 "$(jq -r .key rec.jsonl | sort -u | wc -l | tr -d ' ')"
stop_servers

# No server, no key, an endpoint that does not exist: all from the file.
geak-gen --base-url http://127.0.0.1:9/v1 -n 2 --replay rec.jsonl <two.in >replay.out 2>replay.err
check_same "replay: exit 0 with no server and no key" 0 "$?"
check_same "replay: the same candidates" "$(field live.out .code_sha)" "$(field replay.out .code_sha)"
check_same "replay: marked replayed, usage kept" "true true" \
	"$(jq -r '"\(.llm.replayed) \(.llm.usage.input_tokens > 0)"' replay.out | sort -u)"
check_same "replay: the same records but for llm and what they cost" \
	"$(jq -c 'del(.llm, .usage_total.cost)' live.out)" "$(jq -c 'del(.llm, .usage_total.cost)' replay.out)"
check_same "a live answer costs its price, a replayed one nothing" "true 0" \
	"$(jq -r .llm.usage.cost live.out | awk '{ if ($1 <= 0) bad = 1 } END { print bad ? "false" : "true" }') $(jq -r .usage_total.cost replay.out | sort -u)"

task gamma "Write gamma." >miss.in
cat two.in >>miss.in
geak-gen -n 2 --replay rec.jsonl <miss.in >miss.out 2>miss.err
check_same "replay miss: exit 4 (the recording does not fit the run)" 4 "$?"
check_same "replay miss: every record out" 6 "$(lines miss.out)"
check_same "replay miss: kind replay_miss on the new task only" \
	"replay_miss replay_miss null null null null" "$(field miss.out '.error.kind' | tr '\n' ' ' | sed 's/ $//')"
geak-gen --temperature 0.5 -n 2 --replay rec.jsonl <two.in >temp.out 2>/dev/null
check_same "replay: another temperature is another exchange" "replay_miss" \
	"$(field temp.out '.error.kind' | sort -u)"
printf 'not json\n' >bad.jsonl
geak-gen --replay bad.jsonl <two.in >bad.out 2>bad.err
check_same "unreadable replay file: exit 3, nothing written" "3 0" "$? $(lines bad.out)"

# The budget: after the first call's tokens, nothing more is sent.
start_server b --key "$KEY"
for t in one two three four; do task "$t" "Write $t."; done >four.in
OPENAI_API_KEY=$KEY geak-gen --base-url "$b_url" -j 1 --max-tokens-total 10 <four.in >budget.out 2>budget.err
check_same "token budget: exit 4 (the run stopped short, not the records)" 4 "$?"
check_same "token budget: 4 records in, 4 out" 4 "$(lines budget.out)"
check_same "token budget: one sent, the rest stopped" "null budget budget budget" \
	"$(field budget.out '.error.kind' | tr '\n' ' ' | sed 's/ $//')"
check_same "token budget: the server saw one request" 1 "$(lines "$b_log")"

printf '# test prices\nopenai\tgpt-4.1\t1000000\t0\t0\n' >prices.tsv
OPENAI_API_KEY=$KEY geak-gen --base-url "$b_url" -j 1 --prices prices.tsv --max-cost 0.5 \
	<four.in >cost.out 2>cost.err
check_same "cost limit: one sent, the rest stopped" "null budget budget budget" \
	"$(field cost.out '.error.kind' | tr '\n' ' ' | sed 's/ $//')"
OPENAI_API_KEY=$KEY geak-gen --base-url "$b_url" --model unpriced --prices prices.tsv \
	--max-cost 1 <four.in >unpriced.out 2>unpriced.err
check_same "cost limit on a model without a price: exit 3" 3 "$?"
check_match "... naming the model and the table" "prices.tsv has no price for openai model unpriced" \
	"$(cat unpriced.err)"

no_key_anywhere
done_testing
