"""dnnl.SDPACompressedKV in torch (specs/sdpa_compressed_kv.md), as oneDNN Graph's "SDPA with
compressed Key and Value" pattern runs it: K and V dequantized with f32 arithmetic,
(code - zero point) * scale, group by group along D (the scale and zero point repeated
over each group); S = Q @ K^T in f32, times or divided by the f32 scale, the implicit causal
mask, the additive mask; a softmax in f32 whose rows of only -inf give 0 (inf_as_zero); P in
the query's dtype (oneDNN: "the SoftMax output is in the Q/V dt"); P @ V accumulated in f32
and cast to the query's dtype. GQA: query head h reads kv head h // (H / H_kv)."""
import math

import torch

from ppl_cache import TORCH_DTYPE
from softmax_pv import softmax_pv


def dequantize(inputs, c, attrs, case, plant=None):
    """K (c "k") or V ("v") as f32 (N, H_kv, S_kv, D)."""
    name = "key" if c == "k" else "value"
    x = torch.from_numpy(inputs[name])
    transposed = c == "k" and attrs["k_layout"] == "nhds"  # stored (N, H_kv, D, S_kv)
    if not attrs[c + "_compressed"]:
        x = x.to(TORCH_DTYPE[case.dtypes[name]]).float()
        return x.transpose(2, 3) if transposed else x
    group = attrs["group_size"]
    axis = 2 if transposed else 3  # groups run along D
    scale = torch.from_numpy(inputs["scale_" + c]).to(TORCH_DTYPE[case.dtypes["scale_" + c]]).float()
    codes = x.float()
    if attrs[c + "_zero_point"]:
        zp = torch.from_numpy(inputs["zp_" + c]).float().repeat_interleave(group, dim=axis)
        # The planted error sdpa_zero_point_added: (q + zp) where the definition subtracts.
        codes = codes + zp if plant == "sdpa_zero_point_added" else codes - zp
    x = codes * scale.repeat_interleave(group, dim=axis)  # f32: exact code difference, one rounding
    return x.transpose(2, 3) if transposed else x


def sdpa_compressed_kv(inputs, attrs, case, plant=None, variant=None):
    q_dtype = TORCH_DTYPE[case.dtypes["query"]]
    query = torch.from_numpy(inputs["query"]).to(q_dtype).float()
    H, H_kv = query.shape[1], attrs.get("H_kv") or query.shape[1]
    k, v = dequantize(inputs, "k", attrs, case, plant), dequantize(inputs, "v", attrs, case, plant)
    if variant == "kv_query_dtype":  # K and V in the query's dtype (fpmath_mode's, which the pattern asks for)
        k, v = k.to(q_dtype).float(), v.to(q_dtype).float()
    k, v = k.repeat_interleave(H // H_kv, dim=1), v.repeat_interleave(H // H_kv, dim=1)
    scale = torch.from_numpy(inputs["scale"]).float()
    s = torch.matmul(query, k.transpose(2, 3))
    s = s / scale if attrs["scale_op"] == "divide" else s * scale
    S_q, S_kv = s.shape[2], s.shape[3]
    r = torch.arange(S_q).unsqueeze(1)
    col = torch.arange(S_kv).unsqueeze(0)
    if attrs["causal"] == "top_left":
        s = s.masked_fill(col > r, -math.inf)
    elif attrs["causal"] == "bottom_right":
        s = s.masked_fill(col > r + S_kv - S_q, -math.inf)
    if "attn_mask" in inputs:
        s = s + torch.from_numpy(inputs["attn_mask"]).to(TORCH_DTYPE[case.dtypes["attn_mask"]]).float()
    out = softmax_pv(s, v, q_dtype, variant)
    out = torch.where(torch.isneginf(s.amax(dim=-1, keepdim=True)), torch.zeros_like(out), out)  # inf_as_zero
    return {"output": out.to(q_dtype)}
