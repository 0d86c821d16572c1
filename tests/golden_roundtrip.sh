#!/usr/bin/env bash
# Golden round trip, as another backend would use it:
#   kvbench golden -> tools/example_backend.py writes actuals -> kvbench check passes;
#   kvbench run --save-actual writes the Vulkan outputs -> kvbench check passes;
#   the same with one perturbed element -> check fails (exit 1);
#   golden files are byte-identical across runs and --jobs values;
#   a missing actual tensor is a clear error.
# Usage: golden_roundtrip.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"

# The Python tools need only numpy; Debian's python3-numpy serves /usr/bin/python3.
. "$src/tests/find_python.sh"
find_python numpy
[ -n "$python" ] || { echo "no python3 with numpy (install python3-numpy: tools/setup.sh)"; exit 1; }

cases=("$src/cases/kvbench.DequantizeGroup" "$src/cases/kvbench.QuantizeGroup" "$src/cases/pmx.KeyValueCache/odd_groups.json"
       "$src/cases/atb.ReshapeAndCacheOmni/decisions.json" "$src/cases/dnnl.SDPACompressedKV/masked_rows.json"
       "$src/cases/pmx.dynamic_batching.MultiHeadCacheAttention/alibi_masks.json")
"$kvbench" golden "${cases[@]}" -o "$work/golden" --jobs 1 > /dev/null
"$kvbench" golden "${cases[@]}" -o "$work/golden2" --jobs 2 > /dev/null
diff -r "$work/golden" "$work/golden2" > /dev/null || { echo "FAIL: golden files differ between --jobs 1 and --jobs 2"; exit 1; }
echo "ok: golden files byte-identical across runs and --jobs 1/2 ($(ls "$work/golden" | wc -l) files)"

"$python" "$src/tools/example_backend.py" "$work/golden" "$work/actual" > /dev/null
"$kvbench" check --golden "$work/golden" --actual "$work/actual" > "$work/check.log" \
  || { tail -20 "$work/check.log"; echo "FAIL: check of the round-tripped outputs"; exit 1; }
tail -1 "$work/check.log"
echo "ok: check passes on outputs written back by the Python tool"

for out in y cache; do
  "$python" "$src/tools/example_backend.py" "$work/golden" "$work/perturbed_$out" --perturb "$out" > /dev/null
  set +e
  "$kvbench" check --golden "$work/golden" --actual "$work/perturbed_$out" > "$work/perturbed_$out.log"
  status=$?
  set -e
  [ $status -eq 1 ] || { echo "FAIL: a perturbed '$out' gave exit $status, expected 1"; exit 1; }
  grep -q "worst: $out\[" "$work/perturbed_$out.log" || { echo "FAIL: no worst element of $out reported"; exit 1; }
  echo "ok: one perturbed element of '$out' per case fails the check ($(grep -E "^[0-9]+ passed" "$work/perturbed_$out.log"))"
done

# kvbench's own Vulkan outputs saved by run --save-actual are actual files that check passes.
"$kvbench" run "${cases[@]}" --save-actual "$work/saved" > "$work/saved.log" \
  || { tail -5 "$work/saved.log"; echo "FAIL: run --save-actual"; exit 1; }
[ "$(ls "$work/saved" | wc -l)" -eq "$(ls "$work/golden"/*.json | wc -l)" ] \
  || { echo "FAIL: run --save-actual wrote $(ls "$work/saved" | wc -l) files for $(ls "$work/golden"/*.json | wc -l) cases"; exit 1; }
"$kvbench" check --golden "$work/golden" --actual "$work/saved" > "$work/saved_check.log" \
  || { tail -20 "$work/saved_check.log"; echo "FAIL: check of the outputs saved by run --save-actual"; exit 1; }
echo "ok: check passes on the Vulkan outputs of run --save-actual ($(tail -1 "$work/saved_check.log"))"
# An unusable folder is an error before any case runs.
set +e
"$kvbench" run "$src/tests/data/mixed/valid.json" --save-actual /proc/kvbench_no_such > "$work/saved_bad.log" 2>&1
status=$?
set -e
[ $status -eq 2 ] && grep -q "save-actual /proc/kvbench_no_such: cannot make the folder" "$work/saved_bad.log" \
  || { cat "$work/saved_bad.log"; echo "FAIL: --save-actual into a folder that cannot be made must exit 2"; exit 1; }

# Every array the Python tool returns is writable (a backend may compute in place).
"$python" - "$work/golden" "$src/tools" <<'PY' || { echo "FAIL: kvbench_golden.py returned a read-only array"; exit 1; }
import sys
sys.path.insert(0, sys.argv[2])
import kvbench_golden as kg
checked = 0
for path in kg.cases(sys.argv[1]):
    case = kg.load_case(path)
    for group in (case.inputs, case.expected, case.expected_f64, case.alternate, case.touched):
        for name, a in group.items():
            assert a.flags.writeable, "%s: %s is read-only" % (path, name)
            a.reshape(-1)[:1] = a.reshape(-1)[:1]  # raises on a read-only array
            checked += 1
print("ok: %d arrays of %d golden cases are writable" % (checked, len(kg.cases(sys.argv[1]))))
PY

# An actual file without the expected tensor is a clear error naming it.
one=$(ls "$work/golden"/kvc_odd_groups*.json | head -1)
"$python" - "$one" "$work/missing.safetensors" "$src/tools" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import kvbench_golden as kg
case = kg.load_case(sys.argv[1])
kg.save_actual(sys.argv[2], {n: case.expected[n] for n in case.outputs if n != "value"}, case)
PY
set +e
"$kvbench" check --golden "$one" --actual "$work/missing.safetensors" > "$work/missing.log"
status=$?
set -e
[ $status -eq 1 ] && grep -q "has no tensor 'value'" "$work/missing.log" \
  || { cat "$work/missing.log"; echo "FAIL: a missing tensor must fail naming it"; exit 1; }
echo "ok: a missing output tensor fails with a message naming it"

# check --junit carries the failure figures and the worst element.
set +e
"$kvbench" check --golden "$work/golden" --actual "$work/perturbed_cache" --junit "$work/check.xml" > /dev/null
set -e
grep -q '<failure message="cache: ' "$work/check.xml" && grep -q 'worst: cache\[' "$work/check.xml" \
  || { echo "FAIL: JUnit failures must carry the figures and the worst element"; exit 1; }
echo "ok: check --junit reports failures with their figures"
