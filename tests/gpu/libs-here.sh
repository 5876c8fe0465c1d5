#!/bin/sh
# tests/gpu/libs-here.sh INTO CANDIDATES: copies into INTO each library of
# CANDIDATES that this machine's loader does not know, so that tools
# built elsewhere (geak-import and geak-retrieve need libarchive) run here
# with LD_LIBRARY_PATH=INTO while the machine's own libraries stay first
# for everything it has.  Prints what it copied.
set -u
[ $# -eq 2 ] || { echo "usage: $0 INTO CANDIDATES" >&2; exit 2; }
mkdir -p "$1" || exit 1
for f in "$2"/*; do
	name=${f##*/}
	ldconfig -p | grep -qE "[[:space:]]$name[[:space:]]" && continue
	cp "$f" "$1/" && echo "libs-here: $name"
done
