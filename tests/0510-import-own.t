#!/bin/sh
# geak-import on a user's own files (examples/own), known by their
# content: a function with inputs(), a KernelBench-style problem, and a
# starting Triton kernel (--code).  The records' fields, geak-eval --cpu
# on them, each bad file's message and exit status, and the loop over
# the three with the scripted model.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
command -v jq >/dev/null || skip_all "no jq"
have_python || skip_all "no torch and triton in $GEAK_PYTHON"
own=$top/examples/own
plan 39

# ---- the plain form ----
geak-import "$own/scale_add.py" > plain.jsonl 2> plain.err
check_same "a function with inputs(): exits 0, nothing said" "0 " "$? $(cat plain.err)"
check_same "its id, suite, name, entry, signature and source" \
	'["plain/scale_add","plain","scale_add","scale_add",["def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float)"],"'"$own"'/scale_add.py"]' \
	"$(jq -c '[.id, .task.suite, .task.name, .task.entry, .task.signatures, .task.source]' plain.jsonl)"
check_same "the file is the reference, the test and the perf script, byte for byte" \
	"$(sha256sum < "$own/scale_add.py") $(sha256sum < "$own/scale_add.py") $(sha256sum < "$own/scale_add.py")" \
	"$(jq -j .task.reference plain.jsonl | sha256sum) $(jq -j .task.test plain.jsonl | sha256sum) $(jq -j .task.perf plain.jsonl | sha256sum)"
i=$(jq -r .task.instruction plain.jsonl)
check_match "the instruction names the function and its signature" \
	'Python function `scale_add`.*`def scale_add\(x: torch.Tensor, y: torch.Tensor, alpha: float\)`' "$(echo "$i" | tr '\n' ' ')"
check_match "the instruction holds the docstring" '^Return alpha \* x \+ y, elementwise' "$i"
check_match "the instruction says where it is timed and shows the program" \
	'perf_inputs\(\)` makes.*def gbps\(args, ms\)' "$(echo "$i" | tr '\n' ' ')"
check_same "no code: the loop writes the first candidate" "[false,false]" "$(jq -c '[has("code"), has("mode")]' plain.jsonl)"
check_same "--instruction TEXT is the instruction" "Make scale_add fast." \
	"$(geak-import --instruction 'Make scale_add fast.' "$own/scale_add.py" | jq -r .task.instruction)"

# A file without perf_inputs(): a task still, said not to be timed.
sed '/^def perf_inputs/,$d' "$own/scale_add.py" > untimed.py
geak-import untimed.py > untimed.jsonl 2> untimed.err
check_same "without perf_inputs(): a task with no perf, said so" "0 false" \
	"$? $(jq '.task | has("perf")' untimed.jsonl)"
check_match "... on stderr" "untimed.py: no perf_inputs\(\): the task's speed will not be measured" "$(cat untimed.err)"

# ---- the KernelBench-style form, known by content, not path ----
cp "$own/row_softplus.py" problem.txt
geak-import problem.txt > kb.jsonl 2> kb.err
check_same "a KernelBench-style file of any name: exits 0" "0 " "$? $(cat kb.err)"
check_same "the suite's fields, marked as the user's own, of no level" \
	'["kernelbench/problem","kernelbench","problem","own","problem.txt","",false,true,3200,["def __init__(self, dim)","def forward(self, x: torch.Tensor)"]]' \
	"$(jq -c '[.id, .task.suite, .task.name, .task.variant, .task.source, .task.test, (.task | has("level")), .task.cpu_ok, .task.input_elements, .task.signatures]' kb.jsonl)"
check_same "its reference is the file, byte for byte" "$(sha256sum < problem.txt)" "$(jq -j .task.reference kb.jsonl | sha256sum)"
i=$(jq -r .task.instruction kb.jsonl)
check_match "the instruction: no level, the model, the input's shape" \
	'This is the problem "problem"\. Its model: Softplus with a learned scale.*`x`: float32 tensor of shape \(16, 200\).*class ModelNew' \
	"$(echo "$i" | tr '\n' ' ')"
check_same "the suite's own problems still say their level" 0 \
	"$(printf '%s\n' "$i" | grep -c 'KernelBench level')"

# ---- a starting kernel ----
geak-import --name scale_add_given --code "$own/scale_add_triton.py" "$own/scale_add.py" > start.jsonl
check_same "--code: exits 0" 0 $?
check_same "the kernel is the record's code, its digest and mode given" \
	"$(sha256sum < "$own/scale_add_triton.py" | cut -d' ' -f1) $(sha256sum < "$own/scale_add_triton.py" | cut -d' ' -f1) given plain/scale_add_given scale_add" \
	"$(jq -j .code start.jsonl | sha256sum | cut -d' ' -f1) $(jq -r '"\(.code_sha) \(.mode) \(.id) \(.task.entry)"' start.jsonl)"

# ---- geak-eval --cpu on them ----
geak-import --as-candidate "$own/scale_add.py" "$own/row_softplus.py" > refs.jsonl
check_same "--as-candidate: both references as their candidates" 2 "$(jq -r 'select(.code == .task.reference) | .id' refs.jsonl | wc -l | tr -d ' ')"
cat start.jsonl refs.jsonl > evalin.jsonl
geak-eval --cpu --no-cache --static off evalin.jsonl > eval.jsonl 2> eval.err
check_same "geak-eval --cpu takes every record" "0 3" "$? $(wc -l < eval.jsonl | tr -d ' ')"
check_same "the starting kernel passes" "true true done" \
	"$(sed -n 1p eval.jsonl | jq -r '.eval | "\(.call) \(.exec) \(.stage)"')"
# The references are PyTorch: they run, and are refused only for
# launching no Triton kernel, as any candidate would be.
check_same "the references run as candidates, refused only for launching no Triton kernel" \
	"true cheat no Triton kernel|true cheat no Triton kernel" \
	"$(sed -n '2,3p' eval.jsonl | jq -r '.eval | "\(.call) \(.reason) \(.message | capture("(?<m>no Triton kernel)").m)"' | paste -sd '|')"

# ---- bad files: the file named, what it lacks, exit 1 and an error record ----
printf 'import torch\n\ndef f(x):\n    return x + 1\n' > noinputs.py
printf 'import torch\nX = 3\n' > nofunc.py
printf 'import torch\n\ndef f(x):\n    return x +\n\ndef inputs():\n    return []\n' > syntax.py
printf 'import torch.nn as nn\n\nclass Model(nn.Module):\n    pass\n\ndef get_inputs():\n    return []\n' > kbhalf.py
printf 'import torch\n\ndef f(x):\n    return x\n\ndef g(x):\n    return x * 2\n\ndef inputs():\n    return [(torch.ones(3),)]\n' > several.py
printf 'import torch\n\ndef other(x):\n    return x\n' > wrongkernel.py
printf 'def scale_add(x, y, alpha:\n    pass\n' > badkernel.py
# bad ARGS...: geak-import ARGS; said: its exit status, stderr and the
# error record's kind and message.
bad() {
	geak-import "$@" > bad.jsonl 2> bad.err
	echo $? > bad.rc
}
said() {
	printf '%s %s | %s' "$(cat bad.rc)" "$(cat bad.err)" "$(jq -r '"\(.error.kind) \(.error.message)"' bad.jsonl)"
}
bad noinputs.py
check_match "no inputs(): exit 1, the file and what it lacks, in the record too" \
	"^1 geak-import: noinputs.py: defines no inputs\(\).* \| bad_task noinputs.py: defines no inputs" "$(said)"
bad nofunc.py
check_match "no function: exit 1, neither form" \
	"^1 geak-import: nofunc.py: defines no function: it is neither a task .* nor a KernelBench problem.* \| bad_task " "$(said)"
bad syntax.py
check_match "a syntax error: exit 1, the file and line" "^1 geak-import: syntax.py:4: syntax error: .* \| bad_task syntax.py:4: " "$(said)"
bad kbhalf.py
check_match "half a KernelBench problem: exit 1, what it lacks" \
	"^1 geak-import: kbhalf.py: looks like a KernelBench problem but defines no get_init_inputs\(\)" "$(said)"
bad several.py
check_match "several functions: exit 1, asks for --entry" \
	"^1 geak-import: several.py: defines several functions \(f\(\) and g\(\)\): name the reference with --entry" "$(said)"
check_same "--entry g chooses the reference" "g def g(x)" \
	"$(geak-import --entry g several.py 2>/dev/null | jq -r '"\(.task.entry) \(.task.signatures[0])"')"
bad --code wrongkernel.py "$own/scale_add.py"
check_match "a starting kernel without the function: exit 1, the kernel and the function named" \
	"^1 geak-import: wrongkernel.py: defines no top-level function scale_add\(\), which the task calls \| bad_task " "$(said)"
bad --code badkernel.py "$own/scale_add.py"
check_match "a starting kernel with a syntax error: exit 1, the kernel and its line" \
	"^1 geak-import: badkernel.py:1: syntax error: " "$(said)"
geak-import --code missing.py "$own/scale_add.py" > /dev/null 2> bad.err
check_same "a --code file that cannot be read: exit 3, named" "3 geak-import: --code: missing.py: No such file or directory" "$? $(cat bad.err)"
geak-import noinputs.py "$top/examples/demo" > /dev/null 2> bad.err
check_same "an own file among benchmark sources: exit 2, the source named" \
	"2 geak-import: $top/examples/demo: a benchmark source, given with task files of your own: import them apart" "$? $(cat bad.err)"

# ---- the loop over the three, with the scripted model ----
{ cat plain.jsonl; geak-import "$own/row_softplus.py"; cat start.jsonl; } > tasks.jsonl
start_llm "$own/script.jsonl"
GEAK_OPT_FLAGS=--unmeasured GEAK_RETRIEVE_FLAGS= "$top/bin/geak-loop.sh" -i 2 -o out tasks.jsonl 2> loop.err
check_same "the loop runs the three" 0 $?
check_same "iteration 0: two first attempts and the starting kernel, all correct" \
	"plain/scale_add first true|kernelbench/row_softplus first true|plain/scale_add_given given true" \
	"$(jq -r '"\(.id) \(.mode) \(.eval.exec)"' out/evaluated-0.jsonl | paste -sd '|')"
check_same "the starting kernel was evaluated as it was given" \
	"$(jq -r .code_sha start.jsonl)" "$(jq -r 'select(.id == "plain/scale_add_given") | .code_sha' out/evaluated-0.jsonl)"
check_same "iteration 1: each lineage optimized, the starting kernel's too, all correct" \
	"optimize true|optimize true|optimize true" \
	"$(jq -r '"\(.mode) \(.eval.exec)"' out/evaluated-1.jsonl | paste -sd '|')"
check_match "the optimizer was shown the starting kernel" "^[1-9]" \
	"$(llm_prompt_with 'correct implementations of this task found so far' | grep -c 'BLOCK=256')"
check_match "3 of 3 tasks pass" "2 iterations: 3 of 3 tasks pass" "$(cat loop.err)"
check_same "the model was asked two first attempts, none for the starting kernel" 2 \
	"$(jq -r '.body.messages[0].content | select(contains("**Request:**")) | "x"' llm.log | wc -l | tr -d ' ')"

# ---- --help ----
check_match "--help names the own-file options" "--code KERNEL.py.*--entry NAME.*--instruction TEXT" \
	"$(geak-import --help | tr '\n' ' ')"

done_testing
