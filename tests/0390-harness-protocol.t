#!/bin/sh
# The protocol between geak-eval and its harness is named once in
# lib/eval/harness.h and specified in geak-harness(7): every name the header
# gives is in the page, and the harness's Python uses it.
. "$(dirname "$0")/lib.sh"
names=$(sed -n 's/^#define GEAK_[A-Z_]* *"\([^"]*\)".*/\1/p' "$top/lib/eval/harness.h")
plan 3
check_same "the header names the protocol" yes "$([ "$(printf '%s\n' $names | wc -l)" -ge 30 ] && echo yes)"
missing=
for n in $names; do
	grep -q -e "$n" "$top/share/man/geak-harness.7" || missing="$missing $n"
done
check_same "every name of lib/eval/harness.h is in geak-harness(7)" "" "$missing"
unused=
for n in $names; do
	grep -rq -e "\"$n\"" "$top/share/harness" || unused="$unused $n"
done
check_same "and in the harness's Python" "" "$unused"
done_testing
