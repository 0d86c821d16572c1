# Sourced by the scripts that run a list of attention cases (variant_cases.sh, head_sizes.sh):
# run_all_pass WHAT -- kvbench run args... runs them, no compiling ahead (ctest -j2 keeps both
# cores busy), and exits 1 unless every case passes and none skips; prints "ok: WHAT: ...".
run_all_pass() {
  local what=$1 start=$SECONDS out summary; shift 2
  if ! out=$("$kvbench" run "$@" --compile-threads 0 2>&1); then
    echo "$out" | grep -vE '^ +[0-9]+ PASS ' | tail -60
    echo "FAIL: $what (kvbench run exited non-zero)"
    exit 1
  fi
  summary=$(grep -E '^[0-9]+ passed, ' <<<"$out" | tail -1)
  echo "ok: $what: $summary ($((SECONDS - start)) s)"
  if ! grep -q ' 0 skipped$' <<<"$summary"; then
    grep -E '^ +[0-9]+ SKIP ' -A1 <<<"$out" | head -20
    echo "FAIL: cases skipped in $what"
    exit 1
  fi
}
