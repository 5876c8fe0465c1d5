#!/bin/sh
# The roofline reaches the model: a correct candidate timed on an H200
# (its evaluated record made here, with the figures geak-eval adds after
# timing: the CPU has no device timeline), then two steps of the loop
# (geak-iter.sh next: reflect, optimize, retrieve, generate) against a
# scripted model over the real chat API.  The reflection and optimize
# prompts of iteration 1 show its cases' fractions of the peaks and their
# bound; iteration 2's optimize prompt still carries iteration 1's figures
# beside its own; a task whose perf script counts nothing says so.
. "$(dirname "$0")/lib.sh"
. "$top/tests/06lib.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq is needed"
plan 15

cat > script.jsonl <<'EOS'
{"match": "was timed against the reference", "text": "```reflection\nIt reads every element once.\n```"}
{"match": "ascending order of performance", "text": "{\"strategy\": \"wider loads\", \"code\": \"# faster {count}\\n\"}"}
EOS
start_llm script.jsonl

# evaluated ID CODE ITER SPEEDUP SHAPES: a correct, timed candidate.
evaluated() {
	sha=$(printf '%s' "$2" | sha256sum | cut -d' ' -f1)
	jq -nc --arg id "$1" --arg code "$2" --arg sha "$sha" --argjson iter "$3" \
		--argjson speedup "$4" --argjson shapes "$5" '{id: $id, run: 0, sample: 0,
		iter: $iter, task: {suite: "plain", name: $id, instruction: "Add two vectors.",
		reference: "def add(x, y):\n    return x + y\n", test: "", signatures: ["def add(x, y)"]},
		code: $code, code_sha: $sha, mode: "first",
		eval: {code_sha: $sha, call: true, exec: true, speedup: $speedup, stage: "done",
		reason: null, flags: [], notes: [], device: "NVIDIA H200", shapes: $shapes}}' |
		roof-fill
}
# Vector add of 2^26 float32 (805 MB, 67 MFLOP a call) at 0.5 ms, the
# reference at 0.55 ms; a small case that takes a tenth of the time.
shapes1='[{"shape": [67108864], "ms": 0.5, "ms_ref": 0.55, "gbps": 1610.6, "tflops": 0.1342, "dtype": "float32"},
	{"shape": [1024], "ms": 0.005, "ms_ref": 0.006, "gbps": 2.46, "tflops": 0.0002, "dtype": "float32"}]'
evaluated plain/add "# first" 1 1.1 "$shapes1" > evaluated-1.jsonl

GEAK_VERBOSE= geak-iter.sh next evaluated-1.jsonl iter-2.jsonl 2 2> next1.err
check_same "iteration 1 -> 2: the step exits 0" 0 $?
reflect=$(llm_prompt_with "was timed against the reference")
check_match "reflection prompt: the large case against HBM" \
	'shape \[67108864\]: 34% of HBM bandwidth, the reference 30%; intensity 0.0833 FLOP/byte, ridge 103; memory-bound' \
	"$reflect"
check_match "reflection prompt: the tiny case is latency-bound" \
	'shape \[1024\]: 0.0050 ms; under 0.1% of HBM bandwidth, the reference under 0.1%; intensity 0.0813 FLOP/byte, ridge 103; latency-bound$' "$reflect"
opt1=$(llm_prompt_with "ascending order of performance")
check_match "iteration 1's optimize prompt carries its figures" \
	'Against the device.s roofs.*shape \[67108864\]: 34% of HBM bandwidth, the reference 30%;.*memory-bound' \
	"$(printf '%s' "$opt1" | tr '\n' ' ')"
check_same "the new candidate is iteration 2's, made in optimize mode" '[2,"optimize","# faster 2\n"]' \
	"$(jq -c '[.iter, .mode, .code]' iter-2.jsonl)"
check_same "its best list keeps iteration 1's roofline" '"memory"' \
	"$(jq -c '.best[0].perf.shapes[0].roofline.bound' iter-2.jsonl)"

# Iteration 2's candidate, timed: twice as fast on the large case.
shapes2='[{"shape": [67108864], "ms": 0.25, "ms_ref": 0.55, "gbps": 3221.2, "tflops": 0.2684, "dtype": "float32"},
	{"shape": [1024], "ms": 0.005, "ms_ref": 0.006, "gbps": 2.46, "tflops": 0.0002, "dtype": "float32"},
	{"shape": [512], "ms": 0.004, "ms_ref": 0.004, "gbps": 1.54, "tflops": 0.0001, "dtype": "float32"},
	{"shape": [256], "ms": 0.004, "ms_ref": 0.004, "gbps": 0.77, "tflops": 0.0001, "dtype": "float32"}]'
evaluated plain/add "# faster 2
" 2 2.2 "$shapes2" > e2.jsonl
jq -c --slurpfile prev iter-2.jsonl '.best = $prev[0].best | .perf_debug = 0' e2.jsonl > evaluated-2.jsonl
: > llm.log
geak-iter.sh next evaluated-2.jsonl iter-3.jsonl 3 2> next2.err
check_same "iteration 2 -> 3: the step exits 0" 0 $?
opt2=$(llm_prompt_with "ascending order of performance" | tr '\n' ' ')
check_match "iteration 2's optimize prompt: iteration 1's figures, then its own" \
	'Implementation 1 .*Speedup over the reference: 1.100x.*34% of HBM bandwidth, the reference 30%.*Implementation 2 .*Speedup over the reference: 2.200x.*67% of HBM bandwidth, the reference 30%.*memory-bound' \
	"$opt2"
check_match "the case left out is said to be" '1 shorter case not shown' "$opt2"
check_same "best: both, with their bounds" '[[1.1,"memory"],[2.2,"memory"]]' \
	"$(jq -c '[.best[] | [.speedup, .perf.shapes[0].roofline.bound]]' iter-3.jsonl)"

# The report: a roofline plot of the task, the best candidate's cases
# beside the reference's at the same intensity.
geak-select -s summary.json -r report.html evaluated-1.jsonl evaluated-2.jsonl iter-3.jsonl > best.jsonl
check_same "summary: the best candidate's and the reference's points" \
	'{"dtype":"tf32","peak_tflops":495,"hbm_gbps":4800,"best":[[0.0833,0.2684,"memory"],[0.0813,0.0002,"latency"]],"reference":[[0.0833,0.122,"memory"],[0.0813,0.0002,"latency"]]}' \
	"$(jq -c '.kernels[0].roofline | {dtype, peak_tflops, hbm_gbps,
		best: [.best[:2][] | [(.intensity * 1e4 | round / 1e4), (.tflops * 1e4 | round / 1e4), .bound]],
		reference: [.reference[:2][] | [(.intensity * 1e4 | round / 1e4), (.tflops * 1e4 | round / 1e4), .bound]]}' summary.json)"
check_match "report: the roofline plot, its roofs and points" \
	'Roofline: plain/add.*\[67108864\]: 0.268 TFLOP/s, memory-bound.*Roofs: 4800 GB/s of HBM bandwidth, 495 tf32 TFLOP/s, ridge at 103 FLOP/byte' \
	"$(tr '\n' ' ' < report.html)"
check_match "... the reference's rings drawn after the kernel's dots, and wider" \
	'Roofline: plain/add.*<circle [^>]*r="4\.5" fill="#[0-9a-f]*".*<circle [^>]*r="7\.5" fill="none".*Roofs:' \
	"$(tr '\n' ' ' < report.html)"

# A perf script that gives no byte or operation counts: said, not guessed.
evaluated plain/nocount "# plain" 1 1.3 '[{"shape": [4096], "ms": 0.2, "ms_ref": 0.26}]' > nocount.jsonl
: > llm.log
geak-iter.sh next nocount.jsonl iter-nc.jsonl 2 2> nc.err
check_same "no counts: the step exits 0" 0 $?
check_match "no counts: the prompts say so" 'give no byte or operation counts: no roofline figures' \
	"$(llm_prompt_with "ascending order of performance" | tr '\n' ' ')"
done_testing
