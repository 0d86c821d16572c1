#!/usr/bin/env bash
# Replays every recorded finding of one fuzzer (tests/fuzz/findings/<fuzzer>/, each file one
# input) once, under the sanitizers: each must now run clean. A regression test for the fixes.
# Usage: replay_findings.sh FUZZER FINDINGS_DIR
set -euo pipefail
fuzzer=$1 dir=$2
failed=0 total=0
for input in "$dir"/*; do
  [ -f "$input" ] || continue
  total=$((total + 1))
  if ! out=$("$fuzzer" -runs=1 "$input" 2>&1); then
    echo "FAIL: $(basename "$input")"
    echo "$out" | grep -E "runtime error|ERROR: AddressSanitizer|ERROR: libFuzzer|SUMMARY" | head -5 | sed 's/^/    /'
    failed=$((failed + 1))
  fi
done
echo "$(basename "$fuzzer"): $((total - failed)) of $total recorded findings run clean"
[ "$failed" -eq 0 ]
