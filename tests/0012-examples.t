#!/bin/sh
# Every EXAMPLES block of the man pages that runs without a GPU or an API
# key runs here as written, on small copies of the benchmark data: a
# loopback model server stands in for a server of one's own
# (http://localhost:8000/v1) and for the provider the tools find with no
# key, a local repository for GitHub.  The others are listed with the
# reason they cannot run here; an example in neither list fails.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
geak=$top/../shared/bench/geak-eval-data.tar.gz
thunlp=$top/../shared/bench/tritonbench-g-data.tar.gz
[ -r "$geak" ] && [ -r "$thunlp" ] || skip_all "no benchmark archives beside the tree"
have_python || skip_all "no Python with torch and triton ($GEAK_PYTHON)"
for c in jq git bash; do command -v $c >/dev/null || skip_all "no $c"; done

# page-N: why it cannot run here.
skipped="
geak-eval.1-3 it needs two GPUs
geak-eval.1-5 it calibrates every task of a task file (tests/0396-calib-export.t runs the round trip on one)
geak-gen.1-1 it needs an Anthropic key
geak-gen.1-4 it needs a key in WORK_KEY
geak-gen.1-7 it needs an OpenAI and an Anthropic key
geak-import.1-5 it evaluates all 100 KernelBench level-1 references: hours on the CPU
geak-loop.1-2 it needs two GPUs
geak-slurm.1-1 it needs a Slurm cluster with GPUs
geak-slurm.1-2 it needs a Slurm cluster with GPUs
"
# In the order they run: what one makes, a later one reads.
ran="geak-eval.1-1 geak-eval.1-2 geak-eval.1-4 geak-gen.1-2 geak-gen.1-3 geak-gen.1-5
geak-gen.1-6 geak-opt.1-1 geak-opt.1-2 geak-reflect.1-1 geak-reflect.1-2 geak-retrieve.1-1
geak-retrieve.1-2 geak-retrieve.1-3 geak-loop.1-1 geak-select.1-1 geak-select.1-2
geak-select.1-3 geak-select.1-4 geak-select.1-5 geak-slurm.1-3 geak-import.1-1 geak-import.1-2 geak-import.1-3 geak-import.1-4
geak-import.1-6"

# Each block as shell text: mdoc's \e is a backslash, a "$ " prompt goes.
mkdir ex
for page in "$top"/share/man/*.[157]; do
	awk -v base="$(basename "$page")" -v dir=ex '
		/^\.Sh EXAMPLES/ { on = 1; next }
		/^\.Sh / { on = 0 }
		on && /^\.Bd -literal/ { n++; f = dir "/" base "-" n; printf "" > f; next }
		on && /^\.Ed/ { close(f); f = ""; next }
		on && f != "" { gsub(/\\e/, "\\"); sub(/^\$ /, ""); print >> f }' "$page"
done
examples=$(ls ex | sort)
plan $(($(printf '%s\n' $examples | wc -l) + 12))

unlisted=
for e in $examples; do
	case " $(echo $ran) " in *" $e "*) continue ;; esac
	printf '%s\n' "$skipped" | grep -q "^$e " || unlisted="$unlisted $e"
done
check_same "every example is run or said why not" "" "$unlisted"

# ---- the data, small: four TritonBench tasks (one that the CPU
# interpreter cannot run) and one ROCm file, laid out as upstream ----
names="sin_kernel relu_triton_kernel add_value sin_computation"
tb=GEAK-eval/geak_eval/data/TritonBench
members="GEAK-eval/LICENSE.txt GEAK-eval/geak_eval/data/ROCm/data/ROCm_v1/test_add_kernel.py
	GEAK-eval/geak_eval/data/ROCm/data/ROCm_v1_autotune/test_add_kernel.py"
for n in $names; do
	members="$members $tb/data/TritonBench_G_v1/$n.py $tb/performance_metrics/perf_G/golden_metrics/${n}_perf.py"
done
instr="$tb/data/TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json
	GEAK-eval/geak_eval/data/ROCm/data/ROCm_eval_complex_instruct_v1.json"
mkdir up && (cd up && tar xzf "$geak" $members $instr) || not_ok "the small archive"
(cd up && tar czf ../geak-eval-data.tar.gz GEAK-eval)
mkdir tb && (cd tb && tar xzf "$thunlp" TritonBench/data/TritonBench_G_v1.json \
	TritonBench/data/TritonBench_G_comp_alpac_v1.json $(for n in $names; do
		echo TritonBench/data/TritonBench_G_v1/$n.py; done)) || not_ok "the small thunlp archive"
(cd tb && tar czf ../tritonbench-g-data.tar.gz TritonBench)
(cd tb && mv TritonBench TritonBench-main && python3 -c '
import os, zipfile
with zipfile.ZipFile("../TritonBench-main.zip", "w") as z:
    for d, _, fs in os.walk("TritonBench-main"):
        for f in fs:
            z.write(os.path.join(d, f))')
# GitHub's archive of master, which lacks the instruction files ...
(cd up && mkdir m && cp -R GEAK-eval m/GEAK-eval-master && rm -f m/GEAK-eval-master/geak_eval/data/*/data/*.json &&
	cd m && tar czf ../../GEAK-eval-master.tar.gz GEAK-eval-master)
# ... and the repository: kernels on master, instruction files on geak-rocm.
(cd up/m/GEAK-eval-master && git init -q -b master . && git add -A &&
	git -c user.name=t -c user.email=t@t commit -q -m master && git checkout -q -b geak-rocm &&
	cp "$scratch/up/$tb/data/TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json" geak_eval/data/TritonBench/data/ &&
	cp "$scratch/up/GEAK-eval/geak_eval/data/ROCm/data/ROCm_eval_complex_instruct_v1.json" geak_eval/data/ROCm/data/ &&
	git add -A && git -c user.name=t -c user.email=t@t commit -q -m instructions &&
	git clone -q --bare . "$scratch/GEAK-eval.git") || not_ok "the repository"
rm -rf up tb

# ---- what the examples read ----
geak-import --ids sin_kernel geak-eval-data.tar.gz > tasks.jsonl
cp tasks.jsonl tasks.keep
cp tasks.jsonl a.jsonl
cp tasks.jsonl b.jsonl
geak-import --as-candidate --ids sin_kernel geak-eval-data.tar.gz > cand.jsonl
cp cand.jsonl cands.jsonl
geak-eval --cpu cand.jsonl > evaluated.jsonl 2>/dev/null
mkdir -p out/run-0 && cp evaluated.jsonl out/run-0/evaluated-0.jsonl
# Two runs to compare: the same records as run A and as B's selection.
mkdir -p out-a out-b && cp evaluated.jsonl out-a/evaluated-0.jsonl &&
	geak-select evaluated.jsonl > out-b/best.jsonl 2>/dev/null
printf 'import torch\n\ndef add(x, y):\n    return x + y\n' > ref.py
printf "import torch\n\ndef inputs():\n    return [(torch.randn(300, device='cuda'), torch.randn(300, device='cuda'))]\n" > test.py
add_kernel_file mine.py
(cd "$top/share/corpus" && tar czf "$scratch/triton-kernels.tar.gz" softmax.py relu.py layer_norm.py)
jq -n --rawfile a "$top/share/corpus/softmax.py" --rawfile b "$top/share/corpus/relu.py" \
	'[{code: $a, description_1: "row-wise softmax"}, {code: $b, description_1: "relu"}]' > train_crawl.json
# The tasks of one's own that the source tree ships.
ln -s "$top/examples" examples
mkdir cmd
ln -s "$top/bin/geak-loop.sh" cmd/geak-loop
ln -s "$top/bin/geak-parallel.sh" cmd/geak-parallel
ln -s "$top/bin/geak-slurm.sh" cmd/geak-slurm
PATH=$scratch/cmd:$PATH

# The model: a loopback server, found through GEAK_BASE_URL, and at the
# address of the example's own server.
start_llm /dev/null --reply 'Here it is.
```python
import torch
def kernel():
    return 1
```'
url=$GEAK_BASE_URL
# With no model named, a server of one's own is asked for its only one;
# the examples are run as with OpenAI's default model, which is priced.
GEAK_MODEL=gpt-4.1
export GEAK_MODEL

for e in $ran; do
	sed -e "s|http://localhost:8000/v1|$url|g" \
	    -e "s|https://github.com/AMD-AGI/GEAK-eval|file://$scratch/GEAK-eval.git|g" "ex/$e" > run.sh
	bash -o pipefail run.sh > "$e.out" 2> "$e.err"
	rc=$?
	check_same "$e runs: $(head -n 1 "ex/$e" | cut -c1-60)" 0 "$rc"
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$e.err" | tail -n 5
	case $e in geak-import.*) mv tasks.jsonl "$e.tasks"; cp tasks.keep tasks.jsonl ;; esac
done
for e in $(printf '%s\n' "$skipped" | cut -d' ' -f1); do
	skip "$e: $(printf '%s\n' "$skipped" | grep "^$e " | cut -d' ' -f2-)"
done

check_same "the CPU example evaluates only what the interpreter runs, and each passes" "3 3" \
	"$(jq -r '"\(.tasks) \(.exec_pass)"' geak-eval.1-2.out)"
check_same "the plain task's kernel is correct" true "$(jq -r .eval.exec geak-eval.1-4.out)"
check_same "the local server's candidates, then the same offline" \
	"$(jq -r .code_sha candidates.jsonl | sort -u)" "$(jq -r .code_sha geak-gen.1-3.out | sort -u)"
check_match "the loop sums itself up" '^geak-loop: 5 iterations: ' "$(cat geak-loop.1-1.err)"
check_same "the checkout and the branch give every task its instruction" "4 0" \
	"$(jq -s -r '"\([.[] | select(.task.instruction)] | length) \([.[] | select(.error)] | length)"' geak-import.1-2.tasks)"
check_same "--original-hip with GitHub's master archive: difficulties 1 and 2" "tbg/add_value tbg/sin_computation tbg/sin_kernel" \
	"$(jq -r 'select(.error | not) | .id' geak-import.1-3.out | tr '\n' ' ' | sed 's/ $//')"
check_match "why tasks failed, one line per reason" '^[0-9]+ [a-z]+: ' "$(cat geak-select.1-3.out)"
check_same "the comparison page is written" yes "$([ -s compare.html ] && echo yes)"
check_same "fast_p at 0, 1, 1.5, 2 and 3" "0 1 1.5 2 3" \
	"$(jq -r '.[0]' geak-select.1-4.out | tr '\n' ' ' | sed 's/ $//')"
check_same "the dry run: a 4-element array, then the merge, both with the sbatch option" \
	"#SBATCH --array=0-3 2" \
	"$(grep '^#SBATCH --array' geak-slurm.1-3.out) $(grep -c "^# .*sbatch .*'--account=kernels'" geak-slurm.1-3.out)"

# The README's way from GEAK-eval's repository to task records.
mkdir readme && cd readme
awk '/^```/ { if (inb) { inb = 0; if (hit) exit; buf = "" } else inb = 1; next }
	inb { buf = buf $0 "\n"; if (/git clone/) hit = 1 }
	END { printf "%s", buf }' "$top/README.md" |
	sed "s|https://github.com/AMD-AGI/GEAK-eval|file://$scratch/GEAK-eval.git|" > readme.sh
bash -o pipefail readme.sh > readme.out 2> readme.err
check_same "the README's import of a checkout and its branch: both suites, no bad task" "0 5 0" \
	"$? $(grep -c . tasks.jsonl) $(jq -r 'select(.error) | .id' tasks.jsonl | wc -l | tr -d ' ')"
cd ..
done_testing
