"""pmx.KeyValueCache in plain numpy, tested against kvbench's goldens by pytest
(specs/key_value_cache.md; examples/torch/key_value_cache.py is the same in torch):

    PYTHONPATH=python pytest -p kvbench.pytest_plugin examples/pytest    (kvbench on PATH or KVBENCH=...)

Store the current key/value rows into the layer's cache (quantized group by group for
quant_bit 8 or 4), then fetch every row up to start_pos + seqlen, dequantized, each kv head
repeated num_repeat times. Each T1 operation is computed in float64, where it is exact or
rounds once to a correctly rounded T1 result (53 >= 2 * 24 + 2 bits). KVBENCH_PLANT="<case
name>[;...]" leaves those cases' first stored key row unwritten: the golden fixture poisoned it, as
kvbench does, so it must fail.
"""
import os

import numpy as np
import pytest

import kvbench

CASES = os.environ.get("KVBENCH_CASES_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                             "cases")
NUMPY = {"f16": np.float16, "f32": np.float32}


def rounded(x, dtype):
    return np.asarray(x, np.float64).astype(dtype).astype(np.float64)


def cache_view(cache, layout):
    """The cache as (layer, batch, k/v, position, head, dim), a view of the same memory."""
    if layout == 0:  # (MaxB, L, 2, MaxS, H, Dh)
        return cache.transpose(1, 0, 2, 3, 4, 5)
    if layout == 1:  # (L, MaxB, 2, H, MaxS, Dh)
        return cache.transpose(0, 1, 2, 4, 3, 5)
    pytest.skip("cache_layout %r is not implemented here" % layout)


def quantize(x, bits, group, t1):
    """PMX's quant(): s = max(T1(max|x| / qmax), T1(1e-5)), q = clamp(rne(T1(x / s)), +-qmax)."""
    qmax = (1 << (bits - 1)) - 1
    g = x.astype(np.float64).reshape(*x.shape[:-1], -1, group)
    s = np.maximum(rounded(np.abs(g).max(axis=-1, keepdims=True) / qmax, t1), rounded(1e-5, t1))
    q = np.clip(np.rint(rounded(g / s, t1)), -qmax, qmax)
    return q.astype(np.int8).reshape(x.shape), s[..., 0]


def key_value_cache(inputs, attrs, dtypes, plant=False):
    t1 = NUMPY[dtypes["current_key"]]
    bits, group, repeat = attrs["quant_bit"], attrs.get("quant_group", 8), attrs["num_repeat"]
    if bits not in (0, 4, 8):
        pytest.skip("quant_bit %r is not implemented here" % bits)
    layer, p = attrs["layer_idx"], int(inputs["start_pos"])
    cache = inputs["cache"].copy()  # s4 arrives unpacked as int8 codes
    cv = cache_view(cache, attrs["cache_layout"])
    if bits:
        scale = inputs["scale"].copy()
        sv = cache_view(scale, attrs["cache_layout"])
    outputs = {"cache": cache}
    for c, name in enumerate(("key", "value")):
        x = inputs["current_" + name]
        batch, seqlen = x.shape[:2]
        if bits:
            codes, s = quantize(x, bits, group, t1)
            cv[layer, :batch, c, p:p + seqlen] = codes
            sv[layer, :batch, c, p:p + seqlen] = s  # S(s): numpy rounds to nearest even
            stored_scale = np.repeat(sv[layer, :batch, c, :p + seqlen].astype(np.float64), group, axis=-1)
            # T1(S(q * S(s))): the product exact in float64, rounded to the scale's dtype, then T1.
            rows = rounded(rounded(cv[layer, :batch, c, :p + seqlen] * stored_scale, scale.dtype), t1)
        else:
            cv[layer, :batch, c, p:p + seqlen] = x
            rows = cv[layer, :batch, c, :p + seqlen]
        if plant and c == 0:  # a kernel that skipped a row: it keeps what was there (poison)
            cv[layer, 0, 0, p, 0] = cache_view(inputs["cache"], attrs["cache_layout"])[layer, 0, 0, p, 0]
            rows = rows.copy()
            rows[0, p, 0] = cv[layer, 0, 0, p, 0]
        outputs[name] = np.repeat(rows, repeat, axis=2)  # kv head h serves heads h*repeat ... +repeat-1
    if bits:
        outputs["scale"] = scale
    return outputs


@kvbench.parametrize(os.path.join(CASES, "pmx.KeyValueCache"))
def test_key_value_cache(golden):
    plant = golden.name in os.environ.get("KVBENCH_PLANT", "").split(";")
    kvbench.assert_matches(golden, key_value_cache(golden.inputs, kvbench.attributes_of(golden), golden.dtypes, plant))
