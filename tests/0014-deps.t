#!/bin/sh
# make deps picks the torch build for the machine's GPU, without a GPU:
# share/setup/deps.sh in its dry run (DEPS_DRY_RUN=1: the choice and the
# commands it would run, nothing changed) on stand-in nvidia-smi,
# rocminfo, /proc, /dev and /opt/rocm (DEPS_ROOT), and stand-in Pythons
# whose torch does or does not use a GPU.
. "$(dirname "$0")/lib.sh"
real_python=$(command -v python3) || skip_all "no python3"
plan 26

deps=$top/share/setup/deps.sh
req=$top/share/harness/requirements.txt
mkdir bin sys v
# Stand-ins: nvidia-smi and rocminfo answer as FAKE_SMI and FAKE_ROCMINFO
# say (empty: as on a machine whose driver is not loaded).
cat > bin/nvidia-smi <<'EOF'
#!/bin/sh
[ -n "${FAKE_SMI:-}" ] || { echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."; exit 9; }
printf '%s\n' "$FAKE_SMI"
EOF
cat > bin/rocminfo <<'EOF'
#!/bin/sh
[ -n "${FAKE_ROCMINFO:-}" ] || { echo "ROCk module is NOT loaded"; exit 1; }
printf '%s\n' "$FAKE_ROCMINFO"
EOF
# A Python whose torch is as FAKE_PROBE says (deps.sh's probe line), a
# venv when FAKE_SITE names its packages; anything else runs python3.
cat > bin/python-fake <<EOF
#!/bin/sh
case "\$*" in
*torch.version*) echo "\$FAKE_PROBE" ;;
*base_prefix*) [ -n "\${FAKE_SITE:-}" ] && echo "\$FAKE_SITE" ;;
*) exec "$real_python" "\$@" ;;
esac
EOF
chmod +x bin/*
PATH=$scratch/bin:$PATH
FAKE_SMI= FAKE_ROCMINFO= FAKE_PROBE='- 0 - - - -' FAKE_SITE=
export PATH FAKE_SMI FAKE_ROCMINFO FAKE_PROBE FAKE_SITE
unset GEAK_PYTHON TORCH TORCH_INDEX ROCM_PATH

# deps ARGS...: a dry run, ARGS as environment, on the stand-in machine.
deps() {
	env DEPS_DRY_RUN=1 DEPS_ROOT="$scratch/sys" GEAK_VENV="$scratch/v/env" PYTHON=python-fake "$@" \
		sh "$deps" > out 2>&1
}
v=$scratch/v/env

# No GPU: the CPU build, requirements.txt as pinned, as ever.
deps
check_same "no GPU: exit 0" 0 $?
check_same "... the CPU build, requirements.txt as pinned, and why" \
	"deps: torch: the CPU build (no GPU found by nvidia-smi, /proc/driver/nvidia, rocminfo or /dev/kfd)
deps: would run: python-fake -m venv $v
deps: would run: $v/bin/python -m pip install -q -r $req" "$(cat out)"

# NVIDIA, three ways.
FAKE_SMI='GPU 0: NVIDIA H200 (UUID: GPU-1f2e)
GPU 1: NVIDIA H200 (UUID: GPU-3c4d)' deps
check_same "nvidia-smi lists GPUs: exit 0" 0 $?
check_same "... a CUDA build from PyPI at the pinned version, numpy and pytest as pinned" \
	"deps: torch: a CUDA build (nvidia-smi lists 2 NVIDIA GPU(s))
deps: installing torch 2.13.0 for CUDA from PyPI (with the triton it requires), numpy==2.3.5 pytest==9.2.0
deps: would run: python-fake -m venv --clear $v
deps: would run: $v/bin/python -m pip install -q torch==2.13.0
deps: would run: $v/bin/python -m pip install -q numpy==2.3.5 pytest==9.2.0" "$(cat out)"
mkdir -p sys/proc/driver/nvidia/gpus/0000:19:00.0
deps
check_match "/proc/driver/nvidia with a GPU (nvidia-smi failing): CUDA" \
	'^deps: torch: a CUDA build \(.*/sys/proc/driver/nvidia lists an NVIDIA GPU\)$' "$(head -n 1 out)"
deps TORCH=cpu
check_match "TORCH=cpu there: the CPU build" '^deps: torch: the CPU build \(TORCH=cpu\)$' "$(head -n 1 out)"
check_same "... requirements.txt as pinned" "deps: would run: $v/bin/python -m pip install -q -r $req" \
	"$(tail -n 1 out)"
rm -r sys/proc
if ldconfig -p 2>/dev/null | grep -q '[[:space:]]libcuda.so.1 '; then
	mkdir sys/dev && touch sys/dev/nvidiactl
	deps
	check_match "/dev/nvidiactl and libcuda.so.1: CUDA" 'a CUDA build \(.*/dev/nvidiactl and libcuda.so.1\)' "$(head -n 1 out)"
	rm -r sys/dev
else
	skip "no libcuda.so.1 here"
fi

# AMD: rocminfo's agents, the ROCm version for the index.
mkdir -p sys/opt/rocm/.info
echo 6.4.1-120 > sys/opt/rocm/.info/version
# A loopback index, to be reached.
mkdir -p idx/whl/torch
echo '<a href="torch-2.13.0.whl">torch</a>' > idx/whl/torch/index.html
"$real_python" -c 'import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.HTTPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()' idx idx.port 2>/dev/null &
idx_pid=$!
trap 'kill $idx_pid 2>/dev/null; keep_scratch' EXIT
n=0
while [ ! -s idx.port ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
index=http://127.0.0.1:$(cat idx.port)/whl
gfx='*******
Agent 2
*******
  Name:                    gfx942
  Marketing Name:          AMD Instinct MI300X'
FAKE_ROCMINFO=$gfx deps TORCH_INDEX="$index"
check_same "rocminfo lists a gfx agent: exit 0" 0 $?
check_same "... a ROCm build from the index named, then numpy and pytest from PyPI" \
	"deps: torch: a ROCm build (rocminfo lists an AMD GPU (gfx942))
deps: installing torch 2.13.0 for ROCm from $index (with the triton it requires), numpy==2.3.5 pytest==9.2.0
deps: would run: python-fake -m venv --clear $v
deps: would run: $v/bin/python -m pip install -q --index-url $index torch==2.13.0
deps: would run: $v/bin/python -m pip install -q numpy==2.3.5 pytest==9.2.0" "$(cat out)"
# Unnamed, the index is PyTorch's for the ROCm installed: reached from a
# machine with network, else the commands to run where it is.
FAKE_ROCMINFO=$gfx deps
check_match "unnamed, the index is PyTorch's for ROCm 6.4 (reached, or said to run where it is)" \
	'(would run: .* --index-url https://download.pytorch.org/whl/rocm6.4 torch==2.13.0|https://download.pytorch.org/whl/rocm6.4 cannot be reached from here)' \
	"$(cat out)"
mkdir sys/dev && touch sys/dev/kfd
deps TORCH_INDEX="$index"
check_match "/dev/kfd and /opt/rocm (rocminfo failing): ROCm" '^deps: torch: a ROCm build \(.*/dev/kfd and ROCm\)$' \
	"$(head -n 1 out)"
deps TORCH=cuda
check_match "TORCH=cuda there: CUDA" '^deps: torch: a CUDA build \(TORCH=cuda\)$' "$(head -n 1 out)"
rm -r sys/dev

# What cannot be installed says what to do instead.
rm sys/opt/rocm/.info/version
deps TORCH=rocm
check_same "TORCH=rocm, no ROCm version known: exit 1" 1 $?
check_same "... names the setting to give, and the other ways" \
	"deps: torch: a ROCm build (TORCH=rocm)
deps: no ROCm version found in $scratch/sys/opt/rocm/.info/version: name the index of torch for this machine's ROCm
deps:   make deps TORCH=rocm TORCH_INDEX=https://download.pytorch.org/whl/rocmX.Y
deps: or take a Python whose torch already uses the GPU: GEAK_PYTHON=/path/to/python make deps
deps: or evaluate on the CPU: make deps TORCH=cpu (then geak-eval --cpu)" "$(cat out)"
deps TORCH=cuda TORCH_INDEX=http://127.0.0.1:9/whl/cu128
check_same "an index that cannot be reached: exit 1, nothing run" "1 0" "$? $(grep -c 'would run' out)"
check_same "... the exact commands to run where it can be" \
	"deps: http://127.0.0.1:9/whl/cu128 cannot be reached from here: where it can, run
deps:   python-fake -m venv --clear $v
deps:   $v/bin/python -m pip install --index-url http://127.0.0.1:9/whl/cu128 torch==2.13.0
deps:   $v/bin/python -m pip install numpy==2.3.5 pytest==9.2.0" "$(sed -n '2,5p' out)"
deps TORCH=gpu
check_same "TORCH=gpu: exit 2, what it takes" "2 deps: TORCH=gpu: want cuda, rocm, cpu or auto" "$? $(cat out)"

# A Python here whose torch uses the GPU: .venv on it, nothing installed.
export FAKE_SMI='GPU 0: NVIDIA H200 (UUID: GPU-1f2e)'
FAKE_PROBE='cuda 1 2.11.0+cu128 3.6.0 2.3.5 8.3.0' deps
check_same "a system torch that sees the GPU: exit 0" 0 $?
check_same "... .venv made on it, nothing installed, and said so" \
	"deps: torch: a CUDA build (nvidia-smi lists 1 NVIDIA GPU(s))
deps: using the torch of $scratch/bin/python-fake: torch 2.11.0+cu128 built for CUDA, sees 1 GPU(s), triton 3.6.0
deps: would run: $scratch/bin/python-fake -m venv --clear --system-site-packages $v
deps: nothing installed" "$(cat out)"
FAKE_PROBE='cuda 1 2.11.0+cu128 3.6.0 2.3.5 -' FAKE_SITE=/opt/tv/lib/python3.12/site-packages deps
check_match "one that is a venv: the new one is pointed at its packages" \
	"would write $v's geak-base.pth: /opt/tv/lib/python3.12/site-packages" "$(cat out)"
check_same "... and only what it lacks is installed, as pinned" \
	"deps: would run: $v/bin/python -m pip install -q pytest==9.2.0" "$(tail -n 1 out)"
FAKE_PROBE='cpu 0 2.13.0+cpu 3.6.0 2.3.5 9.2.0' deps GEAK_PYTHON=python-fake
check_match "a CPU torch is passed over, said why, and torch installed" \
	"not $scratch/bin/python-fake: its torch 2.13.0\\+cpu is built for the CPU and sees 0 GPU.*would run: $v/bin/python -m pip install -q torch==2.13.0" \
	"$(tr '\n' ' ' < out)"
FAKE_PROBE='rocm 1 2.9.1+rocm6.4 3.5.1 2.3.5 9.2.0' deps
check_match "a ROCm torch on an NVIDIA machine is passed over" \
	"not $scratch/bin/python-fake: its torch 2.9.1\\+rocm6.4 is built for ROCm" "$(cat out)"

# make deps passes its settings on.
(cd "$top" && env DEPS_DRY_RUN=1 DEPS_ROOT="$scratch/sys" GEAK_VENV="$scratch/v/env" PYTHON=python-fake \
	make -s deps TORCH=rocm TORCH_INDEX="$index") > out 2>&1
check_same "make deps TORCH=rocm TORCH_INDEX=...: exit 0" 0 $?
check_match "... both reach deps.sh" "^deps: torch: a ROCm build \\(TORCH=rocm\\).*--index-url $index torch==" \
	"$(tr '\n' ' ' < out)"
done_testing
