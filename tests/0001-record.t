#!/bin/sh
# Record I/O through the library's filter loop (tests/helpers/passthru):
# bad lines become error records, nothing is lost, unknown fields pass.
. "$(dirname "$0")/lib.sh"
plan 28

lines() { wc -l < "$1" | tr -d ' '; }

# A record a stage leaves alone passes through byte for byte.
printf '%s\n' '{"id":"t/a", "x":{"deep":[1,2.5e3,null,true]},"ü":"ünï","z":0.1}' > in.jsonl
passthru in.jsonl > out.jsonl
check_same "untouched record: byte for byte" "$(cat in.jsonl)" "$(cat out.jsonl)"

# A record a stage rewrites keeps unknown fields, nesting, unicode, key
# order and numbers as written (shortest form that reads back the same).
PASSTHRU_REWRITE=1 passthru in.jsonl > out.jsonl
check_same "rewritten record: unknown fields intact" \
	'{"id":"t/a","x":{"deep":[1,2500.0,null,true]},"ü":"ünï","z":0.1,"schema":1}' \
	"$(cat out.jsonl)"

# Empty input: no output, success.
: > empty.jsonl
passthru empty.jsonl > out.jsonl
check_same "empty input exits 0" 0 $?
check_same "empty input gives no records" 0 "$(lines out.jsonl)"

# A mix of good and bad lines: one output line per input line.
{
	echo '{"id":"t/1"}'
	echo '{"id":"t/2", "trunc'
	printf '\001\002\377garbage\200\n'
	echo '{"id":42}'
	echo '["not","an","object"]'
	echo '{"id":"t/6"}'
} > mixed.jsonl
passthru mixed.jsonl > out.jsonl 2> err.txt
status=$?
check_same "bad records make exit status 1" 1 $status
check_same "every input line comes out" 6 "$(lines out.jsonl)"
check_same "good records unchanged" '{"id":"t/1"}' "$(sed -n 1p out.jsonl)"
check_match "truncated JSON names file and line" \
	'^passthru: mixed.jsonl:2: invalid JSON' "$(sed -n 1p err.txt)"
check_match "garbage kept as base64" '"raw_base64":"AQL/Z2FyYmFnZYA="' "$(sed -n 3p out.jsonl)"
check_match "wrong field type is named" \
	"mixed.jsonl:4: field 'id': expected a string, got an integer" "$(cat err.txt)"
check_match "wrong field type keeps the record" '^\{"id":42,"error":\{' "$(sed -n 4p out.jsonl)"
check_same "order kept" '{"id":"t/6"}' "$(sed -n 6p out.jsonl)"
check_same "every output line is JSON" 6 "$(jq -c . out.jsonl | wc -l | tr -d ' ')"

# A 100 MB line: rejected with its length, the stream goes on, and
# memory stays flat (the line is never held whole).
{
	echo '{"id":"before"}'
	head -c 100000000 /dev/zero | tr '\0' 'a'
	echo
	echo '{"id":"after"}'
} > huge.jsonl
/usr/bin/time -f %M -o rss.txt passthru huge.jsonl > out.jsonl 2> err.txt
check_same "100 MB line: three records out" 3 "$(lines out.jsonl)"
check_match "100 MB line: size reported" '"raw_bytes":100000000' "$(sed -n 2p out.jsonl)"
check_same "100 MB line: stream goes on" '{"id":"after"}' "$(sed -n 3p out.jsonl)"
rss=$(tail -n 1 rss.txt)
if [ -n "$GEAK_SANITIZE" ] || [ "$rss" -lt 80000 ]; then
	ok "100 MB line: peak memory ${rss} KiB (limit 80000 KiB)"
else
	not_ok "100 MB line: peak memory ${rss} KiB (limit 80000 KiB)"
fi

# Several files are read in order, as one stream.
passthru in.jsonl mixed.jsonl in.jsonl > out.jsonl 2>/dev/null
check_same "several files, all lines" 8 "$(lines out.jsonl)"
# A parser message that quotes bytes which are not UTF-8 (found by the
# fuzzer): still an error record, and the stream goes on.
printf '{"s":"\\u0\353\200\222"\n{"id":"next"}\n' > quote.jsonl
passthru quote.jsonl > out.jsonl 2>/dev/null
check_same "bad bytes in a parser message: exit 1" 1 $?
check_same "bad bytes in a parser message: both records out" 2 "$(lines out.jsonl)"

# A full disk or a closed pipe is a fatal error, reported once.
passthru in.jsonl > /dev/full 2> err.txt
check_same "write failure exits 3" 3 $?
check_same "write failure reported once" "passthru: stdout: write failed: No space left on device" \
	"$(cat err.txt)"

# The loop with several slots: 2000 records, more than it holds at once,
# in order and byte for byte; unordered, every one of them still comes out.
seq 0 1999 | awk '{ printf "{\"n\": %d, \"pad\": \"x\"}\n", $1 }' > many.jsonl
PASSTHRU_JOBS=8 passthru many.jsonl > out.jsonl
check_same "8 slots: in order, byte for byte" "$(sha256sum < many.jsonl)" "$(sha256sum < out.jsonl)"
PASSTHRU_JOBS=8 PASSTHRU_UNORDERED=1 passthru many.jsonl > out.jsonl
check_same "unordered: every record once" "$(sort many.jsonl | sha256sum)" "$(sort out.jsonl | sha256sum)"
check "unordered: not in input order" [ "$(sha256sum < many.jsonl)" != "$(sha256sum < out.jsonl)" ]
# A record made into three: all three in its place, the bad line in its own.
PASSTHRU_SPLIT=3 passthru mixed.jsonl > out.jsonl 2> /dev/null
check_same "split: three records in the place of each, one for a bad line" \
	't/1:0 t/1:1 t/1:2 - - - - t/6:0 t/6:1 t/6:2' \
	"$(jq -r 'if .error then "-" else "\(.id):\(.part)" end' out.jsonl | tr '\n' ' ' | sed 's/ $//')"

# A missing input file is reported, and the others are still read.
passthru in.jsonl nonexistent.jsonl in.jsonl > out.jsonl 2> err.txt
check_same "missing file exits 3" 3 $?
check_same "other files still read" 2 "$(lines out.jsonl)"
done_testing
