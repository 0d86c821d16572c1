#!/usr/bin/env bash
# Golden bytes do not depend on the reference's thread count: MHCA, SDPA and FIA cases
# big enough for attend() to start threads (odd row counts, GQA 3), with --threads 1, 2
# and 7 (more than this machine's cores), and --jobs 2 beside --threads 3.
# Usage: golden_threads.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cases="$src/tests/data/golden_threads"
"$kvbench" golden "$cases" -o "$work/t1" --threads 1 > /dev/null
for run in "--threads 2" "--threads 7" "--jobs 2 --threads 3"; do
  dir="$work/$(echo "$run" | tr -d ' -')"
  # shellcheck disable=SC2086
  "$kvbench" golden "$cases" -o "$dir" $run > /dev/null
  diff -r "$work/t1" "$dir" > /dev/null || { echo "FAIL: golden files differ between --threads 1 and $run"; exit 1; }
  echo "ok: golden files byte-identical for --threads 1 and $run ($(ls "$dir" | wc -l) files)"
done
