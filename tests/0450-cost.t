#!/bin/sh
# Cost: every call's price, from the one price table, in its record and
# in the record's usage_total, and in the tool's closing line; --ledger
# makes --max-cost and --max-tokens-total hold for every process that
# shares it, counting each answer once (a journal's answers were paid for
# when they came) and never refusing the preflight.
. "$(dirname "$0")/lib.sh"
. "$top/tests/04lib-llm.sh"
command -v jq >/dev/null || skip_all "jq is not installed"
plan 16

start_server s --key "$KEY"
for t in one two three; do task "$t" "Write $t."; done >three.in
# $2 per million input tokens, $8 per million output tokens.
printf 'openai\tgpt-4.1*\t2.00\t0.50\t8.00\n' >prices.tsv

OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" --prices prices.tsv <three.in >gen.out 2>gen.err
check_same "a record's call costs its tokens at the table's prices" "true true true" \
	"$(jq -r '(.llm.usage | (.input_tokens * 2 + .output_tokens * 8) / 1e6 - .cost | fabs < 1e-12)' gen.out | tr '\n' ' ' | sed 's/ $//')"
check_same "... and so does its usage_total" "true true true" \
	"$(jq -r '.usage_total.cost == .llm.usage.cost' gen.out | tr '\n' ' ' | sed 's/ $//')"
check_match "the closing line: generated, requests, tokens, dollars" \
	"^geak-gen: 3 generated, 3 requests, [0-9]+ tokens, \\\$0\\.0[0-9]+, [0-9]+s$" "$(cat gen.err)"
OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" --model unpriced <three.in >np.out 2>np.err
check_same "a model without a price: cost null, none in usage_total" "null false" \
	"$(jq -r '"\(.llm.usage.cost) \(.usage_total | has("cost"))"' np.out | sort -u)"
check_same "... and no dollars in the closing line" "" "$(grep -o '\$' np.err)"
check_same "the shipped table prices the default model" "true" \
	"$(OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" <three.in 2>/dev/null | jq -r '.llm.usage.cost > 0' | sort -u)"

# $1 a token: the first answer spends the whole budget of every process
# that shares the ledger.
printf 'openai\tgpt-4.1\t1000000\t0\t0\n' >dear.tsv
task four "Write four." >four.in
OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" -j 1 --prices dear.tsv --max-cost 5 \
	--ledger run.ledger <four.in >l1.out 2>l1.err
check_same "first process: its call is made and kept in the ledger" "0 1" \
	"$? $(jq -r .calls run.ledger)"
OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" -j 1 --prices dear.tsv --max-cost 5 \
	--ledger run.ledger <three.in >l2.out 2>l2.err
check_same "second process: refused on what the first spent (exit 4)" "4 budget budget budget" \
	"$? $(field l2.out .error.kind | tr '\n' ' ' | sed 's/ $//')"
check_match "... and says whose spending it was" 'spent by the run \(--ledger\) reached --max-cost 5' \
	"$(field l2.out .error.message | head -n 1)"
check_same "the ledger holds the first call only" 1 "$(jq -r .calls run.ledger)"
OPENAI_API_KEY=$KEY geak-gen --check --base-url "$s_url" --prices dear.tsv --max-cost 5 \
	--ledger run.ledger >chk.out 2>&1
check_same "the preflight is neither refused by a spent budget nor counted" "0 1" \
	"$? $(jq -r .calls run.ledger)"

OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" --prices prices.tsv --journal j.jsonl \
	--ledger two.ledger <three.in >j1.out 2>/dev/null
OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" --prices prices.tsv --journal j.jsonl \
	--ledger two.ledger <three.in >j2.out 2>/dev/null
check_same "answers from the journal are not paid for twice" 3 "$(jq -r .calls two.ledger)"
check_same "... though the records count them" "1 1 1" \
	"$(jq -r .usage_total.calls j2.out | tr '\n' ' ' | sed 's/ $//')"
printf 'not a ledger\n' >bad.ledger
OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" --ledger bad.ledger <three.in >bad.out 2>bad.err
check_same "a file that is not a ledger: exit 3, nothing sent" "3 0" "$? $(lines bad.out)"
check_match "... saying what it wants" 'bad.ledger: not a ledger' "$(cat bad.err)"
no_key_anywhere
done_testing
