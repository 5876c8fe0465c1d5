#!/bin/sh
# A stand-in for NVIDIA's ncu, for the counters tests on a machine without
# a GPU: it takes the options geakh/counters.py gives, runs the target,
# and writes a "report" naming the kernels the target says it launched;
# with --import it prints that report as ncu's details page does in CSV
# (one row a metric of a launch, two launches a kernel, numbers with
# thousands separators, units as --print-units base prints them).
# FAKE_NCU_FAIL=TEXT: say TEXT on stderr and exit 1 instead;
# FAKE_NCU_HANG=S: run sleep S (a child of its own) before the target.
set -u
if [ -n "${FAKE_NCU_FAIL:-}" ]; then
	echo "==ERROR== $FAKE_NCU_FAIL" >&2
	exit 1
fi
case ${1:-} in
--version)
	printf 'NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 0.0.0 (stand-in)\n'
	exit 0 ;;
--import)
	rep=$2
	echo '==PROF== Connected to process (stand-in)'
	echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
	id=0
	while read -r name; do
		for launch in 1 2; do
			row() { printf '"%s","1","python3","host","%s","1","7","(128, 1, 1)","(64, 1, 1)","0","9.0","%s","%s","%s","%s"\n' \
				"$id" "$name" "$1" "$2" "$3" "$4"; }
			row "GPU Speed Of Light Throughput" "Duration" "nsecond" "$((1000 * launch)),500"
			row "GPU Speed Of Light Throughput" "Compute (SM) Throughput" "%" "12.5"
			row "GPU Speed Of Light Throughput" "Memory Throughput" "%" "88"
			row "GPU Speed Of Light Throughput" "DRAM Throughput" "%" "85"
			row "Memory Workload Analysis" "Memory Throughput" "byte/second" "3,200,000,000,000"
			row "Memory Workload Analysis" "L2 Hit Rate" "%" "40"
			row "Occupancy" "Achieved Occupancy" "%" "$((60 + 10 * launch))"
			row "Occupancy" "Theoretical Occupancy" "%" "100"
			row "Launch Statistics" "Registers Per Thread" "register/thread" "32"
			row "Launch Statistics" "Block Size" "" "128"
			id=$((id + 1))
		done
	done < "$rep"
	exit 0 ;;
esac
rep=
while [ $# -gt 0 ]; do
	case $1 in
	-o|--export) rep=$2; shift 2 ;;
	--section|--clock-control|--target-processes|--profile-from-start) shift 2 ;;
	-f|--force-overwrite) shift ;;
	-*) echo "==ERROR== stand-in: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -n "$rep" ] || { echo "==ERROR== stand-in: no -o" >&2; exit 2; }
[ -z "${FAKE_NCU_HANG:-}" ] || sleep "$FAKE_NCU_HANG"
"$@"
rc=$?
# The target's own account (counters/target.json): the kernels it launched.
sed -n 's/.*"kernels": \[\([^]]*\)\].*/\1/p' target.json 2>/dev/null | tr ',' '\n' |
	sed 's/^ *"//; s/"$//' | grep . > "$rep.ncu-rep"
exit $rc
