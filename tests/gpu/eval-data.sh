#!/bin/sh
# Make the record files that tests/gpu/full-check.sh reads,
# here (geak-import needs libarchive, which the GPU machine may lack), into
# DIR (default out/gpu; out/ is ignored by git, so it must be carried):
# smoke-tbg.jsonl and smoke-rocm.jsonl (the smoke sets of
# benchmarks-and-metrics.md §8), cheats.jsonl (tests/cheats as plain
# tasks) and all.jsonl (every TritonBench and ROCm reference, with
# TritonBench's original kernels for the 12 that GEAK-eval rewrote for
# AMD's libdevice, which cannot run on NVIDIA) and recheck.jsonl (the
# references that failed or were not reached in the last full correctness
# run on an H200, to see a fix for them in one short step) and retime.jsonl
# (the ROCm files that run on NVIDIA, whose timing changed, first; then
# the TritonBench references whose fixes the last timed run did not see,
# and those it did not reach) and fails.jsonl (the references that run
# upstream on an H200 but did not pass, or were not reached, in the last
# timed runs) and still.jsonl (those of fails.jsonl that failed in the
# last stop's runs for causes on the candidate's side, or did not end)
# and autotuned.jsonl (the references that use @triton.autotune: what
# changes when autotuner searches do) and verify.jsonl (references whose
# verdicts the last changes aim at: scatters whose races a candidate's
# process decides otherwise, outputs that depend on an autotuner's
# choice, outputs that look unwritten where a block held their values,
# the probe's kept arguments, calibrations once killed at the memory
# limit; and some that must stay passing).
#
#   tests/gpu/eval-data.sh [geak-eval-data.tar.gz [DIR]]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$top/../shared/bench/geak-eval-data.tar.gz}
dir=${2:-$top/out/gpu}
mkdir -p "$dir"
imp=$top/bin/geak-import
"$imp" --suite tbg --as-candidate --ids vector_addition_custom,relu_triton_kernel,sin_kernel,softmax_triton1,rmsnorm_implementation,chunk_gla_simple,embedding_triton_kernel,rotary_emb,int8_quantization,cross_entropy2 \
	"$src" > "$dir/smoke-tbg.jsonl"
"$imp" --suite rocm --as-candidate --ids test_add_kernel,naive_softmax,test_load_reduce,test_reverse_range,test_triton_swizzle2d,test_block_copy,test_batched_vecmat,test_iv_dependent_matmul,test_block_pointer_matmul,test_flashattention_fwd \
	"$src" > "$dir/smoke-rocm.jsonl"
orig=$(dirname "$src")/tritonbench-g-data.tar.gz
"$imp" --suite all --as-candidate --original-hip "$orig" "$src" > "$dir/all.jsonl"
recheck='"tbg/decay_cumsum","tbg/dequantize_matmul","tbg/fused_layernorm_triton","tbg/index_select_bwd",
"tbg/kv_cache_filling","tbg/layer_norm_welfold","tbg/parallel_attention","tbg/quantize_copy_kv",
"tbg/apply_penalty","tbg/context_attn_llama","tbg/fused_rotary_embedding","tbg/rotary_emb_nopad",
"tbg/token_attn_llama2","tbg/quantize_kv_copy","tbg/chunk_retention_ops","tbg/int8_dequant_matmul",
"rocm/layernorm","rocm/softmax","rocm/rmsnorm_fwd","rocm/rmsnorm_bwd"'
jq -c "select(.id | IN($recheck))" "$dir/all.jsonl" > "$dir/recheck.jsonl"
retime_rocm='"rocm/naive_softmax","rocm/moe_gemm","rocm/layernorm","rocm/test_add_kernel",
"rocm/test_batched_vecmat","rocm/softmax","rocm/test_block_copy","rocm/test_block_pointer_matmul",
"rocm/test_cast_matmul","rocm/test_chained_matmul","rocm/test_flashattention_fwd","rocm/test_gemm_fusion",
"rocm/test_gemm_no_scf","rocm/test_iv_dependent_matmul","rocm/test_load_reduce","rocm/rmsnorm_fwd",
"rocm/test_reverse_range","rocm/test_tma_store_gemm","rocm/test_triton_swizzle2d","rocm/test_triton_sort"'
retime_tbg='"tbg/chunk_retention","tbg/apply_penalty","tbg/context_attn_fwd","tbg/context_attn_llama",
"tbg/rope_embedding","tbg/attention_fwd_triton1","tbg/chunked_cumsum_fwd","tbg/context_attn_nopad",
"tbg/fast_rope_embedding","tbg/fused_recurrent_hgrn","tbg/ksoftmax_triton","tbg/layernorm_fwd_triton",
"tbg/matrix_vector_multip","tbg/rotary_transform","tbg/rotary_transform_ops","tbg/rowwise_quantization_triton"'
{ jq -c "select(.id | IN($retime_rocm))" "$dir/all.jsonl"
  jq -c "select(.id | IN($retime_tbg))" "$dir/all.jsonl"; } > "$dir/retime.jsonl"
fails='"rocm/layernorm","rocm/softmax","tbg/chunk_gla_fwd","tbg/chunk_gla_simple","tbg/chunk_bwd_dqkg",
"tbg/chunk_retention","tbg/fused_recurrent_hgrn","tbg/matrix_vector_multip","tbg/fast_rope_embedding",
"tbg/decay_cumsum","tbg/dequantize_matmul","tbg/kv_cache_filling","tbg/layer_norm_welfold",
"tbg/quantize_copy_kv","tbg/quantize_kv_copy","tbg/quantize_kv_transform","tbg/rotary_emb_nopad",
"tbg/parallel_attention","tbg/token_attn_llama2","tbg/destindex_copy","tbg/destindex_copy_kv1",
"tbg/destindex_copy_kv2","tbg/matmul_kernel","tbg/triton_attention","rocm/test_triton_sort","rocm/rmsnorm_fwd"'
jq -c "select(.id | IN($fails))" "$dir/all.jsonl" > "$dir/fails.jsonl"
still='"tbg/destindex_copy_kv2","tbg/destindex_copy_kv1","tbg/triton_attention","tbg/quantize_copy_kv",
"tbg/chunk_gla_simple","tbg/chunk_gla_fwd","tbg/quantize_kv_transform","tbg/kv_cache_filling",
"tbg/quantize_kv_copy","tbg/destindex_copy","tbg/layer_norm_welfold","tbg/token_attn_llama2",
"tbg/rotary_emb_nopad","tbg/parallel_attention","tbg/fast_rope_embedding","tbg/fused_recurrent_hgrn",
"tbg/matrix_vector_multip"'
jq -c "select(.id | IN($still))" "$dir/all.jsonl" > "$dir/still.jsonl"
jq -c 'select(.task.reference | contains("autotune"))' "$dir/all.jsonl" > "$dir/autotuned.jsonl"
verify='"tbg/kv_cache_copy","tbg/kv_cache_filling","tbg/var_len_copy","tbg/quantize_kv_copy",
"tbg/quantize_copy_kv","tbg/quantize_kv_transform","tbg/index_select_bwd","tbg/destindex_copy_kv1",
"tbg/destindex_copy_kv2","tbg/layer_norm_welfold","tbg/int4_matmul","tbg/matmul_dequant_int4",
"tbg/fused_layernorm_triton","tbg/layer_norm_ops","tbg/decay_cumsum","tbg/token_attn_reduceV",
"tbg/cross_entropy_ops","rocm/rmsnorm_fwd","tbg/relu_triton_kernel","tbg/ksoftmax_triton"'
jq -c "select(.id | IN($verify))" "$dir/all.jsonl" > "$dir/verify.jsonl"
long='"tbg/chunk_retention_ops","tbg/chunk_retention","tbg/chunk_gated_attention","tbg/chunk_delta_fwd",
"tbg/chunk_gla_fwd","tbg/chunk_gla_simple","tbg/chunk_bwd_dqkg","tbg/chunk_linear_attn",
"tbg/chunk_gate_recurrence","tbg/chunk_cumsum_kernel","tbg/chunk_cumsum_vector","tbg/chunked_cumsum_fwd",
"tbg/fused_recurrent_hgrn","tbg/fused_recurrent_delta","tbg/fused_recurrent_retention",
"tbg/parallel_retention_attention","tbg/matmul_dequant_int4","rocm/rmsnorm_fwd","tbg/attention_fwd_triton1",
"tbg/fast_rope_embedding","tbg/destindex_copy","tbg/int4_matmul"'
{ jq -c "select(.id | IN($long))" "$dir/all.jsonl"
  jq -c "select(.id | IN($long) | not)" "$dir/all.jsonl"; } > "$dir/long.jsonl"
bias='"tbg/apply_penalty","tbg/attention_llama","tbg/cache_transform_triton","tbg/add_value",
"tbg/adam_update_triton","tbg/batched_vecmat_mult","tbg/attention_fwd_triton2","tbg/bgmv_shrink_kernel"'
{ cat "$dir/smoke-tbg.jsonl" "$dir/smoke-rocm.jsonl"
  jq -c "select(.id | IN($bias))" "$dir/all.jsonl"; } > "$dir/bias.jsonl"
c=$top/tests/cheats
for f in "$c"/*.py; do
	case $f in */add_*) continue ;; esac
	jq -nc --rawfile ref "$c/add_reference.py" --rawfile test "$c/add_test.py" \
		--rawfile perf "$c/add_perf.py" --rawfile code "$f" --arg name "$(basename "$f" .py)" \
		'{schema: 1, id: "plain/add", cheat: $name, code: $code,
		  task: {suite: "plain", name: "add", reference: $ref, test: $test, perf: $perf}}'
done > "$dir/cheats.jsonl"
for f in "$c"/tbg/*.py; do
	case $f in */tbg/reference.py|*/tbg/test.py) continue ;; esac
	jq -nc --rawfile ref "$c/tbg/reference.py" --rawfile test "$c/tbg/test.py" --rawfile code "$f" \
		--arg name "tbg-$(basename "$f" .py)" \
		'{schema: 1, id: "tbg/addk", cheat: $name, code: $code,
		  task: {suite: "tbg", name: "addk", reference: $ref, test: $test}}'
done >> "$dir/cheats.jsonl"
wc -l "$dir"/*.jsonl
