#!/bin/sh
# GPU discovery: the real runtimes where there are any, then stand-in
# libcuda.so.1 and libamdhip64.so libraries built here, loaded through
# LD_LIBRARY_PATH exactly as the real ones would be.
. "$(dirname "$0")/lib.sh"
plan 12

out=$(gpu-list)
check_match "this machine's answer is a JSON array" '^\[.*\]$' "$out"

cc=${CC:-cc}
mkdir fake
if ! $cc -shared -fPIC -o fake/libcuda.so.1 "$top/tests/gpu/fake-cuda.c" ||
   ! $cc -shared -fPIC -o fake/libamdhip64.so "$top/tests/gpu/fake-hip.c"; then
	for i in 2 3 4 5 6 7 8 9 10 11 12; do skip "no C compiler for the stand-ins"; done
	done_testing
fi
run() { LD_LIBRARY_PATH="$scratch/fake" gpu-list; }

out=$(run | jq -c '[.[] | [.vendor, .name, .arch, .compute_units, .warp_size]]')
check_same "both vendors, AMD first" \
	'[["amd","AMD Instinct MI300X","gfx942",304,64],["nvidia","NVIDIA H100 80GB HBM3","sm_90",132,32],["nvidia","NVIDIA H100 80GB HBM3","sm_90",132,32]]' "$out"
out=$(run | jq -c '.[1] | [.memory_bytes, .l2_bytes, .clock_khz, .memory_bus_bits, .driver]')
check_same "NVIDIA sizes, clocks and driver" '[91268055040,52428800,1980000,5120,"cuda 12.4"]' "$out"
out=$(run | jq -c '.[0] | [.l2_bytes, .shared_bytes_per_cu, .driver, .memory_bus_bits]')
check_same "AMD sizes, driver, and null for what the runtime refuses" '[4194304,65536,"hip 6.2",null]' "$out"
out=$(run | jq -c '.[0] | keys_unsorted')
check_same "field order" '["index","vendor","name","arch","compute_units","memory_bytes","l2_bytes","warp_size","clock_khz","visible_index","shared_bytes_per_cu","memory_bus_bits","memory_clock_khz","driver"]' "$out"

out=$(CUDA_VISIBLE_DEVICES=3,1 run | jq -c '[.[] | select(.vendor == "nvidia") | [.index, .visible_index]]')
check_same "CUDA_VISIBLE_DEVICES maps visible to physical" '[[3,0],[1,1]]' "$out"
out=$(CUDA_VISIBLE_DEVICES=GPU-8a1b,1 run | jq -c '[.[] | select(.vendor == "nvidia") | .index]')
check_same "a UUID entry gives a null physical index" '[null,1]' "$out"
out=$(ROCR_VISIBLE_DEVICES=4,6 HIP_VISIBLE_DEVICES=1 run | jq -c '.[0].index')
check_same "HIP_VISIBLE_DEVICES selects among ROCR_VISIBLE_DEVICES" '6' "$out"

out=$(FAKE_CUDA_INIT=100 LD_LIBRARY_PATH="$scratch/fake" gpu-list | jq -c '[.[].vendor]')
check_same "no NVIDIA device is not an error" '["amd"]' "$out"
FAKE_CUDA_INIT=999 LD_LIBRARY_PATH="$scratch/fake" gpu-list >out 2>err
check_same "a failing driver is fatal" 3 $?
check_match "and says why" 'cuInit: CUDA_ERROR_UNKNOWN \(999\)' "$(cat err)"

rm fake/libamdhip64.so
out=$(FAKE_CUDA_INIT=100 LD_LIBRARY_PATH="$scratch/fake" ROCM_PATH=/nonexistent gpu-list)
if [ -e /opt/rocm/lib/libamdhip64.so ] || ldconfig -p 2>/dev/null | grep -q libamdhip64; then
	check_match "a machine with ROCm: still an array" '^\[' "$out"
else
	check_same "no runtime and no device: an empty array" '[]' "$out"
fi
done_testing
