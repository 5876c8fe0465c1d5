#!/bin/sh
# geak-import on KernelBench (the archive in ../shared/bench): counts per
# level, the records' fields, the instruction written from the problem,
# the level-3 time limit, the CPU-mode size rule, selection, a checkout
# directory and a file that is no problem.
. "$(dirname "$0")/lib.sh"
archive=$top/../shared/bench/kernelbench-data.tar.gz
[ -r "$archive" ] || skip_all "no KernelBench archive at $archive"
command -v jq >/dev/null || skip_all "no jq"
plan 28

geak-import --suite kernelbench "$archive" > kb.jsonl 2> kb.err
check_same "imports without errors" 0 $?
check_same "counts per level on stderr" \
	"geak-import: kernelbench level 1: 100 tasks, 0 with errors
geak-import: kernelbench level 2: 100 tasks, 0 with errors
geak-import: kernelbench level 3: 50 tasks, 0 with errors" "$(cat kb.err)"
check_same "250 records, by level then problem number" \
	"kernelbench/level1/1_Square_matrix_multiplication_ kernelbench/level1/2_Standard_matrix_multiplication_ kernelbench/level3/50_ReLUSelfAttention" \
	"$(jq -r .id kb.jsonl | sed -n '1p;2p;250p' | tr '\n' ' ' | sed 's/ $//')"
check_same "ids unique" "" "$(jq -r .id kb.jsonl | sort | uniq -d)"
bad=$(jq -r '.task.level as $l | select(.error or .schema != 1 or .task.suite != "kernelbench"
	or (.task.name | test("^level[123]_[0-9]+_[A-Za-z0-9_]+$") | not)
	or .task.test != "" or .task.license != "MIT"
	or (.task.source | startswith("KernelBench/level") | not)
	or (.task.reference | test("class Model") | not)
	or (.task.instruction | test("class ModelNew") | not)
	or (.task.signatures | length) != 2 or (.task.cpu_ok | type) != "boolean"
	or .id != "kernelbench/" + (.task.source | ltrimstr("KernelBench/") | rtrimstr(".py"))
	or (.task.source | startswith("KernelBench/level\($l)/") | not)) | .id' kb.jsonl)
check_same "every record complete" "" "$bad"
check_same "the reference is the problem file, byte for byte" \
	"$(tar -xzf "$archive" -O KernelBench/level2/12_Gemm_Multiply_LeakyReLU.py | sha256sum)" \
	"$(jq -j 'select(.id == "kernelbench/level2/12_Gemm_Multiply_LeakyReLU") | .task.reference' kb.jsonl | sha256sum)"

i() { jq -r --arg id "kernelbench/$1" 'select(.id == $id) | .task.instruction' kb.jsonl; }
check_match "instruction: level, number, title" \
	'KernelBench level 1 problem 19, "ReLU" \(a single operator\)' "$(i level1/19_ReLU)"
check_match "instruction: the input shape read from get_inputs" \
	'`x`: float32 tensor of shape \(4096, 393216\)' "$(i level1/19_ReLU)"
check_match "instruction: shapes from tuples and starred constants" \
	'`targets`: int64 tensor of shape \(32768,\)' "$(i level1/95_CrossEntropyLoss)"
check_match "instruction: the operators" 'computes with `nn.Linear`, `nn.LeakyReLU`' \
	"$(i level2/12_Gemm_Multiply_LeakyReLU)"
check_match "instruction: constructor arguments with their values" \
	'`negative_slope` = 0\.1$' "$(i level2/12_Gemm_Multiply_LeakyReLU)"
check_match "instruction: values from tuple unpacking (depth, height, width = ...)" \
	'float32 tensor of shape \(16, 64, 24, 48, 48\)' "$(i level2/100_ConvTranspose3d_Clamp_Min_Divide)"
check_match "instruction: the fallback rule" 'fails as a PyTorch fallback' "$(i level1/19_ReLU)"
check_same "signatures: Model's constructor and forward" \
	'["def __init__(self, in_features, out_features, multiplier, negative_slope)","def forward(self, x)"]' \
	"$(jq -c 'select(.id == "kernelbench/level2/12_Gemm_Multiply_LeakyReLU") | .task.signatures' kb.jsonl)"

check_same "level 3 gets a 600 s time limit, levels 1-2 none" "50 0" \
	"$(jq -rs '[map(select(.task.timeout == 600)) | length, (map(select(.task.level < 3 and (.task | has("timeout")))) | length)] | join(" ")' kb.jsonl)"
check_same "--level3-timeout raises it" "[1800]" \
	"$(geak-import --level 3 --level3-timeout 1800 "$archive" 2>/dev/null | jq -sc 'map(.task.timeout) | unique')"
check_same "every task with its input size read gets memory for four copies of its inputs" "0 67584" \
	"$(jq -rs '[(map(select(.task.input_elements != null and .task.memory_mib != 2048 + ((16 * .task.input_elements) / 1048576 | floor))) | length),
		(map(select(.task.name == "level1_45_Average_Pooling_2D")) | .[0].task.memory_mib)] | join(" ")' kb.jsonl)"
check_same "--level3-timeout 0 leaves it out" "0" \
	"$(geak-import --level 3 --level3-timeout 0 "$archive" 2>/dev/null | jq -s 'map(select(.task | has("timeout"))) | length')"
# Every level-1 problem reads at least 2M input elements, and the
# smallest are matrix products and convolutions: none is cpu_ok.
check_same "no problem at its published size is cpu_ok" "0" \
	"$(jq -s 'map(select(.task.cpu_ok)) | length' kb.jsonl)"
check_same "--cpu-elements moves the rule (a 4M-element elementwise problem)" "true" \
	"$(geak-import --cpu-elements 6000000000 --ids level1/19_ReLU "$archive" 2>/dev/null | jq .task.cpu_ok)"

check_same "--level 1,3 and --ids with the level" "150 kernelbench/level1/19_ReLU" \
	"$(geak-import --level 1,3 --list "$archive" | wc -l | tr -d ' ') $(geak-import --ids level1/19_ReLU --list "$archive")"
geak-import --ids 19_ReLU --list "$archive" > /dev/null 2>&1
check_same "a name without its level names no task (every level has a 1_...)" 1 $?

# A checkout directory, with a file that is no KernelBench problem.
mkdir -p co/KernelBench/level1 co/KernelBench/level4
tar -xzf "$archive" -O KernelBench/level1/19_ReLU.py > co/KernelBench/level1/19_ReLU.py
printf 'import torch\nx = 1\n' > co/KernelBench/level1/7_Broken.py
cp co/KernelBench/level1/19_ReLU.py co/KernelBench/level4/1_Other.py
cat > co/KernelBench/level1/8_Crafted.py <<'PY'
import torch
import torch.nn as nn
import math

class Model(nn.Module):
    """Adds two tensors, scaled.

    Args:
        sizes: not shown.
    """
    def __init__(self, sizes, scale=0.5):
        super().__init__()
        self.scale = scale

    def forward(self, a, b, n, c):
        return (a + b[:, :1].float()) * self.scale + c.sum()

rows, cols = 2 * 3, (4 +
    4) // 3  # 2
width = rows ** 2 - 1; hidden = [16] * 3

def get_inputs():
    a = torch.randn(rows, cols, dtype=torch.float16)
    b = torch.randint(0, 9, (rows, cols)).half()
    c = torch.rand(int(math.sqrt(width)))
    return [a, b, width, c]

def get_init_inputs():
    return [hidden, 1.5e-3]
PY
geak-import --ids level1/8_Crafted co > crafted.jsonl 2> /dev/null
crafted=$(jq -r .task.instruction crafted.jsonl)
check_same "static reading: unpacking, brackets, dtypes, a semicolon, an unread shape" \
	'- `a`: float16 tensor of shape (6, 2)
- `b`: float16 tensor of shape (6, 2)
- `n`: the value 35
- `c`: float32 tensor made by `torch.rand(int(math.sqrt(width)))` (shape not read)' \
	"$(printf '%s\n' "$crafted" | grep '^- `[abnc]`')"
check_match "static reading: the docstring before its Args" 'Its model: Adds two tensors, scaled\.$' "$crafted"
check_same "static reading: constructor values; no element count with a shape unread" \
	'- `hidden` = (16, 16, 16)|- `1.5e-3` = 0.0015|null' \
	"$(printf '%s\n' "$crafted" | grep '^- `[h1]' | tr '\n' '|')$(jq -c .task.input_elements crafted.jsonl)"
rm co/KernelBench/level1/8_Crafted.py
geak-import co > co.jsonl 2> co.err
check_same "a checkout: the bad file is a bad_task record, exit 1" \
	"1 kernelbench/level1/7_Broken:bad_task kernelbench/level1/19_ReLU:ok" \
	"$? $(jq -r '.id + ":" + (.error.kind // "ok")' co.jsonl | tr '\n' ' ' | sed 's/ $//')"
check_match "and named on stderr" '7_Broken.py: not a KernelBench problem' "$(cat co.err)"
check_same "the checkout's problem is the archive's" \
	"$(jq -c 'select(.id == "kernelbench/level1/19_ReLU") | .task' kb.jsonl)" \
	"$(jq -c 'select(.id == "kernelbench/level1/19_ReLU") | .task' co.jsonl)"
done_testing
