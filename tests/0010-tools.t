#!/bin/sh
# Conventions every tool keeps: --help, --version, usage errors exit 2,
# a man page that renders cleanly and documents the exit status.
. "$(dirname "$0")/lib.sh"
tools=$(cd "$top/bin" && ls geak-*.c 2>/dev/null | sed 's/\.c$//')
[ -n "$tools" ] || skip_all "no tools built"
n=0
for t in $tools; do n=$((n + 6)); done
pages=$(ls "$top"/share/man/*.[157] 2>/dev/null)
for p in $pages; do n=$((n + 1)); done
plan $n

for t in $tools; do
	"$t" --help > help.txt 2>&1
	check_same "$t --help exits 0" 0 $?
	check_match "$t --help shows usage" "^(usage|Usage): $t" "$(head -n 3 help.txt)"
	check_match "$t --version" "^$t \\(geak\\) [0-9]" "$("$t" --version 2>&1)"
	"$t" --no-such-option </dev/null >/dev/null 2>err.txt
	check_same "$t: unknown option exits 2" 2 $?
	page=$top/share/man/$t.1
	if [ -f "$page" ]; then
		ok "$t has a man page"
	else
		not_ok "$t has a man page"
	fi
	check_match "$t(1) documents EXIT STATUS" '^\.Sh EXIT STATUS' "$(cat "$page" 2>/dev/null)"
done
for p in $pages; do
	out=$(mandoc -Tlint -W warning "$p" 2>&1 | grep -v 'outdated mandoc.db\|referenced manual not found')
	check_same "$(basename "$p") renders without warnings" "" "$out"
done
done_testing
