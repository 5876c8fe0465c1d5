#!/bin/sh
# A short libFuzzer run over the record reader (`make fuzz` runs longer).
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null 2>&1 || command -v clang-14 >/dev/null 2>&1 ||
	skip_all "no clang for libFuzzer"
plan 2
if make -s -C "$top" tests/fuzz/fuzz-record >build.log 2>&1; then
	ok "fuzz target builds"
else
	not_ok "fuzz target builds"
	sed 's/^/# /' build.log | tail -n 20
fi
cp -r "$top/tests/fuzz/seeds" seeds
"$top/tests/fuzz/fuzz-record" -max_total_time="${GEAK_FUZZ_SECONDS:-15}" \
	-max_len=4096 -artifact_prefix="$scratch/" seeds \
	>fuzz.log 2>&1
status=$?
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' fuzz.log)
if [ $status -eq 0 ] && [ -n "$runs" ]; then
	ok "fuzz smoke run: $runs inputs, no crash"
else
	not_ok "fuzz smoke run (exit $status)"
	grep -E 'ERROR|SUMMARY|#[0-9]+ ' fuzz.log | head -n 20 | sed 's/^/# /'
fi
done_testing
