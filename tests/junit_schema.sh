#!/usr/bin/env bash
# kvbench's JUnit as GitLab and Jenkins read it: valid against the Jenkins JUnit schema's
# elements and attributes (tests/data/junit.xsd, xmllint from libxml2-utils), for a run with
# a pass, a failure, a skip and an invalid case file in folders whose names hold a control
# character and a byte that is not UTF-8; every testcase with a time; skip reasons and
# invalid-file errors in the element text as well as the message attribute.
# Usage: junit_schema.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
command -v xmllint > /dev/null || { echo "FAIL: no xmllint (install libxml2-utils: tools/setup.sh)"; exit 1; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

ctl="$work/ctl"$'\x01'"dir" bad="$work/bad"$'\xff'"name"
mkdir -p "$ctl" "$bad"
cp "$src/tests/data/mixed/valid.json" "$src/tests/data/mixed/malformed.json" "$ctl/"
cp "$src/tests/data/fail_fast/tight.json" "$src/tests/data/oversize/"*.json "$bad/"

# Checks one JUnit file: schema, a time on each testcase, texts where viewers look.
check_junit() {
  local xml=$1 what=$2
  xmllint --noout --schema "$src/tests/data/junit.xsd" "$xml" 2> "$xml.lint" || { sed 's/^/    /' "$xml.lint"; fail "$what: not valid against junit.xsd"; }
  if grep '<testcase' "$xml" | grep -qv ' time="'; then fail "$what: a testcase without a time"; fi
}

set +e
"$kvbench" run "$ctl" "$bad" --memory-budget 1T --junit "$work/run.xml" > "$work/run.log" 2>&1
status=$?
set -e
[ $status -eq 2 ] || fail "run: exit $status, expected 2 (the malformed file)"
check_junit "$work/run.xml" run
grep -q 'ctl\\x01dir' "$work/run.xml" || fail "run: the control character is not written as the text \\x01"
grep -q 'bad\\xFFname' "$work/run.xml" || fail "run: the byte 0xFF is not written as the text \\xFF"
grep -qE '<skipped message="tensor cache has [^"]*">tensor cache has ' "$work/run.xml" || fail "run: no skip reason in the element text"
grep -qE '<error message="[^"]*malformed.json[^"]*">[^<]*malformed.json' "$work/run.xml" || fail "run: no invalid-file error in the element text"
grep -q '<failure message="attn_output: ' "$work/run.xml" || fail "run: no failure message naming the output"
grep -q 'worst: attn_output\[' "$work/run.xml" || fail "run: no worst element in the failure"
grep -q 'repro: ' "$work/run.xml" || fail "run: no repro line in the failure"

# check: a missing actual file, and the base pair that passes.
set +e
"$kvbench" check --golden "$src/tests/data/bad_golden/base/golden" --actual "$ctl" --junit "$work/check.xml" > "$work/check.log" 2>&1
set -e
check_junit "$work/check.xml" check
grep -q '<failure message="no actual output file' "$work/check.xml" || fail "check: the missing file is not the failure message"

# The report a run writes before its first case, left when the run is killed (here the
# backend kills kvbench itself): valid, and an error saying the run did not finish.
set +e
"$kvbench" run "$src/tests/data/mixed/valid.json" --backend 'kill -KILL $PPID' --junit "$work/incomplete.xml" > "$work/incomplete.log" 2>&1
set -e
check_junit "$work/incomplete.xml" incomplete
grep -q '<testcase classname="kvbench" name="incomplete-run"' "$work/incomplete.xml" || fail "incomplete: no incomplete-run error"

[ $failures -eq 0 ] || exit 1
echo "ok: JUnit of run and check valid against tests/data/junit.xsd, control characters and bad bytes escaped visibly"
