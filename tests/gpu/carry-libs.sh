#!/bin/sh
# Shared libraries carried to a machine that lacks some: of the libraries
# in FROM (a tool's missing one and its dependencies), those this machine
# does not have go into INTO, until nothing that ROOT needs is missing.
# Prints INTO, for LD_LIBRARY_PATH; the machine's own copies stay first
# for everything it has.
#
#   tests/gpu/carry-libs.sh ROOT.so FROM INTO
set -u
[ $# -eq 3 ] || { echo "usage: $0 ROOT.so FROM INTO" >&2; exit 2; }
root=$1 from=$2 into=$3
mkdir -p "$into" || exit 3
cp -L "$root" "$into/" || exit 3
for _ in 1 2 3 4 5 6 7 8; do
	missing=$(LD_LIBRARY_PATH=$into ldd "$into"/*.so* 2>/dev/null | awk '/not found/ { print $1 }' | sort -u)
	[ -n "$missing" ] || break
	for lib in $missing; do
		[ -r "$from/$lib" ] || { echo "carry-libs: $lib is neither here nor in $from" >&2; exit 1; }
		cp -L "$from/$lib" "$into/"
	done
done
echo "$into"
