#!/usr/bin/env bash
# Every aclnn.FusedInferAttentionScoreV3 conformance golden against the independent numpy
# implementation of tools/fia_reference.py (expected_f64 within 1e-9, infinities and NaN exact).
# Usage: fia_independent.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python numpy
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT  # about 600 MB of golden files
"$kvbench" golden "$src/cases/aclnn.FusedInferAttentionScoreV3" -o "$work/golden" > /dev/null
"$python" "$src/tools/fia_reference.py" "$work/golden"
