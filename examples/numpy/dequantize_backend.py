#!/usr/bin/env python3
"""The smallest complete backend: kvbench.DequantizeGroup in numpy, through kvbench.backend.

    kvbench run cases/kvbench.DequantizeGroup --backend 'python3 examples/numpy/dequantize_backend.py {golden} {actual}'

It computes y from the codes x, the scales and the zero point or offset with the three
formulas of specs/quantize-group.md (PPL, oneDNN, Ascend), in the dtypes they name, and its
FP8, HiF8, MX and NVFP4 codes (decoded to their values by the kvbench package). Every
other operator is not implemented: kvbench reports such a case as SKIP (exit status 77).
`--plant` adds 1 to one element of y, an error kvbench must report.
"""
import os
import sys

_SOURCE_PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
if os.path.isfile(os.path.join(_SOURCE_PACKAGE, "kvbench", "__init__.py")):
    sys.path.insert(0, _SOURCE_PACKAGE)  # the source tree's package before an installed one

import numpy as np  # noqa: E402

import kvbench  # noqa: E402

NUMPY_FLOAT = {"f16": np.float16, "f32": np.float32}


def rounded(x, dtype):
    """float64 -> the float dtype (round to nearest even), back as float64."""
    if dtype == "bf16":
        return kvbench.to_array(kvbench.from_array(x.astype(np.float32), "bf16"), "bf16", x.shape).astype(np.float64)
    return x.astype(NUMPY_FLOAT[dtype]).astype(np.float64)


def dequantize_group(inputs, attrs, case, plant=False):
    if case.op != "kvbench.DequantizeGroup":
        raise kvbench.NotImplementedCase("this backend implements kvbench.DequantizeGroup only")
    q = inputs["x"].astype(np.float64)
    columns = np.arange(q.shape[1]) // attrs["group_size"]  # the group of each column
    s = inputs["scale"].astype(np.float64)[:, columns]
    code_format = attrs.get("code_format", "int")
    if code_format == "mxint8":  # an MXINT8 code is worth code * 2^-6
        q = q / 64
    if code_format == "nvfp4":  # f32(f32(value * block scale) * tensor scale)
        y = rounded(rounded(q * s, "f32") * inputs["tensor_scale"].astype(np.float64)[0], "f32")
    elif attrs["formula"] == "ppl":  # the product in the scale's dtype
        y = rounded(q * s, case.dtypes["scale"])
    elif attrs["formula"] == "onednn":  # f32((q - zp) * s)
        zp = inputs["zero_point"].astype(np.float64)[:, columns] if "zero_point" in inputs else 0.0
        y = rounded((q - zp) * s, "f32")
    else:  # ascend: f32(f32(q + offset) * s)
        off = inputs["offset"].astype(np.float64)[:, columns] if "offset" in inputs else 0.0
        y = rounded(rounded(q + off, "f32") * s, "f32")
    y = rounded(y, case.dtypes["y"])
    if plant:
        y.reshape(-1)[y.size // 2] += 1
    return {"y": y}


if __name__ == "__main__":
    planted = "--plant" in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != "--plant"]
    kvbench.backend(lambda inputs, attrs, case: dequantize_group(inputs, attrs, case, planted), args,
                    description=__doc__)
