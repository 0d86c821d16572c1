#!/usr/bin/env python3
"""Picks the few cases that compile every code variant of the attention pipelines.

The README's test command runs every case once on the default device, and at 4 and 16 lanes
and through the storage-load path (KVBENCH_TEXELS=0) only the cases of tests/data/variants/:
a small set (a greedy weighted set cover) whose pipelines, as `kvbench list --pipelines`
names them at that configuration, hold every code variant of the whole suite's. A code
variant is a pipeline key with its size constants left out (variant() below): head sizes,
MHCA's quant group and page size change loop bounds and strides, not which code is compiled,
and each costs lavapipe a compile of seconds. The full matrix, every case and so every
pipeline at each configuration, runs in CI (ctest -L full). tests/variant_cases.sh fails
when a list misses a code variant of the full suite (--check).

Usage:
  pick_variant_cases.py FULL_LIST [--report RUN_JSON] > tests/data/variants/NAME.txt
  pick_variant_cases.py --check FULL_LIST CHOSEN_LIST
FULL_LIST / CHOSEN_LIST: the output of `kvbench list CASES --pipelines` at the configuration
(for CHOSEN_LIST with --cases-from the list). --report: a `kvbench run --json` report; each
case then weighs 1 + its time in tenths of a second, so that cheap cases are preferred.
"""
import argparse
import json
import sys


def read_pipelines(path):
    """{case name: set of pipeline keys} from `kvbench list --pipelines` output."""
    cases = {}
    for line in open(path, encoding="utf-8"):
        name, sep, rest = line.rstrip("\n").partition("  pipelines:")
        if sep:
            cases[name] = set(rest.split())
    return cases


# Size constants by shader (specialization constant ids; shaders/*.comp, attention_core.glsl):
# D (0) of every attention shader, FIA's DV (1) and DQK (3, which selects the rope path only
# by differing from D), MHCA's quant group (2) and page size (6, whose 0 selects offset mode).
def variant(key):
    shader, *constants = key.split(":")
    by_position = [c for c in constants if "=" not in c]
    by_id = [c for c in constants if "=" in c]
    base = shader.removesuffix("_tiles")
    if base in ("fia_attention", "mhca_attention", "sdpa_attention") and by_position:
        d = by_position[0]
        by_position[0] = "D"
        if base == "fia_attention":
            by_position[1] = "DV"
            by_position[3] = "rope" if by_position[3] != d else "DQK=D"
        if base == "mhca_attention":
            by_position[2] = "QG"
            by_position[6] = "paged" if by_position[6] != "0" else "offset"
    return ":".join([shader] + by_position + by_id)


def head_size(key):
    shader, *constants = key.split(":")
    return int(constants[0]) if "_attention" in shader and constants and constants[0].isdigit() else 0


def variants_of(cases):
    return {name: {variant(k) for k in keys} for name, keys in cases.items()}


def check(full_path, chosen_path):
    full = set().union(*variants_of(read_pipelines(full_path)).values())
    chosen = set().union(*variants_of(read_pipelines(chosen_path)).values())
    missing = sorted(full - chosen)
    for v in missing:
        print(f"missing: code variant {v}, compiled by the full suite but by no case of the list")
    print(f"{len(full) - len(missing)} of {len(full)} code variants of the full suite in the list")
    return 1 if missing else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pipelines")
    parser.add_argument("--report")
    args = parser.parse_args()
    keys = read_pipelines(args.pipelines)
    cases = variants_of(keys)
    if not cases:
        sys.exit(f"{args.pipelines}: no 'NAME  pipelines: ...' line (the output of kvbench list --pipelines)")
    # A pipeline's compile grows with its head size: prefer the cases with small heads.
    weight = {name: 1.0 + sum(head_size(k) / 32 for k in keys[name]) for name in cases}
    if args.report:
        for c in json.load(open(args.report, encoding="utf-8"))["cases"]:
            if c["name"] in weight:
                weight[c["name"]] += c.get("time_ms", 0) / 100
    missing = set().union(*cases.values())
    chosen = []
    while missing:
        # The case that creates the most missing keys per unit of weight; ties by name.
        best = max(sorted(cases), key=lambda n: len(cases[n] & missing) / weight[n])
        chosen.append(best)
        missing -= cases[best]
    total = len(set().union(*cases.values()))
    print(f"# {len(chosen)} cases that compile all {total} code variants of {len(cases)} cases")
    print("# made by tools/pick_variant_cases.py; checked by tests/variant_cases.sh")
    for name in sorted(chosen):
        print(name)


if __name__ == "__main__":
    main()
