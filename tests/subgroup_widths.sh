#!/usr/bin/env bash
# Every attention operator's default cases on lavapipe at another subgroup width:
# LP_NATIVE_VECTOR_WIDTH=128 (4 lanes: the gpu attention kernel runs every case) or 512
# (16 lanes: the cpu kernel runs the heads it fits, the gpu kernel the rest). All must
# pass with no SKIP at all. Mesa's shader cache key ignores LP_NATIVE_VECTOR_WIDTH for
# shaders that do not read gl_SubgroupSize, so each width gets its own MESA_SHADER_CACHE_DIR
# (under WORK_DIR, kept between runs): a shared one would silently run another width's code.
# With KERNEL (gpu, cpu or decode) the run has KVBENCH_KERNEL=KERNEL: `decode` runs the
# decode kernel, which lavapipe never picks by itself, on every case whose heads it fits.
# Exit 77 (a CTest skip) when the default device is not lavapipe.
# Usage: subgroup_widths.sh KVBENCH SOURCE_DIR WORK_DIR LP_NATIVE_VECTOR_WIDTH [KERNEL]
set -euo pipefail
kvbench=$1 src=$2 work=$3 width=$4
lanes=$((width / 32))
if [[ -n ${5:-} ]]; then
  export KVBENCH_KERNEL=$5
  lanes_label="$lanes lanes, KVBENCH_KERNEL=$5"
else
  lanes_label="$lanes lanes"
fi
mkdir -p "$work"
# Items of 4 lanes for every decode that fits them, not only the long ones the rule gives
# them to (src/ops/attention/attention_plan.hpp, kFourLanesMinKeyRows): each code variant at
# 4 lanes per item on subgroups of 16 too.
export KVBENCH_FOUR_LANES=all
export LP_NATIVE_VECTOR_WIDTH=$width MESA_SHADER_CACHE_DIR="$work/mesa-cache-$width"
devices=$("$kvbench" devices)
if ! grep -q '^\* .*llvmpipe' <<<"$devices"; then
  echo "SKIP: the default Vulkan device is not lavapipe, whose subgroup width LP_NATIVE_VECTOR_WIDTH sets"
  exit 77
fi
if ! grep -q "subgroup size $lanes (" <<<"$devices"; then
  echo "FAIL: LP_NATIVE_VECTOR_WIDTH=$width should give lavapipe subgroups of $lanes lanes:"
  echo "$devices"
  exit 1
fi
status=0
for op in aclnn.FusedInferAttentionScoreV3 pmx.dynamic_batching.MultiHeadCacheAttention dnnl.SDPACompressedKV \
  ggml.FLASH_ATTN_EXT; do
  start=$SECONDS
  if ! out=$("$kvbench" run "$src/cases/$op" 2>&1); then
    echo "$out" | grep -vE '^ +[0-9]+ PASS ' | tail -60
    echo "FAIL: $op at $lanes_label (kvbench run exited non-zero)"
    status=1
    continue
  fi
  summary=$(grep -E '^[0-9]+ passed, ' <<<"$out" | tail -1)
  echo "ok: $op at $lanes_label: $summary ($((SECONDS - start)) s)"
  if ! grep -q ' 0 skipped$' <<<"$summary"; then
    grep -E '^ +[0-9]+ SKIP ' -A1 <<<"$out" | head -20
    echo "FAIL: $op at $lanes_label: cases skipped"
    status=1
  fi
done
exit $status
