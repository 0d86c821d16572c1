#!/usr/bin/env bash
# The C++ reader (`kvbench check`) and the Python package's load_golden on seeded corruptions of
# real goldens: both refuse, or both accept (tests/golden_readers_differential.py).
# Usage: golden_readers_differential.sh KVBENCH SOURCE_DIR WORK_DIR [--seed N] [--rounds K]
set -uo pipefail
kvbench=$1 src=$2 work=$3
shift 3
. "$src/tests/find_python.sh"
require_python numpy xxhash
exec "$python" "$src/tests/golden_readers_differential.py" "$kvbench" "$src" "$work" "$@"
