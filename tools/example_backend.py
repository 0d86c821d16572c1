#!/usr/bin/env python3
"""Plays "another backend" against kvbench golden files, with numpy only.

For each golden case in GOLDEN_DIR it loads the inputs and writes ACTUAL_DIR/<stem>.safetensors
holding every output under its own name, which `kvbench check` then compares:

    kvbench golden cases/kvbench.DequantizeGroup -o golden
    python3 tools/example_backend.py golden actual
    kvbench check --golden golden --actual actual

For kvbench.DequantizeGroup it computes the outputs itself from the inputs (the oneDNN,
Ascend and PPL formulas of specs/quantize-group.md, and its FP8, HiF8, MX and NVFP4 codes,
decoded by the Python package's own tables, in numpy). For every other operator it
writes the golden's expected outputs back (a stand-in for a real kernel).
--perturb NAME changes one element of output NAME in every case, so check must fail.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kvbench_golden as kg  # noqa: E402


# Outputs whose values are codes' values: a perturbation must be another code's value.
CODE_DTYPES = ("f4e2m1", "f6e2m3", "f6e3m2", "hifloat8", "f8e8m0")


def round_to(x, dtype):
    """float64 -> the float dtype of a kvbench tensor (round to nearest even), back as float64."""
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float64)
    if dtype == "f32":
        return x.astype(np.float32).astype(np.float64)
    if dtype == "bf16":
        return kg.to_array(kg.from_array(x.astype(np.float32), "bf16"), "bf16", x.shape).astype(np.float64)
    raise ValueError(dtype)


def dequantize_group(case):
    attrs = case.manifest["attributes"]
    q = case.inputs["x"].astype(np.float64)
    s = case.inputs["scale"].astype(np.float64)
    rows, length = q.shape
    group = attrs["group_size"]
    idx = np.arange(length) // group
    s_full = s[:, idx]
    y_dtype = case.tensors["y"]["dtype"]
    formula = attrs["formula"]
    code_format = attrs.get("code_format", "int")
    if code_format == "mxint8":  # an i8 code is worth code * 2^-6
        q = q / 64
    if code_format == "nvfp4":  # (value * block scale) exactly, then the tensor scale, in f32
        return {"y": round_to(round_to(round_to(q * s_full, "f32") * case.inputs["tensor_scale"].astype(np.float64)[0],
                                       "f32"), y_dtype)}
    if formula == "ppl":
        y = round_to(q * s_full, case.tensors["scale"]["dtype"])
    elif formula == "onednn":
        zp = case.inputs["zero_point"].astype(np.float64)[:, idx] if "zero_point" in case.inputs else 0.0
        y = round_to((q - zp) * s_full, "f32")
    else:
        off = case.inputs["offset"].astype(np.float64)[:, idx] if "offset" in case.inputs else 0.0
        y = round_to(round_to(q + off, "f32") * s_full, "f32")
    return {"y": round_to(y, y_dtype)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("golden_dir")
    ap.add_argument("actual_dir")
    ap.add_argument("--perturb", metavar="NAME", help="change one element of this output in every case")
    args = ap.parse_args()
    os.makedirs(args.actual_dir, exist_ok=True)
    manifests = kg.cases(args.golden_dir)
    if not manifests:
        sys.exit("no golden cases in " + args.golden_dir)
    for path in manifests:
        case = kg.load_case(path)
        if case.manifest["op"] == "kvbench.DequantizeGroup":
            outputs = dequantize_group(case)
        else:
            outputs = {name: case.expected[name].copy() for name in case.outputs}
        if args.perturb in outputs:
            a = outputs[args.perturb].reshape(-1)
            i = a.size // 2
            dtype = case.tensors[args.perturb]["dtype"]
            if dtype == "f8e8m0":  # powers of two only: the next one
                a[i] = a[i] * 2 if a[i] < 2.0 ** 126 else a[i] / 2
            elif dtype in CODE_DTYPES:  # another code's value: the negated one, or 1
                a[i] = -a[i] if a[i] != 0 else 1
            else:
                a[i] = a[i] + (1 if a.dtype.kind in "iu" else 0.5)
        kg.save_actual(os.path.join(args.actual_dir, case.stem + ".safetensors"), outputs, case)
    print("wrote %d actual files to %s" % (len(manifests), args.actual_dir))


if __name__ == "__main__":
    main()
