#!/usr/bin/env bash
# The PyTorch backends of examples/torch (README "PyTorch backends"): every default case of
# dnnl.SDPACompressedKV, pmx.dynamic_batching.MultiHeadCacheAttention and pmx.KeyValueCache
# (and FusedInferAttentionScoreV3's f16/bf16/f32 and antiquant cases) computed by torch from
# the golden's inputs passes kvbench's comparator, as PMX / oneDNN / Ascend compute it and as
# each permitted implementation of --variant does (specs/comparison.md: P unrounded, the
# unnormalized exp rounded, K and V in the query's dtype): no case fails, none is excepted
# (torch's 0 * inf at a masked key inside the sequence is permitted: specs/golden-format.md);
# a slice goes through `kvbench run --backend` itself, an operator the backend lacks is a
# SKIP (exit 77), never a pass, and each planted error fails.
# Needs Debian's python3-torch (tools/setup.sh --torch): without it the test skips (77), or
# fails when KVBENCH_REQUIRE_TORCH=1 (.ci/run).
# Usage: torch_backends.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
py=/usr/bin/python3
if ! $py -c "import torch, numpy, xxhash" 2> /dev/null; then
  echo "no /usr/bin/python3 with torch, numpy and xxhash (tools/setup.sh --torch installs python3-torch)"
  [ "${KVBENCH_REQUIRE_TORCH:-0}" = 1 ] && { echo "FAIL: KVBENCH_REQUIRE_TORCH=1"; exit 1; }
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/tmp"
export TMPDIR="$work/tmp"
cd "$src"
fail=0
# The names of the failed cases of a `kvbench check` log, sorted, one line.
failed_names() { grep -E "^ +[0-9]+ FAIL " "$1" | grep -v "no actual output file" | awk '{print $3}' | sort | xargs; }
ops="cases/dnnl.SDPACompressedKV cases/pmx.dynamic_batching.MultiHeadCacheAttention cases/pmx.KeyValueCache"
backend="$py examples/torch/torch_backend.py"
variants=("" "--variant flash" "--variant unnormalized_exp" "--variant kv_query_dtype")
# shellcheck disable=SC2086
count=$("$kvbench" list $ops | tail -1 | cut -d' ' -f1)
start=$SECONDS
# shellcheck disable=SC2086
"$kvbench" golden $ops -o "$work/golden" --jobs 2 > "$work/golden.log" 2>&1 || { tail "$work/golden.log"; exit 1; }
echo "ok: $count goldens in $((SECONDS - start)) s"
# The variants change attention only: KeyValueCache's goldens run as computed, the attention
# operators' with every variant (a folder of their goldens beside).
mkdir -p "$work/attention_golden"
for f in "$work/golden"/*.json; do
  grep -q '"op": "pmx.KeyValueCache"' "$f" && continue
  ln -s "$f" "$work/attention_golden/" && ln -s "${f%.json}.safetensors" "$work/attention_golden/"
done
attention_count=$(find "$work/attention_golden" -name '*.json' | wc -l)
for variant in "${variants[@]}"; do
  start=$SECONDS
  rm -rf "$work/actual"
  golden="$work/golden" want=$count
  [ -n "$variant" ] && golden="$work/attention_golden" want=$attention_count
  # shellcheck disable=SC2086
  $backend "$golden" "$work/actual" $variant > "$work/torch.log" 2>&1 || { tail "$work/torch.log"; fail=1; }
  "$kvbench" check --golden "$golden" --actual "$work/actual" > "$work/check.log" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -q "^$want passed, 0 failed, 0 skipped" "$work/check.log"; then
    echo "ok: torch backend ${variant:-(PMX / oneDNN precision)}: $want cases passed in $((SECONDS - start)) s"
  else
    echo "FAIL: torch backend $variant: check exit $rc, want all $want cases passed; failed: $(failed_names "$work/check.log")"
    grep -E "FAIL|passed," "$work/check.log" | head; fail=1
  fi
done

# FusedInferAttentionScoreV3: every case of its f16/bf16/f32 and antiquant modes passes, as
# computed and with each variant; the full-int8 and post-quant cases are not implemented
# (exit 77), so they have no actual file, and nothing else lacks one.
fia=cases/aclnn.FusedInferAttentionScoreV3
"$kvbench" golden $fia -o "$work/fia_golden" --jobs 2 > "$work/fia_golden.log" 2>&1 || { tail "$work/fia_golden.log"; exit 1; }
for variant in "${variants[@]}"; do
  start=$SECONDS
  rm -rf "$work/fia_actual"
  # shellcheck disable=SC2086
  $backend "$work/fia_golden" "$work/fia_actual" $variant > "$work/fia_torch.log" 2>&1
  rc=$?
  "$kvbench" check --golden "$work/fia_golden" --actual "$work/fia_actual" > "$work/fia_check.log" 2>&1
  skipped=$(grep -c "^not implemented: " "$work/fia_torch.log")
  failed=$(grep -cE "^ +[0-9]+ FAIL " "$work/fia_check.log")
  missing=$(grep -cE "^ +[0-9]+ FAIL .* no actual output file " "$work/fia_check.log")
  passed=$(grep -oE "^[0-9]+ passed" "$work/fia_check.log" | cut -d' ' -f1)
  if [ $rc = 77 ] && [ "$skipped" -gt 0 ] && [ "$missing" = "$skipped" ] && [ "$failed" = "$skipped" ] &&
    [ "${passed:-0}" -gt 300 ]; then
    echo "ok: torch FIA backend ${variant:-(as the Ascend device computes)}: $passed cases passed, $skipped not implemented" \
      "(full int8, post-quant) in $((SECONDS - start)) s"
  else
    echo "FAIL: torch FIA backend $variant: exit $rc, $passed passed, $failed failed, $missing without a file," \
      "$skipped not implemented; failed: $(failed_names "$work/fia_check.log")"
    fail=1
  fi
done

. "$src/tests/check_command.sh"  # check NAME WANT_EXIT WANT_TEXT -- kvbench args...
mhca=cases/pmx.dynamic_batching.MultiHeadCacheAttention/layouts.json
slice_mhca='cache_layout=3,cache_mode=1,head_dim=64,quant_bit=4|cache_layout=0,cache_mode=0,head_dim=128,quant_bit=8'
check loop_mhca 0 "2 passed, 0 failed, 0 skipped" -- run $mhca --filter "$slice_mhca" --backend "$backend {golden} {actual}"
sdpa=cases/dnnl.SDPACompressedKV/edges.json
check loop_sdpa 0 "2 passed, 0 failed, 0 skipped" -- run $sdpa --filter 'S_kv=257,key=u4' --backend "$backend {golden} {actual}"
kvc=cases/pmx.KeyValueCache/quantized.json
slice_kvc='cache_layout=1,current_key=f16,layer_idx=2,num_repeat=4,quant_bit=[48],quant_group=8,start_pos=7'
check loop_kvc 0 "2 passed, 0 failed, 0 skipped" -- run $kvc --filter "$slice_kvc" --backend "$backend {golden} {actual}"
check loop_not_implemented 1 "all 1 cases of kvbench.DequantizeGroup skipped, e.g.: not implemented by the backend" -- \
  run cases/kvbench.DequantizeGroup/ppl.json $kvc --filter "$slice_kvc|dqg_ppl.bits=8,group_size=1,scale=f16,y=f16" \
  --backend "$backend {golden} {actual}"
# The planted errors fail.
check plant_sdpa 1 "0 passed, 2 failed" -- run $sdpa --filter 'S_kv=257,key=u4' \
  --backend "$backend {golden} {actual} --plant sdpa_zero_point_added"
check plant_mhca 1 "0 passed, 2 failed" -- run $mhca --filter "$slice_mhca" \
  --backend "$backend {golden} {actual} --plant mhca_causal_top_left"
check plant_kvc 1 "0 passed, 2 failed" -- run $kvc --filter "$slice_kvc" --backend "$backend {golden} {actual} --plant kvc_truncate"
check plant_fia 1 "0 passed, 2 failed" -- run $fia/decode_gqa.json --filter 'numKeyValueHeads=(4|16)\]' \
  --backend "$backend {golden} {actual} --plant fia_gqa_interleaved"
check loop_fia 0 "1 passed, 0 failed, 1 skipped" -- run $fia/decode_gqa.json $fia/full_int8.json \
  --filter 'fia_decode_gqa.numKeyValueHeads=8\]|fia_full_int8.attentionOut=f16,inputLayout=BNSD\]' \
  --backend "$backend {golden} {actual}"
exit $fail
