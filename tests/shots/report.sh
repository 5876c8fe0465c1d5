#!/bin/sh
# Screenshots of geak-select's report as a reader opens it, in headless
# Chromium: the 215-task page and the 3-task CPU page that
# tests/0613-report.t makes and checks (both suites imported, every kind
# of outcome, and three tasks evaluated on the CPU).  Needs the benchmark
# archive in ../shared/bench and chromium (Debian's package).
#
#   sh tests/shots/report.sh OUT_DIR
#
# OUT_DIR gets big.html, small.html, big.png and small.png.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "$0: no chromium: apt-get install chromium" >&2; exit 3; }
GEAK_TEST_KEEP=$out/pages prove "$top/tests/0613-report.t" >&2
cp "$out/pages/big.html" "$out/pages/small.html" "$out/"
rm -rf "$out/pages"
# shot PAGE HEIGHT: PAGE.html as a 1280-pixel-wide window shows it.
shot() {
	"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size="1280,$2" --screenshot="$out/$1.png" "file://$out/$1.html" 2>/dev/null
	ls -l "$out/$1.png"
}
shot big 4000
shot small 1400
