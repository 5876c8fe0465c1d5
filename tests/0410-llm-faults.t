#!/bin/sh
# The LLM client against a real loopback server that misbehaves: retries
# for 408/409/429/5xx and network faults (honouring Retry-After), none for
# 4xx refusals, stalls and cut streams caught, every record accounted for,
# and the key nowhere in what comes out.
. "$(dirname "$0")/lib.sh"
. "$top/tests/04lib-llm.sh"
command -v jq >/dev/null || skip_all "jq is not installed"
plan 57

start_server s --key "$KEY" --models gpt-4.1 --stall-seconds 5

gen() {
	OPENAI_API_KEY=$KEY geak-gen --base-url "$s_url" --max-wait 30 "$@"
}

# one NAME FAULT [gen options]: a task whose prompt asks for FAULT, run
# through geak-gen into NAME.out (stderr NAME.err, status in $rc).
one() {
	n=$1
	f=$2
	shift 2
	task "$n" "Write $n. [[llm-test:$f]]" >"$n.in"
	gen "$@" <"$n.in" >"$n.out" 2>"$n.err"
	rc=$?
}

one ok none
check_same "plain stream: exit 0" 0 "$rc"
check_same "plain stream: code extracted" "import triton" "$(field ok.out '.code' | head -n 1)"
check_same "plain stream: one attempt, request id, usage" "1 req_test_1 true" \
	"$(field ok.out '"\(.llm.attempts) \(.llm.request_id) \(.llm.usage.output_tokens > 0)"')"

one whole none --no-stream
check_same "no stream: code extracted" "import triton" "$(field whole.out '.code' | head -n 1)"

# Faults that a retry cures, all in flight at once.
: >cured.in
for f in 408-once 409-once 429-once 429-ms-once 429-date-once 500-once 503-once 529-once \
	stall-once cut-once error-event-once; do
	task "$f" "Write $f. [[llm-test:$f]]" >>cured.in
done
gen -j 8 --stall-timeout 1 <cured.in >cured.out 2>cured.err
check_same "transient faults: exit 0" 0 "$?"
for f in 408-once 409-once 429-once 429-ms-once 429-date-once 500-once 503-once 529-once \
	stall-once cut-once error-event-once; do
	check_same "$f: retried, then a candidate" "2 import triton" \
		"$(jq -r "select(.id == \"plain/$f\") | \"\\(.llm.attempts) \\(.code)\"" cured.out | head -n 1)"
done

one always500 500 --max-attempts 2
check_same "500 every time: gives up after 2 attempts, exit 4 (not the record's fault)" "4 http" \
	"$rc $(field always500.out '.error.kind')"
check_match "500 every time: says so" "HTTP 500.*test fault 500.*gave up after 2 attempts" \
	"$(field always500.out '.error.message')"
check_same "500 every time: the server saw 2 requests" 2 \
	"$(grep -c 'llm-test:500\]' "$s_log")"

one always429 429 --max-attempts 5 --max-wait 2
check_match "429 every time: stops at --max-wait" "gave up: waiting .* --max-wait 2" \
	"$(field always429.out '.error.message')"

# 400 and 422 refuse what the request holds (exit 1); 404, a wrong
# endpoint or model, is the run's (exit 4).
for code in 400:1 404:4 422:1; do
	want=${code#*:} code=${code%:*}
	one "refused$code" "$code"
	check_same "$code: not retried, kind http, exit $want" "$want http 1" \
		"$rc $(field "refused$code.out" '.error.kind') $(grep -c "llm-test:$code\]" "$s_log")"
	check_match "$code: the provider's message" "HTTP $code .*test fault $code" \
		"$(field "refused$code.out" '.error.message')"
done

task wrongkey "Write it." >wrongkey.in
OPENAI_API_KEY=sk-wrong-key geak-gen --base-url "$s_url" <wrongkey.in >wrongkey.out 2>wrongkey.err
check_same "wrong key: kind auth, exit 4" "4 auth" "$? $(field wrongkey.out '.error.kind')"
check_match "wrong key: the provider's message" "HTTP 401.*invalid API key" \
	"$(field wrongkey.out '.error.message')"
check_match "wrong key: reported once on stderr, naming the record" \
	"^geak-gen: plain/wrongkey \\(sample 0\\): auth: HTTP 401" "$(cat wrongkey.err)"
check_same "wrong key: not retried" 1 "$(jq -c 'select(.auth_ok == false)' "$s_log" | wc -l | tr -d ' ')"

task nomodel "Write it." >nomodel.in
gen --model gpt-nonexistent <nomodel.in >nomodel.out 2>nomodel.err
check_match "unknown model: 404 naming it" "404.*gpt-nonexistent" "$(field nomodel.out '.error.message')"

one stall stall --stall-timeout 1 --max-attempts 1
check_same "stalled stream: kind stall" "4 stall" "$rc $(field stall.out '.error.kind')"

# A stream kept open with comments alone is never silent, so no stall is
# seen: the request's deadline ends it.
t0=$(date +%s)
one comments comments --max-time 2 --stall-timeout 1
t1=$(date +%s)
check_same "a stream of comments only: kind timeout, exit 4" "4 timeout" \
	"$rc $(field comments.out '.error.kind')"
check_match "the deadline is named" "no whole answer after 2 s \\(--max-time\\)" \
	"$(field comments.out '.error.message')"
check "given up at the deadline, not when the server stops" [ $((t1 - t0)) -le 4 ]

one cut cut --max-attempts 2
check_same "stream without [DONE]: kind truncated, not a short answer" "4 truncated null" \
	"$rc $(field cut.out '.error.kind') $(field cut.out '.code')"
one drop drop --max-attempts 1
check_same "connection dropped mid-stream: kind network" "network" "$(field drop.out '.error.kind')"

one badjson malformed --no-stream
check_same "malformed JSON reply: kind provider" "4 provider" "$rc $(field badjson.out '.error.kind')"
one badevent malformed
check_same "malformed stream event: kind provider" "provider" "$(field badevent.out '.error.kind')"

one empty empty
check_same "empty answer: kind no_code, the call still counted" "1 no_code 1" \
	"$rc $(field empty.out '.error.kind') $(field empty.out '.usage_total.calls')"
check_match "empty answer: says why" "empty" "$(field empty.out '.error.message')"

one huge huge
check_same "2 MiB answer: a candidate of that size" "0 true" \
	"$rc $(field huge.out '(.code | length) > 2000000')"
one huge2 huge:9000000 --no-stream
check_same "answer over 8 MiB: kind too_large" "too_large" "$(field huge2.out '.error.kind')"

one evlate error-event-late
check_same "error event after text: an error, not a short answer" "4 provider 1" \
	"$rc $(field evlate.out '.error.kind') $(field evlate.out '.llm.attempts // 1')"
check_match "error event: the provider's words" "boom" "$(field evlate.out '.error.message')"

# Nothing listening: connection refused is a network error, retried.
task refused "Write it." >refused.in
OPENAI_API_KEY=$KEY geak-gen --base-url http://127.0.0.1:9/v1 --max-attempts 2 <refused.in \
	>refused.out 2>refused.err
check_same "nothing listening: kind network after 2 attempts" "network" "$(field refused.out '.error.kind')"
check_match "nothing listening: names the endpoint" "127.0.0.1:9.*gave up after 2" \
	"$(field refused.out '.error.message')"

# A mixed batch in flight at once: as many records out as in, in order.
: >mixed.in
for f in none 429-once 500-once 400 401 empty cut-once stall-once error-event-once none; do
	task "m$f" "Write m$f. [[llm-test:$f]]" >>mixed.in
done
gen -j 8 --stall-timeout 1 <mixed.in >mixed.out 2>mixed.err
check_same "mixed batch: exit 4 (some records failed for the run's reasons)" 4 "$?"
check_same "mixed batch: 10 records in, 10 out" 10 "$(lines mixed.out)"
check_same "mixed batch: input order kept" "$(field mixed.in .id)" "$(field mixed.out .id)"
check_same "mixed batch: errors where due" "null null null http auth no_code null null null null" \
	"$(field mixed.out '.error.kind' | tr '\n' ' ' | sed 's/ $//')"

# -j: that many requests in flight at once, and never more.
start_server slow --key "$KEY" --latency 0.3
: >par.in
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do task "p$i" "Write p$i."; done >par.in
OPENAI_API_KEY=$KEY geak-gen --base-url "$slow_url" -j 4 <par.in >par.out 2>par.err
check_same "-j 4: 12 records out, at most 4 answered at once, 4 reached" "12 4" \
	"$(lines par.out) $(jq -s 'map(.inflight) | max' "$slow_log")"

# -v shows retries and the endpoint, never the key.
one verbose 429-once -v
check_match "-v: the resolved endpoint, and what chose the provider" "openai \\(a base URL was given\\) model gpt-4.1 at $s_url/chat/completions" \
	"$(cat verbose.err)"
check_match "-v: the key's source, not the key" "key from \\\$OPENAI_API_KEY" "$(cat verbose.err)"
check_match "-v: the retry" "HTTP 429.*retrying in" "$(cat verbose.err)"

# Every record carries provider, model, request id, usage and latency.
check_same "accounting fields on a candidate" "openai gpt-4.1 true true true" \
	"$(field ok.out '"\(.llm.provider) \(.llm.model) \(.llm.request_id != null) \(.llm.latency_ms >= 0) \(.usage_total.calls == 1)"')"

no_key_anywhere
done_testing
