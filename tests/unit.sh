# tests/unit.sh: run one cmocka unit test as TAP.  A wrapper
# tests/NNNN-unit-NAME.t sets unit=NAME and sources this file.
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/tests/unit/$unit
if [ ! -x "$bin" ]; then
	echo "1..1"
	echo "not ok 1 - $unit is not built (run make units)"
	exit 1
fi
CMOCKA_MESSAGE_OUTPUT=TAP
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=99}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=98}
export CMOCKA_MESSAGE_OUTPUT ASAN_OPTIONS UBSAN_OPTIONS
log=$(mktemp "${TMPDIR:-/tmp}/geak-unit.XXXXXX")
"$bin" >"$log" 2>&1
status=$?
# Warnings that the code under test prints on purpose become TAP comments.
sed 's/^\([a-z][a-z-]*: \)/# \1/' "$log"
rm -f "$log"
exit $status
