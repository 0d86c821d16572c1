"""pmx.KeyValueCache in torch (specs/key_value_cache.md): store the current key/value rows into
the layer's cache (quantized group by group for quant_bit 8 or 4), then fetch every row up to
start_pos + seqlen, dequantized, each kv head repeated num_repeat times."""
import torch

import ppl_cache


def cache_view(cache, layout):
    """The cache as (layer, batch, k/v, position, head, dim), a view of the same storage."""
    if layout == 0:  # (MaxB, L, 2, MaxS, H, Dh)
        return cache.permute(1, 0, 2, 3, 4, 5)
    return cache.permute(0, 1, 2, 4, 3, 5)  # layout 1: (L, MaxB, 2, H, MaxS, Dh)


def key_value_cache(inputs, attrs, case, plant=None, variant=None):
    t1 = ppl_cache.TORCH_DTYPE[case.dtypes["current_key"]]
    current = [torch.from_numpy(inputs["current_key"]).to(t1), torch.from_numpy(inputs["current_value"]).to(t1)]
    quant_bit, group, repeat = attrs["quant_bit"], attrs["quant_group"], attrs["num_repeat"]
    layer, p = attrs["layer_idx"], int(inputs["start_pos"])
    batch, seqlen = current[0].shape[0], current[0].shape[1]
    cache = torch.from_numpy(inputs["cache"].copy())  # s4 arrives unpacked as int8 codes
    cv = cache_view(cache, attrs["cache_layout"])
    outputs = {}
    if quant_bit:
        scale_dtype = ppl_cache.TORCH_DTYPE[case.dtypes["scale"]]
        scale = torch.from_numpy(inputs["scale"].copy()).to(scale_dtype)
        sv = cache_view(scale, attrs["cache_layout"])
    for c in (0, 1):
        if quant_bit:
            codes, s = ppl_cache.quantize(current[c], quant_bit, group, scale_dtype, truncate=plant == "kvc_truncate")
            cv[layer, :batch, c, p:p + seqlen] = codes
            sv[layer, :batch, c, p:p + seqlen] = s
            rows = ppl_cache.dequantize(cv[layer, :batch, c, :p + seqlen], sv[layer, :batch, c, :p + seqlen], group, t1)
        else:
            cv[layer, :batch, c, p:p + seqlen] = current[c]
            rows = cv[layer, :batch, c, :p + seqlen]
        # PMX's expand + reshape: kv head h serves output heads h * num_repeat ... + num_repeat - 1.
        outputs["key" if c == 0 else "value"] = rows.repeat_interleave(repeat, dim=2)
    outputs["cache"] = cache
    if quant_bit:
        outputs["scale"] = scale
    return outputs
