#!/bin/sh
# Short fuzzing runs: the record reader under libFuzzer, and every tool
# that reads records on mutated records (`make fuzz` and `make fuzz-tools`
# run longer).  Under SANITIZE=1 the tools' sanitizers report too.
. "$(dirname "$0")/lib.sh"
plan 3
if command -v clang >/dev/null 2>&1 || command -v clang-14 >/dev/null 2>&1; then
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
else
	skip "no clang for libFuzzer"
	skip "no clang for libFuzzer"
fi

# The tools: a fixed seed, so that a failure here is one to reproduce.
PY=$(command -v python3 || echo "$GEAK_PYTHON")
timeout -s KILL 120 "$PY" "$top/tests/fuzz/fuzz-tools.py" --seed 45 --timeout 20 \
	--seconds "${GEAK_FUZZ_SECONDS:-15}" --out found >tools.log 2>&1
status=$?
if [ $status -eq 0 ]; then
	ok "tools fuzzed: $(tail -n 1 tools.log | sed 's/^fuzz-tools: //')"
else
	not_ok "tools fuzzed (exit $status)"
	head -n 20 tools.log | sed 's/^/# /'
	for f in found/*.err; do [ -f "$f" ] && head -n 15 "$f" | sed 's/^/# /'; done
fi
done_testing
