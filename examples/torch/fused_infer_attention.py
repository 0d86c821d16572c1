"""aclnn.FusedInferAttentionScoreV3 in torch (specs/fused_infer_attention_score.md), in its
f16/bf16 modes (and kvbench's f32) as the Ascend device computes them: Q·K^T of the input dtype
accumulated in f32 (the cube unit), the f32 scaleValue, pseShift, the band of sparseMode and
pre/nextTokens and the boolean attenMask as -inf, the softmax and its lse in f32, P rounded to
the input dtype before P·V (accumulated in f32), attentionOut in its dtype; K/V antiquant codes
(int8, int4, FP4) dequantized as f32(f32(code + offset) * scale). Every layout, page attention
(BnBsH, BnNBsD, NZ), tensorlists, shared prefix, left padding and MLA's rope channels. Rows
with no visible key give 0 and lse +inf. Full int8 (an INT8 query) and post-quant INT8 outputs
are not implemented (NotImplementedCase: exit 77).

Index bookkeeping (layouts, page tables, which keys a row sees) is numpy; the arithmetic is
torch's."""
import math

import numpy as np
import torch

import kvbench
from kvbench.fia_layout import ORDERS, antiquant_broadcast, batch_ranges, mask_rows, visible
from ppl_cache import TORCH_DTYPE
from softmax_pv import softmax_pv

def to_bnsd(x, order, heads):
    """(B, N, S, D) from a tensor in `order` (BSH is BSND with N*D merged)."""
    if order == "BSND":
        return x.reshape(x.shape[0], x.shape[1], heads, -1).transpose(1, 2)
    if order == "BNSD":
        return x
    return x.transpose(0, 1)[None] if order == "TND" else x[None]  # TND / NTD: one batch


def fused_infer_attention(inputs, attrs, case, plant=None, variant=None):
    if "deqScale1" in inputs or "quantScale2" in inputs:
        raise kvbench.NotImplementedCase("the torch FIA backend runs the f16/bf16/f32 modes, not full int8 or post-quant")
    a = attrs
    dt = TORCH_DTYPE[case.dtypes["query"]]
    T = {name: torch.from_numpy(np.ascontiguousarray(v)) for name, v in inputs.items() if isinstance(v, np.ndarray)}
    q_order, out_order = ORDERS[a["inputLayout"]]
    N, B, S1, S2, D, Dv = a["numHeads"], a["B"], a["S1"], a["S2"], a["D"], a["Dv"]
    Nkv = a["numKeyValueHeads"] or N
    tnd, paged = q_order in ("TND", "NTD"), a["blockSize"] > 0
    q = to_bnsd(T["query"].to(dt).float(), q_order, N)
    if "queryRope" in T:  # MLA: the rope channels extend the contraction
        q = torch.cat([q, to_bnsd(T["queryRope"].to(dt).float(), q_order, N)], dim=-1)
    s1b, q0, s2b, kv0 = batch_ranges(inputs, B, S1, S2, tnd, paged)
    ifa = not tnd and S1 == 1
    padded = "queryPaddingSize" in inputs or "kvPaddingSize" in inputs
    mask = inputs.get("attenMask")
    applies = mask is not None and "2048" not in a["attenMask_shape"]
    scale = torch.tensor(a["scaleValue"], dtype=torch.float32)
    rows_out = int(max(s1b.max(), 1)) if tnd else S1
    out = torch.zeros(B, N, rows_out, Dv)
    lse = torch.full((B, N, rows_out), math.inf)
    for b in range(B):
        n1, n2 = int(s1b[b]), int(s2b[b])
        blk = r = None
        if paged:
            bs, tok = a["blockSize"], np.arange(n2)
            blk = torch.from_numpy(inputs["blockTable"][b][tok // bs].astype(np.int64))
            r = torch.from_numpy(tok % bs)

            def gather(cache):  # (Nkv, n2, dim) of batch b's tokens
                if a["kv_cache_layout"] == "NZ":  # (blocks, Nkv, dim / 16, blockSize, 16)
                    return cache[blk, :, :, r, :].reshape(n2, Nkv, -1).transpose(0, 1)
                if a["kv_cache_layout"] == "BnNBsD":
                    return cache[blk, :, r, :].transpose(0, 1)
                return cache.reshape(cache.shape[0], bs, Nkv, -1)[blk, r].transpose(0, 1)
            K, V = gather(T["key"]), gather(T["value"])
            if "keyRope" in T:
                K = torch.cat([K, gather(T["keyRope"])], dim=-1)
        elif "key.0" in T:  # tensorlist: batch b's own key.b / value.b
            K = to_bnsd(T["key.%d" % b], q_order, Nkv)[0][:, :n2]
            V = to_bnsd(T["value.%d" % b], q_order, Nkv)[0][:, :n2]
        else:
            pick = 0 if tnd else b
            K = to_bnsd(T["key"], q_order, Nkv)[pick][:, kv0[b]:kv0[b] + n2]
            if "keyRope" in T:
                K = torch.cat([K, to_bnsd(T["keyRope"], q_order, Nkv)[pick][:, kv0[b]:kv0[b] + n2]], dim=-1)
            V = to_bnsd(T["value"], q_order, Nkv)[pick][:, kv0[b]:kv0[b] + n2]
        combined = "antiquantScale" in T  # the legacy parameters: [0] key, [1] value
        if "keyAntiquantScale" in T or combined:  # f32(f32(code + offset) * scale)
            S = a["blockSize"] * inputs["blockTable"].shape[1] if paged else S2
            dequantized = []
            for k, (side, dim, codes) in enumerate((("key", D, K), ("value", Dv, V))):
                mode = a["antiquantMode"] if combined else a[side + "AntiquantMode"]
                sname, oname = ("antiquantScale", "antiquantOffset") if combined else (side + "AntiquantScale", side + "AntiquantOffset")
                part = (lambda t, k=k: t[k]) if combined else (lambda t: t)
                # The broadcast of the scales (an index computation, not a kernel) is shared.
                pages = (None, None) if blk is None else (blk.numpy(), r.numpy())
                args = (mode, a["antiquant_per_tensor"], b, n2, Nkv, dim, *pages, S, kv0[b])
                sc = torch.from_numpy(antiquant_broadcast(part(T[sname]).float().numpy(), *args))
                off = torch.from_numpy(antiquant_broadcast(part(T[oname]).float().numpy(), *args)) if oname in T else 0.0
                dequantized.append((codes.float() + off) * sc)
            K, V = dequantized
            if variant == "kv_query_dtype":  # K~ and V~ in the input dtype (Ascend's prompt kernel)
                K, V = K.to(dt).float(), V.to(dt).float()
        else:
            K, V = K.to(dt).float(), V.to(dt).float()
        if "keySharedPrefix" in T:  # every batch attends to prefix[:Lp] first
            Lp = int(inputs["actualSharedPrefixLen"][0]) if "actualSharedPrefixLen" in inputs else \
                T["keySharedPrefix"].shape[2 if q_order == "BNSD" else 1]
            PK = to_bnsd(T["keySharedPrefix"].to(dt).float(), q_order, Nkv)[0][:, :Lp]
            PV = to_bnsd(T["valueSharedPrefix"].to(dt).float(), q_order, Nkv)[0][:, :Lp]
            K, V, n2 = torch.cat([PK, K], dim=1), torch.cat([PV, V], dim=1), n2 + Lp
        mrows = mask_rows(mask if applies else None, ifa, a["attenMask_shape"].startswith("B"), b, q0[b], kv0[b])
        vis = torch.from_numpy(
            visible(a["sparseMode"], a["preTokens"], a["nextTokens"], mask is not None and not padded, ifa, n1, n2, mrows))
        g = N // Nkv
        # GQA: query head h reads kv head h // g. The planted error fia_gqa_interleaved maps
        # it to h % Nkv (the groups interleaved).
        heads = (lambda x: x.repeat(g, 1, 1)) if plant == "fia_gqa_interleaved" else (lambda x: x.repeat_interleave(g, dim=0))
        qb = q[0 if tnd else b][:, q0[b]:q0[b] + n1]  # (N, n1, D)
        s = torch.matmul(qb, heads(K).transpose(1, 2)) * scale
        if "pseShift" in T:
            pse = T["pseShift"]
            s = s + pse[b if pse.shape[0] > 1 else 0, :, q0[b]:q0[b] + n1, kv0[b]:kv0[b] + n2].float()
        s = s.masked_fill(~vis, -math.inf)
        mx = s.amax(dim=-1, keepdim=True) if n2 else torch.full((N, n1, 1), -math.inf)
        has = torch.isfinite(mx)
        e = torch.exp(s - torch.where(has, mx, torch.zeros_like(mx)))
        tot = e.sum(dim=-1, keepdim=True)
        # The device rounds P to the input dtype before P·V (softmax_pv's variants).
        o = softmax_pv(s, heads(V), dt, variant) if n2 else torch.zeros(N, n1, Dv)
        row0 = 0 if tnd else q0[b]
        out[b, :, row0:row0 + n1] = torch.where(has, o, torch.zeros_like(o))
        lse[b, :, row0:row0 + n1] = torch.where(has, mx + torch.log(torch.where(has, tot, torch.ones_like(tot))),
                                                 torch.full_like(mx, math.inf)).squeeze(-1)
    if tnd:  # back to the token-major layouts
        T_rows = S1
        o_t, l_t = torch.zeros(T_rows, N, Dv), torch.zeros(T_rows, N)
        for b in range(B):
            n1, start = int(s1b[b]), int(q0[b])
            o_t[start:start + n1] = out[b, :, :n1].transpose(0, 1)
            l_t[start:start + n1] = lse[b, :, :n1].transpose(0, 1)
        o_final = o_t if out_order == "TND" else o_t.transpose(0, 1)
        l_final = l_t[..., None]
    else:
        o_final = {"BSND": out.transpose(1, 2), "BNSD": out, "NBSD": out.transpose(0, 1)}[out_order]
        l_final = lse[..., None]
    out_shape, lse_shape = case.tensors["attentionOut"]["shape"], case.tensors["softmaxLse"]["shape"]
    if not a["softmaxLseFlag"]:
        l_final = torch.zeros(lse_shape)
    return {"attentionOut": o_final.reshape(out_shape).to(TORCH_DTYPE[case.dtypes["attentionOut"]]),
            "softmaxLse": l_final.reshape(lse_shape)}
