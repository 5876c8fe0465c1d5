#!/bin/sh
# make install: tools, data, man pages where PREFIX and DESTDIR say, and
# an installed tool finds its data without help.
. "$(dirname "$0")/lib.sh"
plan 15
stage=$scratch/stage
# A private copy of the tree, so the build here does not disturb the
# one the other tests use.
mkdir src && (cd "$top" && git ls-files -z | xargs -0 tar cf -) | (cd src && tar xf -) ||
	{ not_ok "copy of the tree"; done_testing; }
if make -s -C src install PREFIX=/opt/geak DESTDIR="$stage" HARNESS_PYTHON="$GEAK_PYTHON" >build.log 2>&1; then
	ok "make install PREFIX=/opt/geak DESTDIR=..."
else
	not_ok "make install"
	tail -n 20 build.log | sed 's/^/# /'
fi
check "tools installed" test -x "$stage/opt/geak/bin/geak-eval" -a -x "$stage/opt/geak/bin/geak-select"
check "man pages installed" test -f "$stage/opt/geak/share/man/man1/geak-gen.1" -a \
	-f "$stage/opt/geak/share/man/man5/geak-record.5" -a -f "$stage/opt/geak/share/man/man7/geak.7"
check "data installed" test -f "$stage/opt/geak/share/geak/prompts/gen-first.txt" -a \
	-d "$stage/opt/geak/share/geak/harness" -a -f "$stage/opt/geak/share/geak/Makefile.inc"
check_match "the data path is compiled in" /opt/geak/share/geak \
	"$(strings "$stage/opt/geak/bin/geak-gen" | grep /opt/geak/share/geak)"
# Installed under DESTDIR the tool is not at its final place, so point it
# at the staged data; the default corpus must be found and searched.
echo '{"id":"plain/x","task":{"instruction":"row-wise softmax of a matrix"}}' > t.jsonl
out=$(env -u GEAK_SHAREDIR GEAK_SHAREDIR="$stage/opt/geak/share/geak" \
	"$stage/opt/geak/bin/geak-retrieve" < t.jsonl 2>&1)
check_match "installed geak-retrieve finds the default corpus" '"oneshot":\{"id":"[^"]*softmax' "$out"

# The loop drivers are commands too, and find their steps beside them.
for d in geak-loop geak-parallel geak-slurm; do
	check_match "$d is installed, and its --help names it" "^usage: $d " \
		"$("$stage/opt/geak/bin/$d" --help 2>&1 | head -n 1)"
done
check "geak-iter.sh beside them" test -x "$stage/opt/geak/bin/geak-iter.sh"
check "geak-slurm's man page installed" test -f "$stage/opt/geak/share/man/man1/geak-slurm.1"
out=$("$stage/opt/geak/bin/geak-slurm" runs --dry-run -R 2 -o out t.jsonl 2>&1)
check_match "installed geak-slurm submits itself, which finds geak-loop" \
	"^exec '$stage/opt/geak/bin/geak-slurm' element" "$out"
# The harness's Python is written down where an installed geak-eval looks.
check_same "make install wrote down the harness's Python" "$GEAK_PYTHON" \
	"$(cat "$stage/opt/geak/share/geak/harness-python" 2>/dev/null)"
if have_python; then
	env -u GEAK_PYTHON GEAK_SHAREDIR="$stage/opt/geak/share/geak" \
		"$stage/opt/geak/bin/geak-eval" --check --cpu > check.out 2>&1
	check_same "installed geak-eval --check: the harness works" 0 $?
	check_match "... with the Python make install found" \
		"^python: $GEAK_PYTHON \(as make install found it\)" "$(cat check.out)"
else
	skip "no Python with torch and triton"
	skip "no Python with torch and triton"
fi
done_testing
