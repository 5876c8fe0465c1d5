#!/bin/sh
# The code's layout has no circles: no two files of lib/ and bin/ include
# each other's headers (a file and its header count as one), no two
# folders (lib/ itself, lib/eval, lib/llm, ..., bin) do, and no two of
# lib/'s object files call each other's functions.  The edges between
# folders are printed.
. "$(dirname "$0")/lib.sh"
command -v tsort >/dev/null || skip_all "no tsort"
plan 5

cd "$top" || exit 1

# "FROM TO" for each #include "TO.h" of FROM.c or FROM.h, by path
# without the extension; a file's own header is no edge.
include_edges() {
	for f in lib/*.[ch] lib/*/*.[ch] bin/*.c; do
		sed -n 's/^#include "\(.*\)\.h".*/\1/p' "$f" | while read -r inc; do
			[ "lib/$inc" = "${f%.*}" ] || echo "${f%.*} lib/$inc"
		done
	done | sort -u
}

# The same between files of code: a header with no .c of its own (the
# declarations a sub-library's files share) is no node; what it includes
# is included by the files that include it.
file_edges() {
	include_edges | awk -v code="$(ls lib/*.c lib/*/*.c bin/*.c | sed 's/\.c$//')" '
		BEGIN { n = split(code, c, "\n"); for (i = 1; i <= n; i++) has[c[i]] = 1 }
		{ adj[$1] = adj[$1] " " $2 }
		function reach(from, m,    k, t, i) {
			k = split(adj[m], t, " ")
			for (i = 1; i <= k; i++) {
				if (seen[from, t[i]]++)
					continue
				if (t[i] in has) {
					if (t[i] != from)
						print from, t[i]
				} else
					reach(from, t[i])
			}
		}
		END { for (m in has) reach(m, m) }' | sort -u
}

# The folder of each end; the edges that cross from one to another.
folder_edges() {
	awk '{ sub(/\/[^\/]*$/, "", $1); sub(/\/[^\/]*$/, "", $2); if ($1 != $2) print $1, $2 }' |
		sort -u
}

# The files or folders on a circle of the edges on stdin, one a line
# (none: there is no circle).
circles() {
	tsort 2>&1 >/dev/null | sed -n 's/^tsort: \([^:]*\)$/\1/p' | sort -u
}

file_edges > "$scratch/files"
folder_edges < "$scratch/files" > "$scratch/folders"
check_same "the include graph of lib/ and bin/ has no circle of files" "" \
	"$(circles < "$scratch/files")"
check_same "the include graph has no circle of folders" "" "$(circles < "$scratch/folders")"
# The layout these edges should keep: every sub-library and tool on top
# of the core, none under it.
check_same "lib/ itself includes no sub-library's header" "" "$(awk '$1 == "lib"' "$scratch/folders")"
echo "# include edges between folders (from -> to):"
sed 's/ / -> /; s/^/#   /' "$scratch/folders"

# The calls: the object file that defines each function another uses.
objs=
for c in lib/*.c lib/*/*.c; do
	objs="$objs ${c%.c}.o"
done
missing=
for o in $objs; do
	[ -f "$o" ] || missing=$o
done
if [ -n "$missing" ]; then
	skip "no $missing: build first (make)"
	skip "no $missing: build first (make)"
else
	for o in $objs; do
		nm -g --defined-only "$o" | awk -v o="$o" 'NF == 3 && $2 != "U" { print "D", $3, o }'
		nm -u "$o" | awk -v o="$o" '{ print "U", $2, o }'
	done | awk '$1 == "D" { def[$2] = $3 }
		$1 == "U" { n++; sym[n] = $2; user[n] = $3 }
		END { for (i = 1; i <= n; i++)
			if ((sym[i] in def) && def[sym[i]] != user[i]) print user[i], def[sym[i]] }' |
		sort -u > "$scratch/calls"
	check "the call graph of lib/'s object files has edges" test -s "$scratch/calls"
	check_same "the call graph of lib/'s object files has no circle" "" \
		"$(circles < "$scratch/calls")"
fi
done_testing
