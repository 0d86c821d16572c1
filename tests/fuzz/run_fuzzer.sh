#!/usr/bin/env bash
# Runs one fuzzer for SECONDS from a seed corpus built here, under ASan/UBSan:
#   fuzz_case_file:   every case file of cases/ and tests/data/;
#   fuzz_safetensors: golden and actual files of a few small cases (written by `kvbench
#                     golden` and tools/example_backend.py into WORK) and the bad files of
#                     tests/data/bad_golden/;
#   fuzz_manifest:    the manifests of a few small goldens (one of format 4 with bound and
#                     nan_permitted) and of tests/data/bad_golden/.
# Exits non-zero on a finding; the input that caused it is left in WORK/artifacts/.
# Usage: run_fuzzer.sh FUZZER KVBENCH SOURCE_DIR WORK_DIR SECONDS [libFuzzer flags...]
set -euo pipefail
fuzzer=$1 kvbench=$2 src=$3 work=$4 seconds=$5
shift 5
name=$(basename "$fuzzer")
seeds="$work/seeds"
rm -rf "$seeds" && mkdir -p "$seeds" "$work/corpus" "$work/artifacts"

case $name in
  fuzz_case_file)
    find "$src/cases" "$src/tests/data" -name '*.json' -size -64k | while read -r f; do
      cp "$f" "$seeds/$(echo "${f#"$src"/}" | tr '/' '_')"
    done ;;
  fuzz_safetensors)
    small=("$src/tests/data/bad_golden/tiny_case.json" "$src/tests/data/mixed/valid.json"
           "$src/cases/kvbench.QuantizeGroup" "$src/cases/atb.ReshapeAndCache")
    "$kvbench" golden "${small[@]}" -o "$work/golden" > /dev/null
    . "$src/tests/find_python.sh"
    find_python numpy
    [ -z "$python" ] || "$python" "$src/tools/example_backend.py" "$work/golden" "$work/actual" > /dev/null
    find "$work/golden" "$work/actual" "$src/tests/data/bad_golden" -name '*.safetensors' -type f -size -64k 2> /dev/null |
      while read -r f; do cp "$f" "$seeds/$(echo "$f" | md5sum | cut -c1-12).safetensors"; done ;;
  fuzz_manifest)
    "$kvbench" golden "$src/tests/data/bad_golden/tiny_case.json" "$src/cases/dnnl.SDPACompressedKV/field_gqa.json" \
      "$src/cases/atb.ReshapeAndCache" -o "$work/golden" > /dev/null
    find "$work/golden" "$src/tests/data/bad_golden" -name '*.json' -type f -size -64k 2> /dev/null |
      while read -r f; do cp "$f" "$seeds/$(echo "$f" | md5sum | cut -c1-12).json"; done ;;
  *) echo "unknown fuzzer $name"; exit 2 ;;
esac
echo "$name: $(ls "$seeds" | wc -l) seeds, $seconds s"

# Leaks are findings too (detect_leaks); a unit slower than 10 s or a malloc over 2 GB is one.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:print_stacktrace=1:halt_on_error=1"
set +e
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" "$seeds" > "$work/fuzz.log" 2>&1
status=$?
set -e
# The log without libFuzzer's progress lines: the corpus, any report, the final stats.
grep -vE "^#[0-9]+" "$work/fuzz.log" | tail -80
[ "$status" -eq 0 ] || echo "$name: FINDING (exit $status); inputs in $work/artifacts/: $(ls "$work/artifacts")"
exit "$status"
