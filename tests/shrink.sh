#!/usr/bin/env bash
# kvbench shrink against a planted fault: tests/faulty_fia_backend.py (the numpy reference of
# FusedInferAttentionScoreV3 that drops every key past the 512th) fails a 4096-slot decode of
# 3 batches; shrink must find a case of at most 600 keys and one batch that still fails the
# same way, and write it as a case file that reproduces the failure (and passes on the true
# reference). The same on Vulkan with a case that fails there by design. A case that does not
# fail has nothing to shrink (exit 1).
# Usage: shrink.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python numpy
rm -rf "$work" && mkdir -p "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
faulty="$python $src/tests/faulty_fia_backend.py {golden} {actual}"
true_reference="$python $src/tools/fia_reference.py {golden} {actual}"

"$kvbench" shrink "$src/tests/data/shrink/decode_4096.json" --backend "$faulty" -o "$work/smallest.json" > "$work/shrink.log" 2>&1 ||
  bad "shrink exited $?: $(tail -20 "$work/shrink.log")"
cat "$work/shrink.log"
grep -q "^shrinking shrink_decode_4096: mismatch in attentionOut" "$work/shrink.log" || bad "the failure is not named"
grep -q "^step: B 3 -> 1" "$work/shrink.log" || bad "no step reduced B"
$python - "$work/smallest.json" <<'PY' || bad "the written case is not small enough"
import json, sys
case = json.load(open(sys.argv[1]))
shapes, inputs = case["shapes"], case.get("inputs", {})
keys = min([shapes["S2"]] + inputs.get("actualSeqLengthsKv", [])[:1])
print("smallest: B =", shapes["B"], "keys =", keys, "S2 =", shapes["S2"], inputs)
assert shapes["B"] == 1 and 512 < keys <= 600, case
PY
# The written case reproduces the failure, and only through the fault.
"$kvbench" run "$work/smallest.json" --backend "$faulty" > "$work/repro.log" 2>&1
[ $? = 1 ] || bad "the smallest case does not fail on the faulty backend: $(tail -5 "$work/repro.log")"
"$kvbench" run "$work/smallest.json" --backend "$true_reference" > "$work/true.log" 2>&1 ||
  bad "the smallest case fails on the true reference: $(tail -5 "$work/true.log")"
# On Vulkan: an MHCA case whose tolerance lies inside f32 rounding (it fails by design)
# shrinks to one batch, one query row and two heads of 8, and still fails when run.
"$kvbench" shrink "$src/tests/data/plot/attention_tight.json" -o "$work/tight.json" > "$work/tight.log" 2>&1 ||
  bad "shrink on Vulkan exited $?: $(tail -20 "$work/tight.log")"
grep -q "^step: entries of seqlens 2 -> 1" "$work/tight.log" || bad "on Vulkan: $(cat "$work/tight.log")"
"$kvbench" run "$work/tight.json" > "$work/tight_run.log" 2>&1
[ $? = 1 ] || bad "the case shrunk on Vulkan does not fail: $(tail -5 "$work/tight_run.log")"
# Nothing to shrink: every selected case passes.
"$kvbench" shrink "$src/tests/data/shrink/decode_4096.json" --backend "$true_reference" -o "$work/none.json" > "$work/none.log" 2>&1
[ $? = 1 ] && grep -q "no selected case fails" "$work/none.log" || bad "a passing case: $(tail -3 "$work/none.log")"
[ -e "$work/none.json" ] && bad "a passing case wrote a file"
[ $fail = 0 ] && echo "ok: shrink"
exit $fail
