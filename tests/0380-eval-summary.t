#!/bin/sh
# tests/gpu/eval-summary.py, which the GPU runs are read with: a record
# retimed in a later file counts as it last came (--latest), and the pass
# counts of the references that ran upstream (--status) leave out what
# was not reached and what is flagged.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "no python3"
plan 4
sum() { python3 "$top/tests/gpu/eval-summary.py" "$@"; }
rec() { # ID EXEC FLAGS SPEEDUP
	printf '{"id": "%s", "task": {"suite": "%s"}, "eval": {"call": true, "exec": %s, "flags": %s, "speedup": %s, "seconds": 5}}\n' \
		"$1" "${1%%/*}" "$2" "$3" "$4"
}
{ rec tbg/a false '[]' null; rec tbg/b true '[]' 1.0; rec rocm/c true '[]' 0.7; } > first.jsonl
{ rec tbg/a true '[]' 1.01; rec rocm/c true '["above_roofline"]' 1.0; } > later.jsonl
printf '# a comment\nsuite\tkernel\tgpu_rc\tcpu_interp_rc\ntbg\ta\t0\t0\ntbg\tb\t1\t0\ntbg\td\t0\t0\nrocm\tc\t0\t0\n' > status.tsv

check_match "without --latest every record counts" "^tbg: 3 records, call 3/3, exec 2/3" \
	"$(sum first.jsonl later.jsonl | grep '^tbg:')"
check_match "with --latest a record counts as it last came" "^tbg: 2 records, call 2/2, exec 2/2" \
	"$(sum --latest first.jsonl later.jsonl | grep '^tbg:')"
check_same "--status: of those run upstream, reached and passing (a flag is no pass)" \
	"rocm: 1 run upstream, 1 reached here, 0 pass|tbg: 2 run upstream, 1 reached here, 1 pass" \
	"$(sum --latest --status status.tsv first.jsonl later.jsonl | grep 'run upstream' | paste -sd '|')"
check_match "the spread of speedups counts the last of each" "^speedups \(3\): .*within 2% of 1: 3/3" \
	"$(sum --latest first.jsonl later.jsonl | grep '^speedups')"
done_testing
