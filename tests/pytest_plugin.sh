#!/usr/bin/env bash
# The pytest plugin (python/kvbench/pytest_plugin.py, specs/python-package.md) on the example
# suite of numpy kernels (examples/pytest: every default case of kvbench.DequantizeGroup and
# pmx.KeyValueCache): it passes, writing each golden once; with planted errors (a wrong y
# element, a KV row left unwritten) exactly those cases fail, the report naming the case, the
# worst element and a repro line, from the cached goldens; --lf reruns only them, -k selects
# one case by its golden's stem, -x stops at the first failure. A changed case or kvbench
# version writes its goldens anew, and two runs sharing the cache both pass. A cache path that
# is a file or cannot be written is one line naming it; a truncated cached manifest is repaired.
# Usage: pytest_plugin.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python numpy xxhash pytest
rm -rf "$work" && mkdir -p "$work"
cd "$work"
export PYTHONPATH="$src/python" PYTHONDONTWRITEBYTECODE=1 KVBENCH="$kvbench"
unset KVBENCH_CACHE KVBENCH_PLANT KVBENCH_CASES_DIR
fail=0
# run NAME WANT_EXIT PYTEST_ARGS...: pytest with the plugin, its output in NAME.log.
run() {
  local name=$1 want=$2
  shift 2
  "$python" -m pytest -p kvbench.pytest_plugin -q -o cache_dir="$work/pytest_cache" "$@" > "$name.log" 2>&1
  local rc=$?
  [ "$rc" = "$want" ] && return 0
  tail -15 "$name.log"
  echo "FAIL: $name: pytest exited $rc, want $want"
  fail=1
  return 1
}
# has NAME TEXT...: every TEXT (fixed strings) is in NAME.log.
has() {
  local name=$1 text
  shift
  for text in "$@"; do
    grep -qF -- "$text" "$name.log" && continue
    tail -15 "$name.log"
    echo "FAIL: $name: no '$text' in its output"
    fail=1
    return 1
  done
}
suite="$src/examples/pytest"
cases="$src/cases/kvbench.DequantizeGroup $src/cases/pmx.KeyValueCache"
# shellcheck disable=SC2086
n=$("$kvbench" list $cases --hashes 2> /dev/null | wc -l)
[ "$n" -gt 600 ] || { echo "FAIL: kvbench list found $n cases"; exit 1; }

start=$SECONDS
run pass 0 "$suite" && has pass "kvbench: $n goldens written, 0 reused" "$n passed in" &&
  echo "ok: the example suite passes all $n cases in $((SECONDS - start)) s, its goldens written once"

dqg='dqg_ppl[bits=8,group_size=8,scale=f16,y=f16]'
kvc='kvc_fp[cache_layout=0,current_key=f16,layer_idx=1,num_repeat=1,start_pos=7]'
# kvbench's repro: the name as a regex (each of \^$.|?*+()[]{} escaped), anchored.
regex=$(printf '%s' "$dqg" | sed 's/[][\\^$.|?*+(){}]/\\&/g')
export KVBENCH_PLANT="$dqg;$kvc"
start=$SECONDS
# kvc: row (batch 0, position start_pos 7, head 0) of the key left unwritten: the fetched key
# and the cache (layout 0: batch, layer 1, k/v, position, head, dim) hold the poison there.
run planted 1 "$suite" && has planted "kvbench: 0 goldens written, $n reused" "2 failed, $((n - 2)) passed" \
  "test_dequantize_group[$dqg]" "worst: y[1,2] = " "rel err" "test_key_value_cache[$kvc]" \
  "worst: key[0,7,0,0] = nan" "worst: cache[0,1,0,7,0,0] = nan" \
  "repro: $kvbench run '$src/cases/kvbench.DequantizeGroup/ppl.json' --filter '^$regex\$'" &&
  echo "ok: planted errors fail their 2 cases only, naming the worst element, with a repro line ($((SECONDS - start)) s)"
run last_failed 1 --lf "$suite" && has last_failed "kvbench: 0 goldens written, 2 reused" "2 failed in" &&
  ! grep -q passed last_failed.log && echo "ok: --lf reruns the 2 failures only"
run first_failure 1 -x "$suite" && has first_failure "stopping after 1 failures" "1 failed" &&
  echo "ok: -x stops at the first failure"
unset KVBENCH_PLANT
run fixed 0 --lf "$suite" && has fixed "2 passed in" && echo "ok: fixed, --lf passes the 2 former failures"
# -k's grammar has no '=' or ',': a case answers to its golden's stem.
run one 0 -k "kvc_fp.cache_layout-0.current_key-f16.layer_idx-1.num_repeat-1.start_pos-7" "$suite" &&
  has one "1 passed, $((n - 1)) deselected" && echo "ok: -k selects one case by its stem"

# The cache: a test without the mark takes --kvbench-cases; a changed case, or another
# kvbench version, writes anew; two runs at once share the cache.
mkdir -p unmarked cases
cat > unmarked/test_unmarked.py << 'EOF'
import kvbench
def test_golden_values_pass(golden):
    kvbench.assert_matches(golden, golden.expected)
EOF
cp "$src/cases/kvbench.DequantizeGroup/ppl.json" cases/
m=$("$kvbench" list cases --hashes 2> /dev/null | wc -l)
ppl=(unmarked --kvbench-cases cases --kvbench-cache "$work/cache")
run unmarked_first 0 "${ppl[@]}" && has unmarked_first "$m goldens written, 0 reused" "$m passed"
run unmarked_again 0 "${ppl[@]}" && has unmarked_again "0 goldens written, $m reused"
sed -i 's/"seed": [0-9]*/"seed": 12345/' cases/ppl.json
run case_changed 0 "${ppl[@]}" && has case_changed "$m goldens written, 0 reused"
printf '#!/bin/sh\n[ "$1" = --version ] && { echo 9.9.9; exit 0; }\nexec "%s" "$@"\n' "$kvbench" > kvbench_999
chmod +x kvbench_999
run version_changed 0 "${ppl[@]}" --kvbench-binary ./kvbench_999 && has version_changed "$m goldens written, 0 reused"
run no_cases 1 unmarked && has no_cases "has no kvbench.parametrize mark and no --kvbench-cases"
[ "$fail" = 0 ] && [ "$(find cache -name '*.json' | wc -l)" = $((3 * m)) ] &&
  echo "ok: --kvbench-cases: $m goldens written once, again for a changed case and for another kvbench version"
rm -rf cache
run concurrent_a 0 "${ppl[@]}" & a=$!
run concurrent_b 0 "${ppl[@]}" & b=$!
wait $a || fail=1
wait $b || fail=1
leftover=$(find cache -mindepth 1 -maxdepth 1 -name '.writing-*' | wc -l)
if [ "$(find cache -name '*.json' | wc -l)" = "$m" ] && [ "$leftover" = 0 ]; then
  has concurrent_a "$m passed" && has concurrent_b "$m passed" && echo "ok: two runs at once share the cache"
else
  echo "FAIL: two runs at once left $(find cache -name '*.json' | wc -l) manifests (want $m)," \
    "$leftover temporary folders"
  fail=1
fi
# A cache that cannot be used: one line naming the path (exit 4, pytest's usage error), never
# INTERNALERROR; a truncated cached manifest is repaired (removed and written anew, said so);
# cached data corrupted after it was written fails that test with one line naming the file.
unmarked_cases=(unmarked --kvbench-cases cases)
touch cache_is_a_file
run cache_file 4 "${unmarked_cases[@]}" --kvbench-cache "$work/cache_is_a_file" &&
  has cache_file "ERROR: kvbench: cannot use the cache folder $work/cache_is_a_file: it is a file, not a folder"
# A folder that cannot be written (read-only sysfs: a chmod does not stop root).
run cache_readonly 4 "${unmarked_cases[@]}" --kvbench-cache /sys/kernel &&
  has cache_readonly "ERROR: kvbench: cannot write $m golden(s) into the cache folder /sys/kernel:"
run cache_uncreatable 4 "${unmarked_cases[@]}" --kvbench-cache /sys/kernel/kvbench-cache &&
  has cache_uncreatable "ERROR: kvbench: cannot use the cache folder /sys/kernel/kvbench-cache:"
if [ "$(id -u)" != 0 ]; then
  mkdir -p readonly_cache && chmod 555 readonly_cache
  run cache_chmod 4 "${unmarked_cases[@]}" --kvbench-cache "$work/readonly_cache" &&
    has cache_chmod "ERROR: kvbench: cannot write $m golden(s) into the cache folder $work/readonly_cache:"
  chmod 755 readonly_cache
fi
for log in cache_file cache_readonly cache_uncreatable; do
  grep -q INTERNALERROR "$log.log" && { echo "FAIL: $log: INTERNALERROR"; fail=1; }
done
victim=$(find cache -name '*.json' | sort | head -1)
head -c 100 "$victim" > truncated.json && cat truncated.json > "$victim"
run cache_truncated 0 "${ppl[@]}" &&
  has cache_truncated "kvbench: repaired the cache: removed a corrupt golden and wrote it anew: $work/$victim: invalid JSON" \
    "1 goldens written, $((m - 1)) reused" "$m passed"
data=$(find cache -name '*.safetensors' | sort | head -1)
size=$(stat -c %s "$data")
printf '\377' | dd of="$data" bs=1 seek=$((size - 1)) conv=notrunc 2> /dev/null
run cache_data_corrupt 1 "${ppl[@]}" &&
  has cache_data_corrupt "kvbench: the cached golden of" "does not match its checksum" "1 error" &&
  ! grep -q INTERNALERROR cache_data_corrupt.log &&
  echo "ok: an unusable cache folder named in one line; a truncated cached manifest repaired; corrupt cached data named"
# The goldens (420 MiB): kept for a look after a failure only.
[ "$fail" = 0 ] && rm -rf "$work/pytest_cache/d/kvbench" "$work/cache"
exit $fail
