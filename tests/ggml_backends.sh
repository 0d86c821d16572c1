#!/usr/bin/env bash
# llama.cpp's released kernels judged by kvbench: every default ggml.* case through
# kvbench-ggml (examples/ggml) on one ggml device, and the verdicts compared with those
# specs/ggml-findings.md documents (tests/data/ggml/failures_<device>.txt: one case name a
# line, each a shrunk, explained defect of the release). A new failure, or a documented one
# that now passes, fails this test. Exit 77 (a CTest skip) where kvbench-ggml is not built
# (`tools/setup.sh --ggml`, then cmake again).
# Usage: ggml_backends.sh KVBENCH SOURCE_DIR WORK_DIR KVBENCH_GGML DEVICE [CASE_DIR_OR_FILE...]
set -euo pipefail
kvbench=$1 src=$2 work=$3 backend=$4 device=$5
shift 5
if [[ ! -x $backend ]]; then
  echo "SKIP: kvbench-ggml is not built: run tools/setup.sh --ggml, then cmake -B build again"
  exit 77
fi
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=("$src/cases/ggml.GET_ROWS" "$src/cases/ggml.SET_ROWS" "$src/cases/ggml.FLASH_ATTN_EXT")
. "$src/tests/find_python.sh"
require_python json
mkdir -p "$work"
report="$work/ggml_$device.json"
rm -f "$report"
start=$SECONDS
set +e
"$kvbench" run "${cases[@]}" --backend "'$backend' --device $device {golden} {actual}" --json "$report" \
  > "$work/ggml_$device.log" 2>&1
status=$?
set -e
grep -vE '^ +[0-9]+ PASS ' "$work/ggml_$device.log" | tail -40
echo "kvbench run exited $status after $((SECONDS - start)) s"
if [[ ! -s $report ]]; then
  echo "FAIL: no JSON report from kvbench run"
  exit 1
fi
$python - "$report" "$src/tests/data/ggml/failures_$device.txt" "$device" <<'PY'
import json, sys
report, listed, device = sys.argv[1:4]
cases = json.load(open(report))["cases"]
failed = {c["name"] for c in cases if c["status"] == "FAIL"}
skipped = sorted(c["name"] for c in cases if c["status"] == "SKIP")
known = {l.strip() for l in open(listed) if l.strip() and not l.startswith("#")}
ran = {c["name"] for c in cases}
new, fixed = sorted(failed - known), sorted((known & ran) - failed)
print(f"ggml {device}: {len(cases)} cases, {len(failed)} failed ({len(failed & known)} documented), {len(skipped)} skipped")
for n in new: print(f"FAIL: {n} fails and is not documented in {listed} (specs/ggml-findings.md)")
for n in fixed: print(f"FAIL: {n} is documented as failing but passes: update {listed} and specs/ggml-findings.md")
for n in skipped: print(f"note: {n} skipped")
sys.exit(1 if new or fixed else 0)
PY
