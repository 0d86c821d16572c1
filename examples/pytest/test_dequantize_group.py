"""kvbench.DequantizeGroup in plain numpy, tested against kvbench's goldens by pytest
(specs/quantize-group.md; specs/python-package.md "pytest plugin"):

    PYTHONPATH=python pytest -p kvbench.pytest_plugin examples/pytest    (kvbench on PATH or KVBENCH=...)

One test per default case of cases/kvbench.DequantizeGroup, its id the case name. Every
product is exact in float64, so rounding it once to f32 (or to the scale's dtype) is the
rounding the formulas name. KVBENCH_PLANT="<case name>[;<case name>...]" adds 1 to the first
finite element of y from y[1,2] on in those cases: an error kvbench must report.
"""
import os

import numpy as np
import pytest

import kvbench

CASES = os.environ.get("KVBENCH_CASES_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                             "cases")


def bf16(x):
    """float32 values rounded to the nearest even bfloat16 (as float32)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).view(np.float32)


def rounded(x, dtype):
    """float64 values rounded to `dtype` (f32 first for bf16: the products fit f32 exactly or
    the formula rounds to f32 before), back as float64."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore"):  # past the dtype's largest value: infinity, as the formulas round
        return {"f16": x.astype(np.float16), "f32": x.astype(np.float32), "bf16": bf16(x)}[dtype].astype(np.float64)


def dequantize_group(inputs, attrs, dtypes):
    q = inputs["x"].astype(np.float64)
    group = np.arange(q.shape[1]) // attrs["group_size"]  # each column's group; the last may be short
    s = inputs["scale"].astype(np.float64)[:, group]
    code_format = attrs.get("code_format", "int")
    if code_format == "mxint8":  # an MXINT8 code is worth code * 2^-6
        q = q / 64
    if code_format == "nvfp4":  # Y(f32(f32(value * block scale) * tensor scale))
        y = rounded(rounded(q * s, "f32") * inputs["tensor_scale"].astype(np.float64)[0], "f32")
    elif attrs["formula"] == "ppl":  # Y(S(q * s))
        y = rounded(q * s, dtypes["scale"])
    elif attrs["formula"] == "onednn":  # Y(f32((q - zp) * s)); no zero_point tensor: 0
        zp = inputs["zero_point"].astype(np.float64)[:, group] if "zero_point" in inputs else 0.0
        y = rounded((q - zp) * s, "f32")
    elif attrs["formula"] == "ascend":  # Y(f32(f32(q + offset) * s)); no offset tensor: Y(f32(q * s))
        shifted = rounded(q + inputs["offset"].astype(np.float64)[:, group], "f32") if "offset" in inputs else q
        y = rounded(shifted * s, "f32")
    else:
        pytest.skip("formula %r is not implemented here" % attrs["formula"])
    return rounded(y, dtypes["y"])


@kvbench.parametrize(os.path.join(CASES, "kvbench.DequantizeGroup"))
def test_dequantize_group(golden):
    y = dequantize_group(golden.inputs, kvbench.attributes_of(golden), golden.dtypes)
    if golden.name in os.environ.get("KVBENCH_PLANT", "").split(";"):
        flat = y.reshape(-1)
        i = y.shape[1] + 2
        while not np.isfinite(flat[i]):  # FP8 codes decode to NaN and infinities too
            i += 1
        flat[i] += 1
    kvbench.assert_matches(golden, {"y": y})
