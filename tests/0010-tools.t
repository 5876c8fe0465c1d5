#!/bin/sh
# Conventions every tool and script keeps: --help on standard output,
# exit 0, listing every option its man page documents; --version; usage
# errors exit 2; a man page that renders cleanly and documents the exit
# status.
. "$(dirname "$0")/lib.sh"
tools=$(cd "$top/bin" && ls geak-*.c 2>/dev/null | sed 's/\.c$//')
[ -n "$tools" ] || skip_all "no tools built"
scripts="bin/geak-loop.sh bin/geak-parallel.sh bin/geak-iter.sh examples/demo.sh
	examples/bench/agent-bench.sh examples/bench/harness-check.sh"
n=0
for t in $tools; do n=$((n + 7)); done
for s in $scripts; do n=$((n + 2)); done
pages=$(ls "$top"/share/man/*.[157] 2>/dev/null)
for p in $pages; do n=$((n + 1)); done
plan $((n + 2))

# The long options a page's OPTIONS section documents.
documented() {
	sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' "$1" | grep '^\.It' | grep -o 'Fl \\-[a-z][a-z-]*' |
		sed 's/Fl \\-/--/' | sort -u
}
# missing PAGE COMMAND...: the documented options the command's --help lacks.
missing() {
	page=$1
	shift
	"$@" --help > help.txt 2>&1
	for o in $(documented "$page"); do
		grep -q -e "$o" help.txt || printf ' %s' "$o"
	done
}

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
	check_same "$t --help lists every option of $t(1)" "" "$(missing "$page" "$t")"
done
for s in $scripts; do
	sh "$top/$s" --help > help.txt 2>err.txt
	check_same "$s --help: usage on stdout, exit 0" "0 usage:" "$? $(head -c 6 help.txt)"
	sh "$top/$s" --no-such-option > /dev/null 2>&1 </dev/null
	check_same "$s: unknown option exits 2" 2 $?
done
check_same "geak-loop.sh and geak-parallel.sh --help list the options geak-loop(1) gives them" "" \
	"$(missing "$top/share/man/geak-loop.1" sh "$top/bin/geak-parallel.sh" | tr ' ' '\n' |
		grep -v -e --run -e --verbose | tr -d '\n')$(missing "$top/share/man/geak-loop.1" sh "$top/bin/geak-loop.sh" |
		tr ' ' '\n' | grep -v -e --runs -e --jobs | tr -d '\n')"
check_same "geak(7) lists every tool's letters" "" \
	"$(for t in $tools; do "$t" --help 2>&1; done | grep -o '^  -[a-zA-Z],' | sort -u | sed 's/^  //; s/,$//' |
		while read -r o; do grep -q "^\.It Fl ${o#-} " "$top/share/man/geak.7" || printf ' %s' "$o"; done)"
for p in $pages; do
	out=$(mandoc -Tlint -W warning "$p" 2>&1 | grep -v 'outdated mandoc.db\|referenced manual not found')
	check_same "$(basename "$p") renders without warnings" "" "$out"
done
done_testing
