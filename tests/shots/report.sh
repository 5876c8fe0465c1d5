#!/bin/sh
# Screenshots of geak-select's pages as a reader opens them, in headless
# Chromium: the 215-task page and the 3-task CPU page that
# tests/0613-report.t makes and checks (both suites imported, every kind
# of outcome, and three tasks evaluated on the CPU), the 3-task page of
# tests/0615-report-kernels.t with its best kernel's section open, and
# its comparison of two runs.  Needs the benchmark archive in
# ../shared/bench and chromium (Debian's package).
#
#   sh tests/shots/report.sh OUT_DIR
#
# OUT_DIR gets big.html, small.html, kernels.html, compare.html and a PNG
# of each (big-tasks.png: the 215-task page further down, at its tasks).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "$0: no chromium: apt-get install chromium" >&2; exit 3; }
GEAK_TEST_KEEP=$out/pages prove "$top/tests/0613-report.t" "$top/tests/0615-report-kernels.t" >&2
cp "$out/pages/big.html" "$out/pages/small.html" "$out/"
cp "$out/pages/cmp.html" "$out/compare.html"
# The best kernel's section open, as a click on its row opens it.
sed 's/<details class="task" id="k-4">/<details class="task" id="k-4" open>/' \
	"$out/pages/a.html" > "$out/kernels.html"
rm -rf "$out/pages"
# shot NAME PAGE HEIGHT [FRAGMENT]: PAGE.html as a 1280-pixel-wide window
# shows it; a fragment's folded section opens and comes to the top.
shot() {
	"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size="1280,$3" --screenshot="$out/$1.png" "file://$out/$2.html${4:+#$4}" 2>/dev/null
	ls -l "$out/$1.png"
}
shot big big 4000
shot small small 1400
shot kernels kernels 3000
shot compare compare 2000
