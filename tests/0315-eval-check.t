#!/bin/sh
# geak-eval --check, and a harness that cannot start: a Python without
# numpy, a CPU build of torch given a GPU, a Python that is not there.
# The run says what is wrong once, in those terms, and exits 3 instead
# of failing every candidate; --check says what it finds, the GPUs the
# runtimes list (stand-in CUDA libraries here) against those torch sees.
. "$(dirname "$0")/lib.sh"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
command -v jq >/dev/null || skip_all "no jq"
plan 36

cpu_torch=$("$GEAK_PYTHON" -c 'import torch; print(int(not torch.version.cuda and not torch.version.hip))')
add_kernel_file mine.py
for i in 1 2 3; do
	jq -nc --rawfile c mine.py --arg i "$i" '{id: ("plain/add" + $i), code: $c, task: {suite: "plain",
		name: "add", reference: "import torch\ndef add(x, y):\n    return x + y\n",
		test: "import torch\ndef inputs():\n    return [(torch.randn(300, device=\"cuda\"), torch.randn(300, device=\"cuda\"))]\n"}}'
done > three.jsonl

# A good set-up.
geak-eval --check --cpu > good.out 2> good.err
check_same "--check --cpu: exit 0, nothing on stderr" "0 " "$? $(cat good.err)"
check_match "it names the Python and why that one" '^python: .* \(\$GEAK_PYTHON\), Python [0-9.]+$' "$(cat good.out)"
check_match "torch, Triton and numpy with their versions" \
	'torch: [0-9.]+.*triton: [0-9.]+.*numpy: [0-9.]+' "$(tr '\n' ' ' < good.out)"
check_match "where it evaluates, and why" '^evaluating on: the CPU, under Triton.s interpreter \(--cpu\)' "$(cat good.out)"
check_match "the harness started, its version" '^worker: started in [0-9.]+ s, harness h1-' "$(cat good.out)"
check_same "the verdict last" "ok: the harness starts and evaluates on the CPU" "$(tail -n 1 good.out)"

# The GPUs the runtimes list (two stand-in NVIDIA devices) against those
# torch sees.
cc=${CC:-cc}
mkdir fake
if [ "$cpu_torch" = 1 ] && $cc -shared -fPIC -o fake/libcuda.so.1 "$top/tests/gpu/fake-cuda.c" 2>/dev/null; then
	LD_LIBRARY_PATH=$scratch/fake ROCM_PATH=/nonexistent geak-eval --check > seen.out 2>&1
	check_same "GPUs found but a CPU build of torch: exit 1" 1 $?
	check_match "the runtimes' GPUs, and torch's none" \
		'GPUs listed \(--list-gpus\): 0 NVIDIA H100 80GB HBM3, 1 NVIDIA H100 80GB HBM3.*GPUs torch sees: none' \
		"$(tr '\n' ' ' < seen.out)"
	check_match "... and what to do: make deps for CUDA, or pip from the index for the driver" \
		'^FAILED: GPU 0 cannot be used: the torch of .* is a CPU build; for its NVIDIA GPUs run `make deps TORCH=cuda` in geak.s source tree .*-m pip install --force-reinstall torch==[0-9.]+ --index-url https://download.pytorch.org/whl/cu124; or evaluate on the CPU with --cpu$' \
		"$(cat seen.out)"
	if command -v ncu > /dev/null || [ -x /usr/local/cuda/bin/ncu ]; then
		skip "an ncu is installed here"
	else
		check_same "with a GPU: what --profile would read the counters with (nothing here)" \
			"counters (--profile): none (no hardware counters: no ncu in PATH or /usr/local/cuda/bin (--ncu PATH))" \
			"$(grep '^counters' seen.out)"
	fi
	LD_LIBRARY_PATH=$scratch/fake ROCM_PATH=/nonexistent geak-eval --check \
		--ncu "$top/tests/helpers/fake-ncu.sh" > ncu.out 2>&1
	check_same "... and with --ncu, that one" "counters (--profile): ncu $top/tests/helpers/fake-ncu.sh" \
		"$(grep '^counters' ncu.out)"
else
	skip "torch is not a CPU build, or no C compiler"
	skip "torch is not a CPU build, or no C compiler"
	skip "torch is not a CPU build, or no C compiler"
	skip "torch is not a CPU build, or no C compiler"
	skip "torch is not a CPU build, or no C compiler"
fi

# A torch built for the other vendor's GPUs: a stand-in Python answers
# the probe as a ROCm build on the NVIDIA machine, as a CUDA build on an
# AMD one (a stand-in libamdhip64 alone), and as a CPU build there.
fake_python() { # NAME TORCH-FIELDS
	printf '#!/bin/sh\necho %s\n' "'{\"python\": \"3.12.3\", \"numpy\": {\"version\": \"2.3.5\"}, \"triton\": {\"version\": \"3.6.0\"}, \"torch\": {$2, \"gpus\": []}}'" > "$1"
	chmod +x "$1"
}
fake_python rocm-py '"version": "2.9.1+rocm6.4", "cuda": null, "hip": "6.4.43482"'
fake_python cuda-py '"version": "2.11.0+cu128", "cuda": "12.8", "hip": null'
fake_python cpu-py '"version": "2.13.0+cpu", "cuda": null, "hip": null'
mkdir amd
if [ -r fake/libcuda.so.1 ] && $cc -shared -fPIC -o amd/libamdhip64.so "$top/tests/gpu/fake-hip.c" 2>/dev/null; then
	LD_LIBRARY_PATH=$scratch/fake ROCM_PATH=/nonexistent geak-eval --check --python ./rocm-py > rocm.out 2>&1
	check_same "a ROCm build of torch on NVIDIA GPUs: exit 1" 1 $?
	check_match "... says which build meets which GPU, and the fix for NVIDIA" \
		'^FAILED: GPU 0 cannot be used: it is an NVIDIA GPU and the torch of .*/rocm-py \(--python, 2.9.1\+rocm6.4\) is built for ROCm 6.4.43482; for its NVIDIA GPUs run `make deps TORCH=cuda` .*then leave out --python.* --force-reinstall torch==2.9.1 --index-url https://download.pytorch.org/whl/cu124;' \
		"$(cat rocm.out)"
	LD_LIBRARY_PATH=$scratch/amd geak-eval --check --python ./cuda-py > cuda.out 2>&1
	check_match "a CUDA build on AMD GPUs: make deps TORCH=rocm, the index for the HIP runtime" \
		'^FAILED: GPU 0 cannot be used: it is an AMD GPU and the torch of .* is built for CUDA 12.8; for its AMD GPUs run `make deps TORCH=rocm` .* --index-url https://download.pytorch.org/whl/rocm6.2;' \
		"$(cat cuda.out)"
	LD_LIBRARY_PATH=$scratch/amd geak-eval --check --python ./cpu-py > cpu-amd.out 2>&1
	check_match "a CPU build on AMD GPUs: the same fix" \
		'is a CPU build; for its AMD GPUs run `make deps TORCH=rocm` .* --force-reinstall torch==2.13.0 --index-url https://download.pytorch.org/whl/rocm6.2;' \
		"$(cat cpu-amd.out)"
	LD_LIBRARY_PATH=$scratch/fake ROCM_PATH=/nonexistent geak-eval --check --python ./cuda-py > fit.out 2>&1
	check_same "a CUDA build on NVIDIA GPUs is no mismatch: it is started (and here sees none)" \
		"" "$(grep 'is built for' fit.out)"
else
	for i in 1 2 3 4 5; do skip "no C compiler for the stand-in runtimes"; done
fi

# SIGTERM while it waits for input, after the GPU runtime started a thread
# of its own: the clean-up still runs (the run directory goes).
if [ -r fake/libcuda.so.1 ]; then
	mkdir term
	mkfifo fifo
	LD_LIBRARY_PATH=$scratch/fake ROCM_PATH=/nonexistent FAKE_CUDA_THREAD=1 \
		geak-eval --gpus 0 --no-cache --tmpdir term < fifo > /dev/null 2> term.err &
	pid=$!
	exec 3> fifo
	n=0
	while [ -z "$(ls term)" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
	check_same "a GPU runtime's thread: geak-eval made its run directory" 1 "$(ls term | grep -c .)"
	sleep 0.5
	kill -TERM $pid
	wait $pid 2>/dev/null
	check_same "... and on SIGTERM ends by it, its run directory gone" "143 " "$? $(ls term)"
	exec 3>&-
else
	skip "no stand-in libcuda"
	skip "no stand-in libcuda"
fi

if [ "$cpu_torch" = 1 ]; then
	geak-eval --check --gpus 0 > cpu.out 2> cpu.err
	check_same "--check, a CPU build of torch given --gpus 0: exit 1" 1 $?
	check_match "... says so in those words" \
		'^FAILED: GPU 0 cannot be used: the torch of .* \(\$GEAK_PYTHON, [^)]*\) is a CPU build' "$(cat cpu.out)"
	geak-eval --gpus 0 three.jsonl > run.out 2> run.err
	check_same "a run so: exit 3, no records" "3 0" "$? $(grep -c . run.out)"
	check_same "... the reason said once, not per candidate" 1 "$(grep -c 'is a CPU build' run.err)"
	check_same "... and no reference blamed" "" "$(grep 'Torch not compiled' run.err)"
else
	for i in 1 2 3 4 5; do skip "torch is not a CPU build"; done
fi

# A Python without numpy (nor torch, nor triton).
if python3 -m venv --without-pip bare > /dev/null 2>&1 && ! bare/bin/python -c 'import numpy' 2>/dev/null; then
	geak-eval --check --cpu --python bare/bin/python > bare.out 2> bare.err
	check_same "--check, a Python without numpy: exit 1" 1 $?
	check_match "each module said missing, numpy too" \
		"numpy: missing \\(ModuleNotFoundError: No module named 'numpy'\\)" "$(cat bare.out)"
	check_match "... and what to do" \
		'^FAILED: .*/bare/bin/python \(--python\) cannot import numpy, torch and triton: name a Python that has' \
		"$(cat bare.out)"
	geak-eval --cpu --python bare/bin/python three.jsonl > brun.out 2> brun.err
	check_same "a run so: exit 3, no records" "3 0" "$? $(grep -c . brun.out)"
	check_same "... one message, not a traceback per record" "1 0" \
		"$(grep -c 'cannot import numpy' brun.err) $(grep -c Traceback brun.err)"
	check_match "... which names the Python and the fix" \
		"the harness's Python, .*/bare/bin/python \\(--python\\), cannot import numpy: name a Python" "$(cat brun.err)"
else
	for i in 1 2 3 4 5 6; do skip "no python3 -m venv"; done
fi

geak-eval --cpu --python "$scratch/no-such-python" three.jsonl > none.out 2> none.err
check_same "a Python that is not there: exit 3" 3 $?
check_match "... said so" "no-such-python \\(--python\\), cannot be run \\(No such file or directory\\)" "$(cat none.err)"

# No GPU found: it says it falls back to the CPU.
if [ "$(geak-eval --list-gpus 2>/dev/null | jq length)" = 0 ]; then
	geak-eval three.jsonl > auto.out 2> auto.err
	check_same "no GPU: every candidate evaluated" "0 3" "$? $(jq -r .eval.exec auto.out | grep -c true)"
	check_match "... saying it runs on the CPU" "no GPU found \\(geak-eval --list-gpus\\): evaluating on the CPU" "$(cat auto.err)"
	geak-eval --check > auto.out 2>&1
	check_match "--check says why the CPU" "^evaluating on: the CPU, under Triton's interpreter \\(no GPU found\\)" "$(cat auto.out)"
else
	for i in 1 2 3; do skip "this machine has a GPU"; done
fi

mkdir ncutmp
geak-eval --cpu --ncu ./no-such-ncu --tmpdir ncutmp three.jsonl > ncu-bad.out 2> ncu-bad.err
check_same "--ncu that is not a program: exit 2, said so, no record, no run directory left" \
	"2 geak-eval: --ncu: ./no-such-ncu is not an executable 0 " \
	"$? $(cat ncu-bad.err) $(grep -c . ncu-bad.out) $(ls ncutmp)"
geak-eval --cpu --cache /proc/no/such --tmpdir ncutmp three.jsonl > cache-bad.out 2> cache-bad.err
check_same "a run that fails once its run directory is made: exit 3, said so, the directory gone" \
	"3 geak-eval: /proc/no/such: No such file or directory " "$? $(cat cache-bad.err) $(ls ncutmp)"
done_testing
