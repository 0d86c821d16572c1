"""SHA-256 of every array of every golden case in a folder, as kvbench_golden reads them
(dense, whatever the golden format), so goldens written by different kvbench versions or
formats can be compared: `golden_digest.py DIR` prints {case: {array: sha256}} as JSON;
with --per-case, {case: sha256 of its sorted array digests}."""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import kvbench_golden as kg  # noqa: E402
import numpy as np  # noqa: E402


def digest(folder):
    out = {}
    for path in kg.cases(folder):
        case = kg.load_case(path)
        arrays = {}
        for group, table in (("input", case.inputs), ("expected", case.expected), ("expected_f64", case.expected_f64),
                             ("alternate", case.alternate), ("touched", case.touched)):
            for name, a in table.items():
                arrays[group + "." + name] = hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
        out[case.manifest["case"]] = arrays
    return out


def per_case(digests):
    return {case: hashlib.sha256(json.dumps(arrays, sort_keys=True).encode()).hexdigest() for case, arrays in digests.items()}


if __name__ == "__main__":
    folder = [a for a in sys.argv[1:] if not a.startswith("--")][0]
    d = digest(folder)
    json.dump(per_case(d) if "--per-case" in sys.argv else d, sys.stdout, indent=1, sort_keys=True)
    print()
