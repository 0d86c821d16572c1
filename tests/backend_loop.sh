#!/usr/bin/env bash
# `kvbench run --backend CMD`: another implementation in the loop. A real second
# implementation (tools/fia_reference.py, numpy) passes FIA cases; the example backend passes
# DequantizeGroup (computed) and an echoing operator; a backend that is wrong, fails, hangs or
# writes nothing fails its case with the reason, and the run goes on to the next case.
# Usage: backend_loop.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python numpy
rm -rf "$work" && mkdir -p "$work/tmp"
# kvbench makes each backend's folder under TMPDIR: a TMPDIR of this test's own, so that
# the leftover check below does not count the live folders of tests running beside it
# (shrink also runs backends; CI's `ctest -j2` once ran the two together and this failed).
export TMPDIR="$work/tmp"
cd "$src"
fail=0
. "$src/tests/check_command.sh"  # check NAME WANT_EXIT WANT_TEXT -- kvbench args...
fia="cases/aclnn.FusedInferAttentionScoreV3"
few='group_size=5,scale=f16,.*y=f16'  # a few DequantizeGroup cases
check fia_reference 0 "4 passed, 0 failed" -- run "$fia/antiquant_paged.json" --filter 'keyAntiquantMode=[01]' \
  --backend "$python tools/fia_reference.py {golden} {actual}"
check post_quant_reference 0 "4 passed, 0 failed" -- run "$fia/post_quant.json" --filter 'inputLayout=BNSD' \
  --backend "$python tools/fia_reference.py {golden} {actual}"
check example_computed 0 "passed, 0 failed" -- run cases/kvbench.DequantizeGroup/ascend.json --filter 'scale=f16' \
  --backend "$python tools/example_backend.py {golden} {actual}"
# Both layouts, both key dtypes, every quant group and repeat count, at one layer and start
# (24 of the file's 216 int8 cases: each case starts Python and numpy, 80 ms).
check example_inplace 0 "24 passed, 0 failed" -- run cases/pmx.KeyValueCache/quantized.json \
  --filter 'layer_idx=1,.*quant_bit=8,.*start_pos=7' \
  --backend "$python tools/example_backend.py {golden} {actual}"
check perturbed 1 "viol" -- run cases/kvbench.DequantizeGroup/ascend.json --filter "$few" \
  --backend "$python tools/example_backend.py {golden} {actual} --perturb y"
check exits_nonzero 1 "the backend exited with status 3; it printed:" -- run cases/kvbench.DequantizeGroup/ascend.json \
  --filter "$few" --backend 'echo broken kernel >&2; exit 3'
check writes_nothing 1 "wrote no .*safetensors into {actual}" -- run cases/kvbench.DequantizeGroup/ascend.json \
  --filter "$few" --backend 'true'
# Two cases, so that the run goes on past a killed backend; each waits out the 0.5 s.
check hangs 1 "0 passed, 2 failed" -- run cases/kvbench.DequantizeGroup/ascend.json --filter "bits=4,$few" \
  --backend 'sleep 30' --backend-timeout 0.5
grep -q "ran past --backend-timeout 0.5 s" "$work/hangs.log" || { echo "FAIL: hangs: no reason given"; fail=1; }
# Exit 77: the backend does not implement the case, a SKIP with its words, never a pass: a run
# whose every case of an operator skipped exits 1 unless --allow-skip.
one='bits=4,group_size=5,scale=f16,with_zero_point=true,y=f16'  # one DequantizeGroup case
check not_implemented 1 "every selected case of the operator(s) above skipped on the backend" -- run \
  cases/kvbench.DequantizeGroup/ascend.json --filter "$few" --backend 'echo no such kernel; exit 77'
grep -q "SKIP .*not implemented by the backend (it exited with status 77); it printed:" "$work/not_implemented.log" ||
  { echo "FAIL: not_implemented: no SKIP row with the reason"; fail=1; }
check not_implemented_allowed 0 "0 passed, 0 failed, 1 skipped" -- run cases/kvbench.DequantizeGroup/ascend.json \
  --filter "$one" --backend 'exit 77' --allow-skip
# kvbench.backend (python/kvbench/backend.py) in a backend of one function: computed cases pass,
# an operator it lacks is not implemented (77) while the others still pass, a planted error fails.
numpy_backend="$python examples/numpy/dequantize_backend.py {golden} {actual}"
check helper_computed 0 "6 passed, 0 failed, 0 skipped" -- run cases/kvbench.DequantizeGroup/ppl.json \
  --filter "group_size=31,scale=f16" --backend "$numpy_backend"
check helper_not_implemented 1 "all 1 cases of pmx.KeyValueCache skipped, e.g.: not implemented by the backend" -- run \
  cases/kvbench.DequantizeGroup/ascend.json cases/pmx.KeyValueCache/quantized.json \
  --filter "$one|kvc_quant.cache_layout=0,current_key=f16,layer_idx=0,num_repeat=1,quant_bit=8,quant_group=8,start_pos=7" \
  --backend "$numpy_backend"
grep -q "^1 passed, 0 failed, 1 skipped" "$work/helper_not_implemented.log" ||
  { echo "FAIL: helper_not_implemented: the implemented case did not pass beside the skipped one"; fail=1; }
check helper_planted 1 "0 passed, 1 failed" -- run cases/kvbench.DequantizeGroup/ascend.json --filter "$one" \
  --backend "$numpy_backend --plant"
# The run goes on after a failing case: every selected case has a row.
cases=$("$kvbench" list cases/kvbench.DequantizeGroup/ascend.json --filter "$few" | grep -c '^dqg')
check goes_on 1 "0 passed, $cases failed" -- run cases/kvbench.DequantizeGroup/ascend.json --filter "$few" --backend 'false'
check no_device_flags 2 "are for the Vulkan one" -- run cases/kvbench.DequantizeGroup/ascend.json --backend 'true' --device 0
leftover=$(find "$TMPDIR" -maxdepth 1 -name 'kvbench-backend-*' 2>/dev/null | wc -l)
[ "$leftover" = 0 ] || { echo "FAIL: $leftover temporary backend folders left behind"; fail=1; }
exit $fail
