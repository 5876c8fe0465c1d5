#!/bin/sh
# geak-import on the real benchmark archives in ../shared/bench: counts,
# validity, the separator split, signatures, --original-hip, filters,
# broken archives, zip archives and directories.
. "$(dirname "$0")/lib.sh"
bench=$top/../shared/bench
geak=$bench/geak-eval-data.tar.gz
thunlp=$bench/tritonbench-g-data.tar.gz
[ -r "$geak" ] && [ -r "$thunlp" ] || skip_all "no benchmark archives in $bench"
command -v jq >/dev/null || skip_all "no jq"
plan 48

# A data folder without bench/cpu-ok.txt, so that cpu_ok stays out.
mkdir share
GEAK_SHAREDIR=$scratch/share
export GEAK_SHAREDIR

geak-import "$geak" "$thunlp" > all.jsonl 2> all.err
check_same "both suites import without errors" 0 $?
check_same "no warnings" "" "$(cat all.err)"
check_same "215 records" 215 "$(wc -l < all.jsonl | tr -d ' ')"
check_same "184 tbg, 31 rocm" "184 tbg 31 rocm" \
	"$(jq -r .task.suite all.jsonl | sort -r | uniq -c | awk '{printf "%s%s %s", (NR > 1 ? " " : ""), $1, $2}')"
check_same "ids unique" "" "$(jq -r .id all.jsonl | sort | uniq -d)"
check_same "ids are suite/name" 0 \
	"$(jq -s '[.[] | select(.id != .task.suite + "/" + .task.name)] | length' all.jsonl)"
bad=$(jq -r 'select(.error or .schema != 1
	or (.task.reference | length) == 0 or (.task.test | length) == 0
	or (.task.instruction | length) == 0 or (.task.source | length) == 0
	or (.task.license | length) == 0 or (.task.signatures | length) == 0
	or (.task | has("cpu_ok")) or has("code")) | .id' all.jsonl)
check_same "every record valid" "" "$bad"
bad=$(jq -r 'select(.task.suite == "tbg" and ((.task.perf | length) == 0
	or (.task.difficulty | type) != "number" or (.task.repo | length) == 0
	or (.task.test | test("result_gold\\s*=") | not))) | .id' all.jsonl)
check_same "tbg records have perf, difficulty, repo, result_gold" "" "$bad"
bad=$(jq -r 'select(.task.suite == "rocm" and ((.task.test_autotune | length) == 0
	or (.task.target_kernels | length) == 0 or has("difficulty")
	or (.task.test | test("torch.save") | not))) | .id' all.jsonl)
check_same "rocm records have test_autotune, target_kernels, torch.save" "" "$bad"
check_same "tbg difficulty distribution" "1:3 2:27 3:65 4:84 5:5" \
	"$(jq -r 'select(.task.suite == "tbg") | .task.difficulty' all.jsonl | sort | uniq -c |
	awk '{printf "%s%s:%s", (NR > 1 ? " " : ""), $2, $1}')"
check_same "two target kernels split" '["randn_kernel_runtime_seed","randn_kernel_const_seed"]' \
	"$(jq -c 'select(.id == "rocm/test_randn") | .task.target_kernels' all.jsonl)"

# The separator: 27 ROCm files carry trailing blanks on it.
sep=$(printf '%146s' '' | tr ' ' '#')
check_same "no separator left in any reference or test" "" \
	"$(jq -r --arg s "$sep" 'select((.task.reference + .task.test + (.task.test_autotune // "")) | contains($s)) | .id' all.jsonl)"
src=GEAK-eval/geak_eval/data/ROCm/data/ROCm_v1/test_add_kernel.py
tar -xzOf "$geak" "$src" > add.py
line=$(grep -nE '^#{146}[[:space:]]+$' add.py | cut -d: -f1)
check_match "test_add_kernel's separator has trailing blanks" '^[0-9]+$' "$line"
check_same "test_add_kernel: reference is the part before it" \
	"$(head -n $((line - 1)) add.py)" \
	"$(jq -j 'select(.id == "rocm/test_add_kernel") | .task.reference' all.jsonl)"
check_same "test_add_kernel: test is the part after it" \
	"$(tail -n +$((line + 1)) add.py | sed '/./,$!d')" \
	"$(jq -j 'select(.id == "rocm/test_add_kernel") | .task.test' all.jsonl)"

# Signatures: a multi-line one from the data, and a made-up hard case
# read from a directory laid out like a checkout.
check_same "multi-line signature with annotated defaults" \
	'def iv_dependent_matmul_wrapper(M: int, K: int, N: int, BLOCK_SIZE_M: int, BLOCK_SIZE_N: int, BLOCK_SIZE_K: int, type: str = "pre_load", device: torch.device = "cuda")' \
	"$(jq -r 'select(.id == "tbg/iv_dependent_matmul") | .task.signatures[1]' all.jsonl)"
dir=checkout/geak_eval/data/TritonBench/data
mkdir -p "$dir/TritonBench_G_v1"
cat > "$dir/TritonBench_G_v1/tricky.py" <<EOF
import triton
doc = """
def not_a_function(x):
"""

@triton.jit
def kern(x_ptr,  # pointer (input)
         out_ptr, shape=(1, (2, 3)), name=')',
         BLOCK: tl.constexpr,
         ):
    pass

def wrap(x: torch.Tensor, fn=lambda t: t.sum(dim=(0,)), *, grid: Tuple[int, ...] = (1,)) -> torch.Tensor:
    return x
$sep
result_gold = {'a': wrap(1)}
EOF
cat > "$dir/TritonBench_G_v1/nosep.py" <<EOF
def f(x):
    return x
result_gold = f(1)
EOF
printf 'def f(x):\n    return x\n%s  \nprint(f(1))\n' "$sep" > "$dir/TritonBench_G_v1/nogold.py"
printf 'def f():\n    pass\n%s\nresult_gold = 1\n' "$sep" > "$dir/TritonBench_G_v1/noinstr.py"
cat > "$dir/TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json" <<'EOF'
[{"instruction": "Write kern.", "input": "", "output": "", "file": "tricky.py", "difficulty": "3"},
 {"instruction": "Write f.", "input": "", "output": "", "file": "nosep.py", "difficulty": "1"},
 {"instruction": "Write f.", "input": "", "output": "", "file": "nogold.py", "difficulty": "1"}]
EOF
geak-import checkout > dir.jsonl 2> dir.err
check_same "bad tasks: exit 1" 1 $?
check_same "tricky signatures parsed whole" \
	"def kern(x_ptr, out_ptr, shape=(1, (2, 3)), name=')', BLOCK: tl.constexpr)|def wrap(x: torch.Tensor, fn=lambda t: t.sum(dim=(0,)), *, grid: Tuple[int, ...] = (1,))" \
	"$(jq -r 'select(.id == "tbg/tricky") | .task.signatures | join("|")' dir.jsonl)"
check_same "bad tasks come out as bad_task records, not dropped" \
	"tbg/nogold:bad_task tbg/noinstr:bad_task tbg/nosep:bad_task tbg/tricky:ok" \
	"$(jq -r '.id + ":" + (.error.kind // "ok")' dir.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_match "each bad task named on stderr" 'nosep.py: no separator' "$(cat dir.err)"
check_same "--difficulty keeps a task whose difficulty is not known, with its error" \
	"tbg/nogold:bad_task tbg/noinstr:bad_task tbg/nosep:bad_task" \
	"$(geak-import --difficulty 1 checkout 2>/dev/null | jq -r '.id + ":" + (.error.kind // "ok")' | tr '\n' ' ' | sed 's/ $//')"

# --original-hip: exactly the 12 kernels that call AMD's device library.
twelve="fp4_to_bf16_conversion isfinite_kernel llama_ff_triton pow_scalar_tensor
quant_transpose_kernel quantize_global rbe_triton_transform rms_matmul_rbe
rms_rbe_matmul rmsnorm_triton rowwise_quantization_triton triton_linear_activation"
geak-import --suite tbg --original-hip "$thunlp" "$geak" > orig.jsonl
check_same "--original-hip: exit 0" 0 $?
check_same "--original-hip swaps the 12 hip-libdevice kernels" "$(echo $twelve)" \
	"$(jq -r 'select(.task.variant == "tritonbench-original") | .task.name' orig.jsonl | sort | tr '\n' ' ' | sed 's/ $//')"
check_same "no swapped reference calls hip libdevice" "" \
	"$(jq -r 'select(.task.variant and (.task.reference | contains("extra.hip"))) | .id' orig.jsonl)"
check_same "swapped kernels keep GEAK-eval's revised test" \
	"$(jq -r 'select(.id == "tbg/llama_ff_triton") | .task.test' all.jsonl)" \
	"$(jq -r 'select(.id == "tbg/llama_ff_triton") | .task.test' orig.jsonl)"
check_same "every other tbg record unchanged" 172 \
	"$(jq -s -c '.[] | del(.task.repo)' orig.jsonl > a; jq -s -c '.[] | select(.task.suite == "tbg") | del(.task.repo)' all.jsonl > b; sort a b | uniq -d | wc -l | tr -d ' ')"

# thunlp's archive alone: the original TritonBench-G as the tbg suite.
geak-import "$thunlp" > thunlp.jsonl 2> thunlp.err
status=$?
check_same "thunlp alone: 184 tbg records, exit 1" "184 1" "$(grep -c . thunlp.jsonl) $status"
check_same "thunlp alone: only llama_ff_triton is bad (no result_gold)" "tbg/llama_ff_triton" \
	"$(jq -r 'select(.error) | .id' thunlp.jsonl)"
check_same "thunlp alone: same instructions and difficulties as GEAK-eval's" "" \
	"$(jq -c 'select(.task.suite == "tbg" and .id != "tbg/llama_ff_triton") | [.id, .task.instruction, .task.difficulty]' all.jsonl > a
	jq -c 'select(.error | not) | [.id, .task.instruction, .task.difficulty]' thunlp.jsonl | diff - a)"

# Filters.
check_same "--suite rocm" 31 "$(geak-import --suite rocm "$geak" | wc -l | tr -d ' ')"
check_same "--difficulty 1,5" 8 "$(geak-import --difficulty 1,5 "$geak" | wc -l | tr -d ' ')"
check_same "--difficulty 2-3 --list" 92 "$(geak-import --list --difficulty 2-3 "$geak" | wc -l | tr -d ' ')"
check_same "--ids list, any spelling, sorted tbg first" "tbg/sin_kernel tbg/vector_addition_custom rocm/test_add_kernel" \
	"$(geak-import --list --ids rocm/test_add_kernel,vector_addition_custom.py,tbg/sin_kernel "$geak" | tr '\n' ' ' | sed 's/ $//')"
printf '# smoke\nrelu_triton_kernel\n\nrocm/naive_softmax\n' > ids.txt
check_same "--ids file" "tbg/relu_triton_kernel rocm/naive_softmax" \
	"$(geak-import --ids ids.txt "$geak" | jq -r .id | tr '\n' ' ' | sed 's/ $//')"
geak-import --ids sin_kernel,no_such_kernel "$geak" > ids.jsonl 2> ids.err
check_same "unknown id: exit 1" 1 $?
check_same "unknown id: a no_task record" "tbg/sin_kernel: no_such_kernel:no_task" \
	"$(jq -r '.id + ":" + (.error.kind // "")' ids.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_fail "--suite bogus is a usage error" geak-import --suite bogus "$geak"

# --as-candidate, --cpu-ok and a source on stdin.
geak-import --as-candidate --ids sin_kernel - < "$geak" > cand.jsonl
check_same "--as-candidate: code is the reference" true "$(jq '.code == .task.reference' cand.jsonl)"
check_same "--as-candidate: code_sha is its sha256" \
	"$(jq -j .code cand.jsonl | sha256sum | cut -d' ' -f1)" "$(jq -r .code_sha cand.jsonl)"
printf 'sin_kernel 5.2\nrocm/test_add_kernel\n' > cpu.txt
check_same "--cpu-ok marks listed tasks" "tbg/relu_triton_kernel:false tbg/sin_kernel:true rocm/test_add_kernel:true" \
	"$(geak-import --cpu-ok cpu.txt --ids sin_kernel,relu_triton_kernel,test_add_kernel "$geak" |
	jq -r '.id + ":" + (.task.cpu_ok | tostring)' | tr '\n' ' ' | sed 's/ $//')"

# Broken archives: a clear message, exit 3, no records.
head -c 300000 "$geak" > trunc.tar.gz
geak-import trunc.tar.gz > trunc.out 2> trunc.err
check_same "truncated gzip: exit 3" 3 $?
check_same "truncated gzip: no records" "" "$(cat trunc.out)"
check_match "truncated gzip: says so" '^geak-import: trunc.tar.gz: .*[Tt]runcated' "$(cat trunc.err)"
head -c 1000 /dev/urandom > junk.tar
geak-import junk.tar > /dev/null 2> junk.err
check_same "not an archive: exit 3" 3 $?
mkdir empty
geak-import empty > /dev/null 2>&1
check_same "no kernel files in the sources: exit 3" 3 $?

# A zip archive of a few files, made without unpacking anything.
py=$GEAK_PYTHON
[ -x "$py" ] || py=python3
if "$py" -c 'import zipfile, tarfile' 2>/dev/null; then
	"$py" - "$geak" few.zip <<'EOF'
import sys, tarfile, zipfile
want = ("TritonBench_G_v1/sin_kernel.py", "TritonBench_G_v1/relu_triton_kernel.py",
        "golden_metrics/sin_kernel_perf.py", "ROCm_v1/test_add_kernel.py",
        "ROCm_v1_autotune/test_add_kernel.py", "_with_difficulty.json",
        "ROCm_eval_complex_instruct_v1.json")
with tarfile.open(sys.argv[1]) as t, zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    for m in t:
        if m.isfile() and m.name.endswith(want):
            z.writestr("GEAK-eval-master/" + m.name.split("/", 1)[1], t.extractfile(m).read())
EOF
	geak-import few.zip > zip.jsonl
	check_same "zip archive: exit 0" 0 $?
	check_same "zip archive: the three tasks" "tbg/relu_triton_kernel tbg/sin_kernel rocm/test_add_kernel" \
		"$(jq -r .id zip.jsonl | tr '\n' ' ' | sed 's/ $//')"
	check_same "zip archive: same records as the tarball" "" \
		"$(geak-import --ids sin_kernel,relu_triton_kernel,test_add_kernel "$geak" | jq -c 'del(.task.perf)' > tar.jsonl
		jq -c 'del(.task.perf)' zip.jsonl | diff - tar.jsonl)"
else
	skip "no python to build a zip archive"
	skip "no python to build a zip archive"
	skip "no python to build a zip archive"
fi
done_testing
