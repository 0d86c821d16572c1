#!/usr/bin/env bash
# Issue 22's memory target for the cache writers: `kvbench golden` on one case peaks at most
# 1.5 x the bytes it writes + 100 MiB (tools/golden_bench.py --check-memory). The caches of
# tests/data/golden_memory (8-17 M elements) are big enough that a golden holding a double
# per cache element (17 bytes each, kvbench up to f2f0276: 4-13 x the bytes) fails it.
# Usage: golden_memory.sh KVBENCH SOURCE_DIR WORK_DIR
set -euo pipefail
kvbench=$1 src=$2 work=$3
. "$src/tests/find_python.sh"
require_python json
rm -rf "$work" && mkdir -p "$work"
"$python" "$src/tools/golden_bench.py" "$src"/tests/data/golden_memory/*.json --per-case --check-memory \
  --kvbench "$kvbench" --tmp "$work"
