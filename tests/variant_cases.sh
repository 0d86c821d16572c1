#!/usr/bin/env bash
# The attention cases of tests/data/variants/CONFIG.txt (tools/pick_variant_cases.py: a few
# cases that compile every code variant of the attention pipelines, as that configuration
# changes them) at one configuration:
#   4_lanes, 16_lanes  lavapipe at LP_NATIVE_VECTOR_WIDTH 128 or 512 (with KVBENCH_FOUR_LANES=all), each width with the
#                      Mesa shader cache that tests/subgroup_widths.sh uses for it (Mesa's
#                      cache key ignores the width: a shared cache would run another width's code);
#   decode_4_lanes, decode_8_lanes, decode_16_lanes
#                      KVBENCH_KERNEL=decode (the decode kernel, a GPU's, which lavapipe
#                      never picks by itself) at LP_NATIVE_VECTOR_WIDTH 128, 256 or 512.
# All must pass with no SKIP. With --check, instead: the list still holds every code variant
# that the whole attention suite compiles at CONFIG (`kvbench list --pipelines`, no case run).
# Exit 77 (a CTest skip) for a width when the default device is not lavapipe.
# Usage: variant_cases.sh KVBENCH SOURCE_DIR WORK_DIR CONFIG [--check]
set -euo pipefail
kvbench=$1 src=$2 work=$3 config=$4 mode=${5:-run}
list="$src/tests/data/variants/$config.txt"
attention=("$src/cases/aclnn.FusedInferAttentionScoreV3" "$src/cases/pmx.dynamic_batching.MultiHeadCacheAttention"
           "$src/cases/dnnl.SDPACompressedKV")
# ggml.FLASH_ATTN_EXT's variants (a pipeline per K and V type and head size) in the decode
# lists only (label full): at 4 and 16 lanes its every case runs in full.attention_*_lanes
# (tests/subgroup_widths.sh), and its 21 cases there took some 50 s of the README's command.
[[ $config == decode_* ]] && attention+=("$src/cases/ggml.FLASH_ATTN_EXT")
mkdir -p "$work"
case $config in
  4_lanes | 16_lanes | decode_4_lanes | decode_8_lanes | decode_16_lanes)
    lanes=${config#decode_}
    lanes=${lanes%_lanes}
    width=$((lanes * 32))
    [[ $config == decode_* ]] && export KVBENCH_KERNEL=decode
    # Items of 4 lanes for every decode that fits them (the lanes kernel at 16 lanes): its
    # LANES-4 variants through short cases, not only through the long decodes the rule
    # gives them to (kFourLanesMinKeyRows), whose goldens took 10 s more.
    export KVBENCH_FOUR_LANES=all
    export LP_NATIVE_VECTOR_WIDTH=$width MESA_SHADER_CACHE_DIR="$work/../subgroup_widths/mesa-cache-$width"
    # Mesa creates the cache folder but not its parent: without it the cache is off.
    mkdir -p "$work/../subgroup_widths"
    if ! "$kvbench" devices | grep -q '^\* .*llvmpipe'; then
      echo "SKIP: the default Vulkan device is not lavapipe, whose subgroup width LP_NATIVE_VECTOR_WIDTH sets"
      exit 77
    fi
    if ! "$kvbench" devices | grep -q "subgroup size $lanes ("; then
      echo "FAIL: LP_NATIVE_VECTOR_WIDTH=$width should give lavapipe subgroups of $lanes lanes"
      exit 1
    fi ;;
  *) echo "unknown configuration $config"; exit 2 ;;
esac

if [ "$mode" = --check ]; then
  . "$src/tests/find_python.sh"
  require_python json
  "$kvbench" list "${attention[@]}" --pipelines > "$work/$config.full.txt"
  "$kvbench" list "${attention[@]}" --pipelines --cases-from "$list" > "$work/$config.list.txt"
  if ! $python "$src/tools/pick_variant_cases.py" --check "$work/$config.list.txt" "$work/$config.full.txt" --config "$config"; then
    echo "FAIL: $list misses code variants; make it anew from the full suite's pipelines (in this"
    echo "configuration's environment; see tests/variant_cases.sh):"
    env_prefix="${KVBENCH_KERNEL:+KVBENCH_KERNEL=$KVBENCH_KERNEL }${KVBENCH_FOUR_LANES:+KVBENCH_FOUR_LANES=$KVBENCH_FOUR_LANES }${LP_NATIVE_VECTOR_WIDTH:+LP_NATIVE_VECTOR_WIDTH=$LP_NATIVE_VECTOR_WIDTH }"
    echo "  $env_prefix$kvbench list ${attention[*]} --pipelines > full.txt"
    echo "  $python tools/pick_variant_cases.py full.txt --config $config > tests/data/variants/$config.txt"
    exit 1
  fi
  exit 0
fi

. "$src/tests/run_all_pass.sh"
run_all_pass "the cases of $list at $config" -- "${attention[@]}" --cases-from "$list"
