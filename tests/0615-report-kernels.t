#!/bin/sh
# geak-select's kernel-first results: the kept kernels as files that
# import and pass geak-eval, a report that leads with the best wins and
# shows per task the kept code, its diff, its cases' times, its attempts
# and a failure's error (escaped), an unpriced model said to be one, and
# two runs compared per task.
. "$(dirname "$0")/lib.sh"
geak=$top/../shared/bench/geak-eval-data.tar.gz
[ -r "$geak" ] || skip_all "no benchmark archive $geak"
command -v jq >/dev/null || skip_all "no jq"
plan 33
SOURCE_DATE_EPOCH=1767225600
export SOURCE_DATE_EPOCH

geak-import --suite tbg --ids vector_addition_custom,add_example,add_value --as-candidate \
	"$geak" > tasks.jsonl 2> import.err
check_same "3 tasks imported" 3 "$(grep -c . tasks.jsonl)"

# The kept kernel of vector_addition_custom: not its reference.
kernel='import torch, triton, triton.language as tl
K_OFFSET = 0.0  # kept-kernel marker
@triton.jit
def _add_kernel(A, B, C, size, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(A + offs, mask=offs < size)
    b = tl.load(B + offs, mask=offs < size)
    tl.store(C + offs, a + b + K_OFFSET, mask=offs < size)
def custom_add(a, b):
    c = torch.empty_like(a)
    _add_kernel[(triton.cdiv(c.size(0), 16),)](a, b, c, c.size(0), BLOCK=16)
    return c
'
# records SPEEDUP_ADD SPEEDUP_VALUE: a run's records.  vector_addition:
# correct at 1.2x, then a crash, then the kernel above at SPEEDUP_ADD;
# add_example correct at 4x (the best win); add_value a compile error
# whose message holds markup; two more correct tasks whose names make
# no safe file name and collide with add_example's.  The model is
# unpriced: no cost anywhere.
records() {
	jq -c --arg k "$kernel" --argjson sa "$1" --argjson sv "$2" '
	  def ev($o): {code_sha: .code_sha, device: "NVIDIA H200", harness: "h1", flags: [],
	               call: true, exec: true, stage: "done", reason: null} + $o;
	  def case($ms; $ref): [{shape: 0, ms: $ms, ms_ref: $ref, roofline:
	      {dtype: "fp32", hbm: 0.61, compute: 0.02, hbm_ref: 0.24, compute_ref: 0.01,
	       bound: "memory", bound_ref: "memory"}}];
	  . + {run: 0, sample: 0, llm: {provider: "openai", model: "gpt-4.1-unpriced"},
	       usage_total: {calls: 2, input_tokens: 1000, output_tokens: 300}} |
	  if .task.name == "vector_addition_custom" then
	    (.iter = 0 | .mode = "first" | .eval = ev({speedup: 1.2, shapes: case(0.4; 0.48)})),
	    (.iter = 1 | .mode = "optimize" | .code = "import torch\n" | .code_sha = "s1" |
	     .eval = ev({code_sha: "s1", call: false, exec: false, stage: "call",
	                 reason: "runtime", message: "division by zero",
	                 traceback: "File \"cand.py\", line 1\nZeroDivisionError: boom"})),
	    (.iter = 2 | .mode = "optimize" | .code = $k | .code_sha = "s2" |
	     .eval = ev({code_sha: "s2", speedup: $sa, shapes: case(0.2; 0.5)}))
	  elif .task.name == "add_example" then
	    (.iter = 0 | .mode = "first" | .eval = ev({speedup: 4, shapes: case(0.1; 0.4)})),
	    (.id = "other/add_example" | .task.name = "Add-Example" | .iter = 0 |
	     .eval = ev({speedup: 1.1})),
	    (.id = "evil/../../escape" | .task.name = "../escape" | .iter = 0 |
	     .eval = ev({speedup: $sv}))
	  else
	    .iter = 0 | .mode = "first" |
	    .eval = ev({call: false, exec: false, stage: "call", reason: "compile",
	                message: "CompilationError: <script>alert(1)</script> at line 3",
	                traceback: "  File \"k.py\", line 3\n    x = tl.load(p + <b>)\nCompilationError: bad & worse"})
	  end' tasks.jsonl
}
records 2.5 0.9 > a.jsonl
geak-select -s a.json -r a.html --kernels kern a.jsonl > best.jsonl 2> a.err
check_same "geak-select --kernels -r: exit 0, quiet" "0 " "$? $(cat a.err)"

# Best wins: the correct kernels, fastest first, each linking its task.
wins=$(sed -n '/id="wins"/,/<\/table>/p' a.html | grep -o '<a href="#k-[0-9]*">[^<]*' | sed 's/.*">//' | tr '\n' ' ')
check_same "best wins, fastest first" \
	"tbg/add_example tbg/vector_addition_custom other/add_example evil/../../escape " "$wins"
anchor=$(sed -n '/id="wins"/,/<\/table>/p' a.html | grep -o 'href="#k-[0-9]*">tbg/vector_addition_custom' | sed 's/href="#//; s/".*//')
check_match "... the link names a task's section" "<details class=\"task\" id=\"$anchor\">" "$(cat a.html)"
section=$(sed -n "/<details class=\"task\" id=\"$anchor\">/,/^<\/div><\/details>/p" a.html)
check_match "the best kernel's code in its section, highlighted" \
	'<pre class="code" id="c-[0-9]*"><span class="kw">import</span> torch.*K_OFFSET = <span class="nu">0.0</span>  <span class="cm"># kept-kernel marker</span>' \
	"$(printf '%s' "$section" | tr '\n' ' ')"
check_match "... copyable" '<button class="copy" data-for="c-' "$section"
check_match "... and its diff against the reference, the new line added" \
	'<span class="dl dl-add">\+K_OFFSET = 0.0  # kept-kernel marker</span>' "$section"
check_match "per-case times: reference and kernel ms, speedup, roofline fractions" \
	'<td>0</td><td>0.500</td><td>0.200</td><td>2.50x</td><td>61.0%</td><td>2.0%</td><td>24.0%</td><td>1.0%</td><td>memory</td>' \
	"$section"
check_same "the attempts' timeline: three, in order, the kept one outlined" \
	"v-ok:i0 v-fail:i1 v-ok kept:i2 " \
	"$(printf '%s' "$section" | grep -o '<span class="chip [^"]*" title="[^"]*">i[0-9]' | sed 's/<span class="chip \([^"]*\)".*>/\1:/' | tr '\n' ' ')"
check_match "... each saying kind, verdict, speedup and model" \
	'title="iteration 2, sample 0, optimize, correct, 2.50x, gpt-4.1-unpriced"' "$section"

fail=$(sed -n '/<b>tbg\/add_value<\/b>/,/^<\/div><\/details>/p' a.html)
check_match "a failure's section gives the evaluator's message and traceback, escaped" \
	'CompilationError: &lt;script&gt;alert\(1\)&lt;/script&gt; at line 3.*x = tl.load\(p \+ &lt;b&gt;\).*bad &amp; worse' \
	"$(printf '%s' "$fail" | tr '\n' ' ')"
check_same "no markup from a record reaches the page" "" "$(grep -o '<script>alert\|<b>)' a.html)"
check_same "self-contained: no external resource" "" \
	"$(grep -o -i -e '<script [^>]*src' -e '<link ' -e 'src="http' -e "url(http" a.html)"
check_same "one inline script, the page's own" 1 "$(grep -c '<script>' a.html)"
check_same "every task's section folded" "5 0" \
	"$(grep -c '<details class="task" id=' a.html) $(grep -c '<details class="task"[^>]* open' a.html)"
check_match "an unpriced model's cost is said to be unpriced" \
	'<b>unpriced</b><span>LLM cost \(US\$\)</span>' "$(cat a.html)"
check_match "... in the tables too" '<td>unpriced</td>' "$(cat a.html)"
check_same "the summary names each kernel file" \
	'["add_example.py","Add_Example_2.py","k____escape.py",null,"vector_addition_custom.py"]' \
	"$(jq -c '[.kernels[].file]' a.json)"
check_same "... and keeps the code out" 0 "$(jq '[.kernels[] | select(.code)] | length' a.json)"

# The kernel files.
check_same "a file per correct kernel, none for the failure, none outside" \
	"Add_Example_2.py add_example.py k____escape.py vector_addition_custom.py " \
	"$(ls kern | tr '\n' ' ')"
check_same "... nothing escaped the folder" "" "$(ls -d escape* ../escape* 2>/dev/null)"
check_match "... each with a header: task, speedup, device, model, run and iteration" \
	'# geak kernel for tbg/vector_addition_custom \(task vector_addition_custom\) # speedup: 2.5x over the reference on NVIDIA H200 # model: gpt-4.1-unpriced; run 0, iteration 2' \
	"$(head -n 3 kern/vector_addition_custom.py | tr '\n' ' ')"
check_same "... then the kept code as evaluated" "$(printf '%s' "$kernel" | od -c)" \
	"$(tail -n +6 kern/vector_addition_custom.py | od -c)"
check_same "... a header's id cannot start a line of code" 1 \
	"$(grep -c '^# geak kernel for evil/../../escape (task ../escape)$' kern/k____escape.py)"

if have_python; then
	"$GEAK_PYTHON" - kern/*.py > import.out 2>&1 <<'PY'
import importlib.util, sys
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("k", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    print("imported", path)
PY
	check_same "every kernel file imports" "0 4" "$? $(grep -c '^imported' import.out)"
	jq -c --rawfile code kern/vector_addition_custom.py 'select(.task.name == "vector_addition_custom")
	    | .code = $code | del(.code_sha, .eval)' tasks.jsonl | geak-eval --cpu > evaled.jsonl 2> eval.err
	check_same "the kernel file passes geak-eval as its task's candidate" "true true" \
		"$(jq -r '"\(.eval.call) \(.eval.exec)"' evaled.jsonl)"
else
	skip "no torch and triton in $GEAK_PYTHON"
	skip "no torch and triton in $GEAK_PYTHON"
fi

# Two runs compared: B found a faster kernel for vector_addition_custom
# and a slower one for evil/../../escape.  A as its summary, B as records.
records 3.0 0.5 > b.jsonl
geak-select --compare -s cmp.json -r cmp.html a.json b.jsonl > cmp.tsv 2> cmp.err
check_same "geak-select --compare: exit 0, quiet" "0 " "$? $(cat cmp.err)"
check_same "a TSV table, a row per task" \
	"id winner margin a_call b_call a_exec b_exec a_speedup b_speedup a_cost b_cost" \
	"$(head -n 1 cmp.tsv | tr '\t' ' ')"
check_same "... who won and by how much" \
	"tbg/add_example:tie:1 other/add_example:tie:1 evil/../../escape:a:1.8 tbg/add_value:neither tbg/vector_addition_custom:b:1.2 " \
	"$(awk -F'\t' 'NR > 1 { printf "%s:%s%s ", $1, $2, ($3 == "-" ? "" : ":" $3) }' cmp.tsv)"
check_same "... an unpriced run's cost is unpriced" "unpriced unpriced" \
	"$(awk -F'\t' '$1 == "tbg/add_example" { print $10, $11 }' cmp.tsv)"
check_same "the JSON: wins and the geometric mean's ratio" '{"a":1,"b":1,"tie":2,"neither":1}' \
	"$(jq -c .wins cmp.json)"
check_match "the report: B's win in its table" \
	'<h2>Where B won \(1\)</h2> <table class="cmp">.*<tr><td>tbg/vector_addition_custom</td><td>B</td><td>1.20x</td><td>yes</td><td>yes</td><td>2.50x</td><td>3.00x</td><td>unpriced</td><td>unpriced</td></tr>' \
	"$(tr '\n' ' ' < cmp.html)"
check_match "... with a plot of each task's speedups, A against B" \
	'aria-label="Speedup per task, A against B"' "$(cat cmp.html)"
done_testing
