"""pmx.dynamic_batching.MultiHeadCacheAttention in torch (specs/multi_head_cache_attention.md),
as PMX's torch reference computes it (OpenPPL/ppl.pmx 4b3a146, torch_function/dynamic_batching/
MultiHeadCacheAttention.py and MultiHeadAttention.py): store the current K/V rows into the
cache (offset or paged, quantized as ppl_cache does), gather every batch's rows back through
cachestarts (the page table in paged mode) and dequantize them in T1, then per batch
Q.float() @ K.float()^T / sqrt(D), the causal / ALiBi / attn_mask terms, a softmax in f32,
P cast to T1 and P @ V (accumulated in f32: torch's CPU matmul has no f16 kernel, and a GPU
kernel accumulates f16 products in f32 too), the result cast to T1."""
import math

import torch

import ppl_cache
from softmax_pv import softmax_pv


def cache_view(cache, layout):
    """The cache as (layer, row, k/v, kv head, dim), a view of the same storage."""
    if layout == 0:  # (MaxT, L, 2, Hkv, D)
        return cache.permute(1, 0, 2, 3, 4)
    if layout == 1:  # (L, MaxT, 2, Hkv, D)
        return cache
    if layout == 2:  # (L, 2, MaxT, Hkv, D)
        return cache.permute(0, 2, 1, 3, 4)
    return cache.permute(0, 3, 1, 2, 4)  # 3: (L, 2, Hkv, MaxT, D)


def alibi_slopes(n):
    """PMX's ALiBiSlope: c = 2^floor(log2 n); 2^(-8k/c) for k = 1..c, then 2^(-4k/c) for odd k."""
    c = 1 << (n.bit_length() - 1)
    slopes = [2.0 ** (-8.0 * k / c) for k in range(1, c + 1)]
    slopes += [2.0 ** (-4.0 * k / c) for k in range(1, 2 * (n - c), 2)]
    return torch.tensor(slopes, dtype=torch.float64)


def cache_rows(attrs, cachestarts, b, t):
    """Rows of the cache that hold tokens t (a tensor) of batch b."""
    if attrs["cache_mode"] == 0:
        return cachestarts[b] + t
    page = attrs["page_size"]
    return cachestarts[b, t // page] + t % page


def multi_head_cache_attention(inputs, attrs, case, plant=None, variant=None):
    t1 = ppl_cache.TORCH_DTYPE[case.dtypes["query"]]
    H, D, L = attrs["num_heads"], attrs["head_dim"], attrs["layer_idx"]
    Hkv = attrs["num_kv_heads"] or H
    quant_bit, group = attrs["quant_bit"], attrs["quant_group"]
    query = torch.from_numpy(inputs["query"]).to(t1)
    current = [torch.from_numpy(inputs["current_key"]).to(t1), torch.from_numpy(inputs["current_value"]).to(t1)]
    seqstarts, kvstarts = torch.from_numpy(inputs["seqstarts"]), torch.from_numpy(inputs["kvstarts"])
    cachestarts, start_pos = torch.from_numpy(inputs["cachestarts"]), torch.from_numpy(inputs["start_pos"])
    decoding = int(inputs["decoding_batches"])
    cache = torch.from_numpy(inputs["cache"].copy())
    cv = cache_view(cache, attrs["cache_layout"])
    if quant_bit:
        scale_dtype = ppl_cache.TORCH_DTYPE[case.dtypes["scale"]]
        scale = torch.from_numpy(inputs["scale"].copy()).to(scale_dtype)
        sv = cache_view(scale, attrs["cache_layout"])
    mask = torch.from_numpy(inputs["attn_mask"]).to(t1) if "attn_mask" in inputs else None
    slopes = alibi_slopes(H).to(t1) if attrs["is_alibi"] else None
    out = torch.empty(query.shape, dtype=t1)
    for b in range(len(start_pos)):
        q0, q1 = int(seqstarts[b]), int(seqstarts[b + 1])
        seqlen, kvlen = q1 - q0, int(kvstarts[b + 1] - kvstarts[b])
        offset = kvlen - seqlen
        # 1. Store the batch's current rows (tokens start_pos .. kvlen - 1).
        rows = cache_rows(attrs, cachestarts, b, torch.arange(offset, kvlen))
        for c in (0, 1):
            if quant_bit:
                codes, s = ppl_cache.quantize(current[c][q0:q1], quant_bit, group, scale_dtype)
                cv[L, rows, c] = codes
                sv[L, rows, c] = s
            else:
                cv[L, rows, c] = current[c][q0:q1]
        # 2. Gather rows 0 .. kvlen - 1 back and dequantize them in T1.
        rows = cache_rows(attrs, cachestarts, b, torch.arange(kvlen))
        kv = []
        for c in (0, 1):
            x = cv[L, rows, c]
            if quant_bit:
                x = ppl_cache.dequantize(x, sv[L, rows, c], group, t1)
            kv.append(x.float().repeat_interleave(H // Hkv, dim=1).transpose(0, 1))  # (H, kvlen, D): GQA
        # 3. Attention in f32, P in T1.
        q = query[q0:q1].float().transpose(0, 1)  # (H, seqlen, D)
        scores = torch.matmul(q, kv[0].transpose(1, 2)) / math.sqrt(D)
        i = torch.arange(seqlen).unsqueeze(1)
        t = torch.arange(kvlen).unsqueeze(0)
        add = None
        if slopes is not None:  # PMX's ALiBi mask in T1: -inf past the query's position
            distance = (t - offset - i).to(t1)
            add = (slopes.view(H, 1, 1) * distance).masked_fill(distance > 0, -math.inf)
        if mask is not None:  # columns kvstarts[b] ...; rows seqstarts[b] ...
            k0 = int(kvstarts[b])
            m = mask[..., q0:q1, k0:k0 + kvlen]
            add = m if add is None else add + m  # in T1, as PMX adds the two masks
        if add is not None:
            scores = scores + add.float()
        if attrs["is_causal"] and seqlen > 1 and b >= decoding:
            limit = 0 if plant == "mhca_causal_top_left" else offset  # bottom-right aligned
            scores = scores.masked_fill(t > i + limit, -math.inf)
        # PMX: softmax(scores.float()).type_as(value) @ value (softmax_pv's variants)
        out[q0:q1] = softmax_pv(scores, kv[1], t1, variant).transpose(0, 1).to(t1)
    outputs = {"attn_output": out, "cache": cache}
    if quant_bit:
        outputs["scale"] = scale
    return outputs
