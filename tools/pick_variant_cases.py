#!/usr/bin/env python3
"""Picks the few cases that compile every code variant of the attention pipelines.

The README's test command runs every case once on the default device, and at 4 and 16 lanes
only the cases of tests/data/variants/ (so do CI's decode-kernel runs at 4, 8 and 16 lanes):
a small set (a greedy weighted set cover) whose pipelines, as `kvbench list --pipelines`
names them at that configuration, hold every code variant of the whole suite's. A code
variant is a pipeline key with its size constants left out (variant() below): head sizes,
MHCA's quant group and page size change loop bounds and strides, not which code is compiled,
and each costs lavapipe a compile of seconds. The full matrix, every case and so every
pipeline at each configuration, runs in CI (ctest -L full). tests/variant_cases.sh fails
when a list misses a code variant of the full suite (--check). At 16 lanes a variant is
narrower (width_variant below): what the subgroup width changes.

Usage:
  pick_variant_cases.py FULL_LIST --config CONFIG [--report RUN_JSON] > tests/data/variants/CONFIG.txt
  pick_variant_cases.py --check CHOSEN_LIST FULL_LIST --config CONFIG
FULL_LIST / CHOSEN_LIST: the output of `kvbench list CASES --pipelines` at the configuration
(for CHOSEN_LIST with --cases-from the list). --report: a `kvbench run --json` report; each
case then weighs 1 + its time in tenths of a second in addition, so that cheap cases are
preferred.
"""
import argparse
import json
import sys


def read_pipelines(path):
    """{case name: set of pipeline keys} from `kvbench list --pipelines` output."""
    cases = {}
    for line in open(path, encoding="utf-8"):
        name, sep, rest = line.rstrip("\n").partition("  pipelines:")
        rest = rest.partition("  scratch:")[0]  # the kernels' scratch bytes, after the keys
        if sep:
            cases[name] = set(rest.split())
    return cases


# Size constants by shader (specialization constant ids; shaders/*.comp, attention_core.glsl):
# D (0) of every attention shader, FIA's DV (1) and DQK (3, which selects the rope path only
# by differing from D), MHCA's quant group (2) and page size (6, whose 0 selects offset mode),
# the decode kernel's NV (17; in three classes, see below); its HS (19) as it is.
def variant(key):
    shader, *constants = key.split(":")
    by_position = [c for c in constants if "=" not in c]
    by_id = [c for c in constants if "=" in c]
    base = shader.removesuffix("_f16").removesuffix("_tiles").removesuffix("_decode")
    if base in ("fia_attention", "mhca_attention", "sdpa_attention") and by_position:
        d = by_position[0]
        by_position[0] = "D"
        if base == "fia_attention":
            by_position[1] = "DV"
            by_position[3] = "rope" if by_position[3] != d else "DQK=D"
        if base == "mhca_attention":
            by_position[2] = "QG"
            by_position[6] = "paged" if by_position[6] != "0" else "offset"
    # The decode kernel's query vectors per item (17) bound its loops over the vectors, as D
    # bounds those over a row; FIA keeps V's per-channel scales in registers only up to 4.
    # Whether the heads split over the subgroups is its own constant (19, HS), kept as it is.
    def nv_class(n):
        return "17=NV<=4" if n <= 4 else "17=NV<=8" if n <= 8 else "17=NV>8"
    by_id = [nv_class(int(c[3:])) if c.startswith("17=") else c for c in by_id]
    return ":".join([shader] + by_position + by_id)


def head_size(key):
    shader, *constants = key.split(":")
    return int(constants[0]) if "_attention" in shader and constants and constants[0].isdigit() else 0


# At 16 lanes only the subgroup width changes, and only the lanes body of the attention core
# (shaders/attention_lanes.glsl, whose shuffles serve LANES = 4 or 8 lanes per item: constant
# 15) uses subgroup operations; the operators' hooks, the tiles kernel and the merges do not.
# A 16-lane variant is therefore an operator's lanes kernel at each LANES, and the others'
# code, width-independent, is compiled and run at 8 lanes by the suite (and at 4 by 4_lanes).
def width_variant(key):
    shader, *constants = key.split(":")
    lanes = [c for c in constants if c.startswith("15=")]
    return f"{shader}:{lanes[0]}" if shader.endswith("_attention") and lanes else None


# With KVBENCH_KERNEL=decode the decode kernel's pipelines (MHCA's f16 module included) are
# the configuration's own (what it leaves to the rule, the width runs of the tiles and lanes
# kernels hold).
def decode_variant(key):
    return variant(key) if key.split(":")[0].endswith(("_decode", "_decode_f16")) else None


def variants_of(cases, config=None):
    classify = {"16_lanes": width_variant}.get(config, decode_variant if config and config.startswith("decode_") else variant)
    return {name: {v for v in map(classify, keys) if v} for name, keys in cases.items()}


def check(chosen_path, full_path, config):
    full = set().union(*variants_of(read_pipelines(full_path), config).values())
    chosen = set().union(*variants_of(read_pipelines(chosen_path), config).values())
    missing = sorted(full - chosen)
    for v in missing:
        print(f"missing: code variant {v}, compiled by the full suite but by no case of the list")
    print(f"{len(full) - len(missing)} of {len(full)} code variants of the full suite in the list")
    return 1 if missing else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pipelines", nargs="+")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--report")
    parser.add_argument("--config", choices=["4_lanes", "16_lanes", "decode_4_lanes", "decode_8_lanes",
                                             "decode_16_lanes"],
                        help="16_lanes: only the lanes kernels' subgroup code (width_variant); decode_*: only the decode "
                             "kernel's code variants; else every code variant")
    args = parser.parse_args()
    if args.check:
        if len(args.pipelines) != 2:
            parser.error("--check takes CHOSEN_LIST FULL_LIST")
        sys.exit(check(args.pipelines[0], args.pipelines[1], args.config))
    if len(args.pipelines) != 1:
        parser.error("one FULL_LIST")
    keys = read_pipelines(args.pipelines[0])
    cases = variants_of(keys, args.config)
    if not cases:
        sys.exit(f"{args.pipelines[0]}: no 'NAME  pipelines: ...' line (the output of kvbench list --pipelines)")
    # A pipeline's compile grows with its head size: prefer the cases with small heads.
    weight = {name: 1.0 + sum(head_size(k) / 32 for k in keys[name]) for name in cases}
    if args.report:
        for c in json.load(open(args.report, encoding="utf-8"))["cases"]:
            if c["name"] in weight:
                weight[c["name"]] += c.get("time_ms", 0) / 100
    missing = set().union(*cases.values())
    cases = {name: variants for name, variants in cases.items() if variants}
    chosen = []
    while missing:
        # The case that compiles the most missing variants per unit of weight; ties by name.
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
