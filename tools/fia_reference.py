#!/usr/bin/env python3
"""An independent numpy implementation of aclnn.FusedInferAttentionScoreV3 (part 1), from
the formulas of specs/fused_infer_attention_score.md, checked against kvbench golden files.

It shares no code with kvbench's C++ reference: layouts become (B, N, S, D) arrays by numpy
transposes, the block table is gathered with fancy indexing, the visible-key predicate is
built as a whole (S1, S2) boolean matrix per batch, and softmax is the textbook
exp(s - max) / sum over the matrix, in float64. Every case's attentionOut and softmaxLse
must match expected_f64 within 1e-9 (relative to the row's scale); infinities exactly.

    kvbench golden cases/aclnn.FusedInferAttentionScoreV3 -o golden
    python3 tools/fia_reference.py golden

With a second folder it is also a backend: it writes each case's outputs, rounded to their
dtypes (post-quant codes rounded half to even and saturated), as ACTUAL/<stem>.safetensors,
so that kvbench can check them (`kvbench run CASES --backend 'python3
tools/fia_reference.py {golden} {actual}'`).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kvbench_golden  # noqa: E402
from kvbench.fia_layout import ORDERS, antiquant_broadcast, batch_ranges, mask_rows, visible  # noqa: E402


def weighted_sum(w, v):
    """w @ v where a key of weight 0 adds nothing, even an infinite or NaN V row
    (specs/golden-format.md, "Masked keys"); the plain product where V is finite."""
    if np.isfinite(v).all():
        return w @ v
    return np.stack([w[i][w[i] != 0] @ v[w[i] != 0] for i in range(w.shape[0])])

def to_bnsd(x, order, heads):
    """(B, N, S, D) from a 3-D or 4-D tensor in `order` (BSH is BSND with N*D merged)."""
    if order == "BSND":
        b, s = x.shape[:2]
        return x.reshape(b, s, heads, -1).transpose(0, 2, 1, 3)
    if order == "BNSD":
        return x
    if order == "TND":  # one batch of T tokens
        return x.transpose(1, 0, 2)[None]
    return x[None]  # NTD


def reference(case):
    m = case.manifest
    a, shp, inp = m["attributes"], m["shapes"], case.inputs
    layout = a["inputLayout"]
    q_order, out_order = ORDERS[layout]
    N = a["numHeads"]
    Nkv = a["numKeyValueHeads"] or N
    B, S1, S2, D, Dv = shp["B"], shp["S1"], shp["S2"], shp["D"], shp["Dv"]
    tnd = q_order in ("TND", "NTD")
    paged = a["blockSize"] > 0
    q = to_bnsd(inp["query"].astype(np.float64), q_order, N)
    if "queryRope" in inp:  # MLA: the rope channels extend the contraction
        q = np.concatenate([q, to_bnsd(inp["queryRope"].astype(np.float64), q_order, N)], axis=-1)
    s1b, q0, s2b, kv0 = batch_ranges(inp, B, S1, S2, tnd, paged)
    ifa = not tnd and S1 == 1
    padded = "queryPaddingSize" in inp or "kvPaddingSize" in inp
    row0 = [0] * B if tnd else q0  # where a batch's rows go in `out`
    sparse, pre, nxt = a["sparseMode"], a["preTokens"], a["nextTokens"]
    mask_shape = a["attenMask_shape"]
    mask = inp.get("attenMask")
    applies = mask is not None and "2048" not in mask_shape
    pse = inp.get("pseShift")
    scale = float(np.float32(a["scaleValue"]))
    # Full int8: s = scaleValue * deqScale1 * (q . k) over the codes, P's int8 codes
    # round(exp(s - max) * quantScale1) (half to even, at most 127) times deqScale2 * v,
    # over the sum of the unquantized exp(s - max).
    full = "deqScale1" in inp
    if full:
        scale *= float(inp["deqScale1"][0])
        qs1, deq2 = float(inp["quantScale1"][0]), float(inp["deqScale2"][0])
    out = np.zeros((B, N, S1 if not tnd else int(max(s1b.max(), 1)), Dv))
    lse = np.full(out.shape[:3], np.inf)
    rows = []
    for b in range(B):
        n1, n2 = int(s1b[b]), int(s2b[b])
        if paged:
            bs = a["blockSize"]
            table = inp["blockTable"][b]
            tok = np.arange(n2)
            blk, r = table[tok // bs], tok % bs
            def gather(cache):  # (Nkv, n2, dim) of batch b's tokens
                if a["kv_cache_layout"] == "NZ":  # (blocks, Nkv, dim / 16, blockSize, 16)
                    x = cache[blk, :, :, r, :]
                    return x.reshape(n2, Nkv, -1).transpose(1, 0, 2).astype(np.float64)
                if a["kv_cache_layout"] == "BnNBsD":
                    return cache[blk, :, r, :].transpose(1, 0, 2).astype(np.float64)
                return cache.reshape(cache.shape[0], bs, Nkv, -1)[blk, r].transpose(1, 0, 2).astype(np.float64)
            K, V = gather(inp["key"]), gather(inp["value"])
            if "keyRope" in inp:
                K = np.concatenate([K, gather(inp["keyRope"])], axis=-1)
        elif "key.0" in inp:  # tensorlist: batch b's own key.b / value.b, batch 1
            K = to_bnsd(inp[f"key.{b}"].astype(np.float64), q_order, Nkv)[0][:, :n2]
            V = to_bnsd(inp[f"value.{b}"].astype(np.float64), q_order, Nkv)[0][:, :n2]
        else:
            K = to_bnsd(inp["key"].astype(np.float64), q_order, Nkv)[0 if tnd else b][:, kv0[b]:kv0[b] + n2]
            if "keyRope" in inp:
                KR = to_bnsd(inp["keyRope"].astype(np.float64), q_order, Nkv)[0 if tnd else b][:, kv0[b]:kv0[b] + n2]
                K = np.concatenate([K, KR], axis=-1)
            V = to_bnsd(inp["value"].astype(np.float64), q_order, Nkv)[0 if tnd else b][:, kv0[b]:kv0[b] + n2]
        if "keySharedPrefix" in inp:  # every batch attends to prefix[:Lp] first
            Lp = int(inp["actualSharedPrefixLen"][0]) if "actualSharedPrefixLen" in inp else inp["keySharedPrefix"].shape[
                2 if q_order == "BNSD" else 1]
            PK = to_bnsd(inp["keySharedPrefix"].astype(np.float64), q_order, Nkv)[0][:, :Lp]
            PV = to_bnsd(inp["valueSharedPrefix"].astype(np.float64), q_order, Nkv)[0][:, :Lp]
            K, V = np.concatenate([PK, K], axis=1), np.concatenate([PV, V], axis=1)
            n2 += Lp
        combined = "antiquantScale" in inp  # the legacy parameters: [0] key, [1] value
        if "keyAntiquantScale" in inp or combined:  # f32(f32(code + offset) * scale)
            S = a["blockSize"] * inp["blockTable"].shape[1] if paged else S2
            tab = (blk, r) if paged else (None, None)
            for k, (side, dim) in enumerate((("key", D), ("value", Dv))):
                mode = a["antiquantMode"] if combined else a[side + "AntiquantMode"]
                sname, oname = ("antiquantScale", "antiquantOffset") if combined else (side + "AntiquantScale", side + "AntiquantOffset")
                part = (lambda t: t[k]) if combined else (lambda t: t)
                sc = antiquant_broadcast(part(inp[sname]), mode, a["antiquant_per_tensor"], b, n2, Nkv, dim, *tab, S, kv0[b])
                off = (antiquant_broadcast(part(inp[oname]), mode, a["antiquant_per_tensor"], b, n2, Nkv, dim, *tab, S, kv0[b])
                       if oname in inp else np.float32(0))
                codes = K if side == "key" else V
                x = ((codes.astype(np.float32) + off).astype(np.float32) * sc).astype(np.float64)
                if side == "key":
                    K = x
                else:
                    V = x
        mrows = mask_rows(mask if applies else None, ifa, mask_shape.startswith("B"), b, q0[b], kv0[b])
        vis = visible(sparse, pre, nxt, mask is not None and not padded, ifa, n1, n2, mrows)
        for h in range(N):
            qb = q[0 if tnd else b][h][q0[b]:q0[b] + n1]
            s = scale * (qb @ K[h // (N // Nkv)].T)
            if pse is not None:
                s = s + pse[b if pse.shape[0] > 1 else 0, h, q0[b]:q0[b] + n1, kv0[b]:kv0[b] + n2].astype(np.float64)
            s = np.where(vis, s, -np.inf)
            mx = s.max(axis=1, initial=-np.inf)
            has = np.isfinite(mx)
            e = np.where(vis, np.exp(s - np.where(has, mx, 0)[:, None]), 0.0)
            tot = e.sum(axis=1)
            w, vh = e, V[h // (N // Nkv)]
            if full:
                w, vh = np.clip(np.rint(e * qs1), 0, 127), vh * deq2
            o = np.where(has[:, None], weighted_sum(w, vh) / np.where(has, tot, 1)[:, None], 0.0)
            out[b, h, row0[b]:row0[b] + n1] = o
            lse[b, h, row0[b]:row0[b] + n1] = np.where(has, mx + np.log(np.where(has, tot, 1)), np.inf)
        rows.append((n1, q0[b]))
    # Post-quant int8: the pre-rounding value x * quantScale2 + quantOffset2, 0 where a row
    # has no visible key (not computed).
    if "quantScale2" in inp:
        s = inp["quantScale2"].astype(np.float64).reshape(-1)
        s = s[0] if s.size == 1 else s.reshape(N, Dv)[None, :, None, :]
        o = inp["quantOffset2"].astype(np.float64).reshape(-1) if "quantOffset2" in inp else np.zeros(1)
        o = o[0] if o.size == 1 else o.reshape(N, Dv)[None, :, None, :]
        out = np.where(np.isinf(lse)[..., None], 0.0, out * s + o)
    # Back to the output layouts.
    if tnd:
        T = int(S1)
        o_tnd, l_tnd = np.zeros((T, N, Dv)), np.zeros((T, N))
        for b, (n1, start) in enumerate(rows):
            o_tnd[start:start + n1] = out[b, :, :n1].transpose(1, 0, 2)
            l_tnd[start:start + n1] = lse[b, :, :n1].T
        o_final = o_tnd if out_order == "TND" else o_tnd.transpose(1, 0, 2)
        l_final = l_tnd[..., None]
    else:
        o_final = {"BSND": out.transpose(0, 2, 1, 3), "BNSD": out, "NBSD": out.transpose(1, 0, 2, 3)}[out_order]
        l_final = lse[..., None]
    return o_final, l_final


def close(got, want):
    want = want.reshape(got.shape)
    if not np.array_equal(np.isnan(want), np.isnan(got)):  # NaN where the other has NaN
        return False
    inf = np.isinf(want) | np.isinf(got)
    if not np.array_equal(np.isinf(want), np.isinf(got)) or not np.array_equal(got[inf], want[inf]):
        return False
    rest = ~inf & ~np.isnan(want)
    scale = max(1.0, float(np.abs(want[rest]).max(initial=0)))
    return bool(np.all(np.abs(got[rest] - want[rest]) <= 1e-9 * scale))


def save_outputs(case, out, lse, folder):
    """The outputs as a device would write them: attentionOut in its dtype, softmaxLse f32."""
    dtype = case.tensors["attentionOut"]["dtype"]
    if dtype == "i8":
        out = np.clip(np.rint(out), -128, 127)
    if not case.manifest["attributes"]["softmaxLseFlag"]:
        lse = np.zeros(case.tensors["softmaxLse"]["shape"])
    outputs = {"attentionOut": out.reshape(case.tensors["attentionOut"]["shape"]),
               "softmaxLse": lse.reshape(case.tensors["softmaxLse"]["shape"])}
    kvbench_golden.save_actual(os.path.join(folder, case.stem + ".safetensors"), outputs, case)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    actual = sys.argv[2] if len(sys.argv) == 3 else None
    if actual:
        os.makedirs(actual, exist_ok=True)
    failed = checked = 0
    for path in kvbench_golden.cases(sys.argv[1]):
        case = kvbench_golden.load_case(path)
        if case.manifest["op"] != "aclnn.FusedInferAttentionScoreV3":
            continue
        out, lse = reference(case)
        if actual:
            save_outputs(case, out, lse, actual)
        checked += 1
        ok = close(out.reshape(-1), case.expected_f64["attentionOut"].reshape(-1))
        if case.manifest["attributes"]["softmaxLseFlag"]:
            ok = ok and close(lse.reshape(-1), case.expected_f64["softmaxLse"].reshape(-1))
        if not ok:
            failed += 1
            print("MISMATCH", case.manifest["case"])
    print(f"{checked - failed} of {checked} FusedInferAttentionScoreV3 goldens match the numpy reference")
    sys.exit(1 if failed or checked == 0 else 0)


if __name__ == "__main__":
    main()
