#!/usr/bin/env python3
"""A planted fault for `kvbench shrink` (tests/shrink.sh): tools/fia_reference.py as a backend
that never sees the keys past the 512th, as a kernel whose loop over key blocks stops at its
first 512 keys would. Right wherever a batch has at most 512 keys, wrong past that.

    python3 tests/faulty_fia_backend.py GOLDEN_DIR ACTUAL_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import fia_reference  # noqa: E402
import kvbench_golden  # noqa: E402

LIMIT = 512
visible = fia_reference.visible


def visible_to_limit(*args):
    ok = visible(*args)
    ok[:, LIMIT:] = False
    return ok


fia_reference.visible = visible_to_limit  # reference() looks it up at each call
for path in kvbench_golden.cases(sys.argv[1]):
    case = kvbench_golden.load_case(path)
    out, lse = fia_reference.reference(case)
    fia_reference.save_outputs(case, out, lse, sys.argv[2])
