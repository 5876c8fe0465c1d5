#!/bin/sh
# make install: tools, data, man pages where PREFIX and DESTDIR say, and
# an installed tool finds its data without help.
. "$(dirname "$0")/lib.sh"
plan 8
stage=$scratch/stage
# A private copy of the tree, so the build here does not disturb the
# one the other tests use.
mkdir src && (cd "$top" && git ls-files -z | xargs -0 tar cf -) | (cd src && tar xf -) ||
	{ not_ok "copy of the tree"; done_testing; }
if make -s -C src install PREFIX=/opt/geak DESTDIR="$stage" >build.log 2>&1; then
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
check "the loop drivers installed as commands" test -x "$stage/opt/geak/bin/geak-loop" -a \
	-x "$stage/opt/geak/bin/geak-parallel" -a -x "$stage/opt/geak/bin/geak-slurm" -a \
	-f "$stage/opt/geak/share/man/man1/geak-slurm.1"
out=$("$stage/opt/geak/bin/geak-slurm" runs --dry-run -R 2 -o out t.jsonl 2>&1)
check_match "installed geak-slurm submits itself, which finds geak-loop" \
	"^exec '$stage/opt/geak/bin/geak-slurm' element" "$out"
done_testing
