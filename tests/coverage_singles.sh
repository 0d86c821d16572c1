#!/usr/bin/env bash
# The conformance suite uses every single value the operators allow: `kvbench coverage cases`
# (its JSON) lists no value as never used although allowed. Also what .ci/run keeps.
# Usage: coverage_singles.sh KVBENCH SOURCE_DIR WORK_DIR
set -uo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python json
rm -rf "$work" && mkdir -p "$work"
"$kvbench" coverage "$src/cases" --json "$work/coverage.json" > "$work/coverage.log" 2>&1 ||
  { echo "FAIL: kvbench coverage exited $?"; tail -20 "$work/coverage.log"; exit 1; }
$python - "$work/coverage.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
missing = [(op["op"], u["key"], u["value"]) for op in report["operators"] for u in op["never_used"]]
for op in report["operators"]:
    print("%s: %d cases, %d values never used though allowed, %d of %d value pairs combined, %d allowed but never combined"
          % (op["op"], op["cases"], len(op["never_used"]), op["pairs"]["covered"], op["pairs"]["combinations"],
             len(op["pairs"]["never_combined"])))
for m in missing:
    print("FAIL: %s: %s = %s is allowed but no case uses it" % m)
sys.exit(1 if missing else 0)
PY
