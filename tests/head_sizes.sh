#!/usr/bin/env bash
# The head-size sweep (cases/head_sizes/, `slow`; tools/head_sizes.py) at one configuration:
#   8_lanes          lavapipe's default kernels (the lanes kernel, the tiles kernel where the
#                    heads do not fit it) at 8 lanes;
#   storage_loads    the same with KVBENCH_TEXELS=0 (the loaders' storage-buffer paths);
#   gpu              the tiles kernel forced (KVBENCH_KERNEL=gpu), any width: it has no
#                    subgroup operation;
#   decode_4_lanes, decode_8_lanes, decode_16_lanes
#                    the decode kernel forced at LP_NATIVE_VECTOR_WIDTH 128, 256, 512 (its P.V
#                    divides a V row among SG lanes); at 1024 bits lavapipe breaks its promise
#                    of 32-lane subgroups (specs/runtime.md) and the kernel refuses it;
#   32_lanes         (label slow) every case of the sweep at 1024 bits: the lanes kernel with
#                    subgroups of 32.
# MODE run (default): the cases of tests/data/head_sizes/CONFIG.txt, the fewest that compile
# every head variant (a body and operator at each class of head sizes that changes its lane
# arithmetic) the whole sweep compiles there; all must pass with no SKIP. MODE --check: the
# list still holds every head variant of the sweep (`kvbench list --pipelines`, nothing
# compiled), and the sweep's files and the shaders' constants are what tools/head_sizes.py
# derives. MODE --all: every case of the sweep (label slow).
# Width configurations share the Mesa shader caches of tests/subgroup_widths.sh. Exit 77 (a
# CTest skip) when the default device is not lavapipe.
# Usage: head_sizes.sh KVBENCH SOURCE_DIR WORK_DIR CONFIG [--check|--all]
set -euo pipefail
kvbench=$1 src=$2 work=$3 config=$4 mode=${5:-run}
list="$src/tests/data/head_sizes/$config.txt"
sweep="$src/cases/head_sizes"
mkdir -p "$work" "$work/../subgroup_widths"
# The lanes kernel at 4 lanes per item (its LANES 4 configurations) for every decode that fits
# them, not only the long ones the rule gives them to (kFourLanesMinKeyRows).
export KVBENCH_FOUR_LANES=all
width=256
case $config in
  8_lanes) ;;
  storage_loads) export KVBENCH_TEXELS=0 ;;
  gpu) export KVBENCH_KERNEL=gpu ;;
  decode_4_lanes | decode_8_lanes | decode_16_lanes)
    lanes=${config#decode_}
    width=$((${lanes%_lanes} * 32))
    export KVBENCH_KERNEL=decode ;;
  32_lanes) width=1024 ;;
  *) echo "unknown configuration $config"; exit 2 ;;
esac
export LP_NATIVE_VECTOR_WIDTH=$width MESA_SHADER_CACHE_DIR="$work/../subgroup_widths/mesa-cache-$width"
if ! "$kvbench" devices | grep -q '^\* .*llvmpipe'; then
  echo "SKIP: the default Vulkan device is not lavapipe, whose subgroup width LP_NATIVE_VECTOR_WIDTH sets"
  exit 77
fi
. "$src/tests/find_python.sh"
require_python json

if [ "$mode" = --check ]; then
  status=0
  $python "$src/tools/head_sizes.py" check-cases "$sweep" || status=1
  $python "$src/tools/head_sizes.py" check-spirv "$(dirname "$kvbench")/spv" || status=1
  "$kvbench" list "$sweep" --slow include --pipelines > "$work/$config.full.txt"
  "$kvbench" list "$sweep" --slow include --pipelines --cases-from "$list" > "$work/$config.list.txt"
  if ! $python "$src/tools/head_sizes.py" check-pick "$work/$config.list.txt" "$work/$config.full.txt"; then
    env_prefix="${KVBENCH_KERNEL:+KVBENCH_KERNEL=$KVBENCH_KERNEL }${KVBENCH_TEXELS:+KVBENCH_TEXELS=$KVBENCH_TEXELS }"
    echo "FAIL: $list misses head variants; make it anew:"
    echo "  ${env_prefix}LP_NATIVE_VECTOR_WIDTH=$width $kvbench list cases/head_sizes --slow include --pipelines > full.txt"
    echo "  $python tools/head_sizes.py pick full.txt $config > tests/data/head_sizes/$config.txt"
    status=1
  fi
  exit $status
fi

selection=(--cases-from "$list")
[ "$mode" = --all ] && selection=()
. "$src/tests/run_all_pass.sh"
run_all_pass "the head-size sweep at $config ($mode)" -- "$sweep" --slow include "${selection[@]}"
