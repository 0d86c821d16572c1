"""aclnn.FusedInferAttentionScoreV3's layouts, lengths and visibility, for the implementations
in Python (tools/fia_reference.py in numpy, examples/torch/fused_infer_attention.py in torch):
what the operator's attributes mean, written once (specs/fused_infer_attention_score.md)."""
import numpy as np

# inputLayout: (the query's order, the output's order).
ORDERS = {"BSH": ("BSND", "BSND"), "BSND": ("BSND", "BSND"), "BNSD": ("BNSD", "BNSD"), "BNSD_BSND": ("BNSD", "BSND"),
          "BSH_NBSD": ("BSND", "NBSD"), "BSND_NBSD": ("BSND", "NBSD"), "BNSD_NBSD": ("BNSD", "NBSD"),
          "TND": ("TND", "TND"), "NTD_TND": ("NTD", "TND"), "TND_NTD": ("TND", "NTD")}


def lengths(values, count, full):
    """Per batch: actualSeqLengths(Kv) (one value for all batches, or one each), else `full`."""
    if values is None:
        return [full] * count
    values = [int(v) for v in values]
    return [values[0] if len(values) == 1 else values[b] for b in range(count)]


def batch_ranges(inputs, B, S1, S2, tnd, paged):
    """Per batch: its query rows and keys, and where each starts (s1b, q0, s2b, kv0). TND
    layouts give cumulative actualSeqLengths(Kv) (the keys' per batch when paged); left
    padding (queryPaddingSize, kvPaddingSize) ends a batch's rows and keys `pad` before the
    end (negative pads are 0; a batch whose keys would start before 0 sees none)."""
    act_q, act_kv = inputs.get("actualSeqLengths"), inputs.get("actualSeqLengthsKv")
    if tnd:
        cq = np.concatenate([[0], act_q]).astype(np.int64)
        s1b, q0 = np.diff(cq), cq[:-1]
        if paged:
            return s1b, q0, [int(x) for x in act_kv], [0] * B
        ck = np.concatenate([[0], act_kv]).astype(np.int64)
        return s1b, q0, np.diff(ck), ck[:-1]
    s1b = [1] * B if S1 == 1 else lengths(act_q, B, S1)
    s2b, q0, kv0 = lengths(act_kv, B, S2), [0] * B, [0] * B
    if "queryPaddingSize" in inputs:
        qpad = max(0, int(inputs["queryPaddingSize"][0]))
        q0 = [S1 - qpad - s1b[b] for b in range(B)]
    if "kvPaddingSize" in inputs:
        kvpad = max(0, int(inputs["kvPaddingSize"][0]))
        kv0 = [S2 - kvpad - s2b[b] for b in range(B)]
        s2b = [0 if kv0[b] < 0 else s2b[b] for b in range(B)]
        kv0 = [max(0, x) for x in kv0]
    return s1b, q0, s2b, kv0


def mask_rows(mask, ifa, batch_major, b, q0, k0):
    """The rows of attenMask (True: masked) that batch b's query rows (from q0) see over its
    keys (from k0), or None without a mask: one row per batch in the incremental (ifa) form,
    else the batch's (batch_major: attenMask_shape starts with B) or the shared matrix."""
    if mask is None:
        return None
    mk = mask.astype(bool)
    if ifa:
        rows = mk.reshape(mk.shape[0], -1)[b][None, :]
    else:
        mk = mk.reshape(-1, mk.shape[-2], mk.shape[-1])
        rows = mk[b if batch_major else 0][q0:, :]
    return rows[:, k0:]


def visible(sparse, pre, nxt, masked, ifa, s1, s2, mask_rows):
    """The (s1, s2) boolean matrix of the keys each query row sees: sparseMode's band (with
    preTokens and nextTokens) unless the case is the incremental (ifa) form, less the rows of
    attenMask that mask a key."""
    i = np.arange(s1)[:, None]
    j = np.arange(s2)[None, :]
    rel, delta = j - i, s2 - s1
    ok = np.ones((s1, s2), bool)
    if not ifa:
        if sparse == 0 and masked:
            ok = (rel >= -pre) & (rel <= nxt)
        elif sparse == 2:
            ok = rel <= 0
        elif sparse == 3:
            ok = rel <= delta
        elif sparse == 4:
            ok = (rel >= delta - pre) & (rel <= delta + nxt)
    if mask_rows is not None:
        ok &= ~mask_rows[:s1, :s2]
    return ok


def antiquant_broadcast(t, mode, per_tensor, b, n2, Nkv, dim, blk, r, S, k0):
    """An antiquant scale or offset tensor `t` as f32, broadcast to (Nkv, n2, dim) for batch b
    in antiquant mode `mode` (the spec's modes; blk, r: the key tokens' page blocks and rows
    in page attention; S: the keys per batch; k0: batch b's first key)."""
    t = np.asarray(t).astype(np.float32)
    if mode == 0:
        return t.reshape(1, 1, 1) if per_tensor else t.reshape(Nkv, dim)[:, None, :]
    if mode == 1:
        return t.reshape(-1, S)[b, k0:k0 + n2][None, :, None]
    if mode == 2:
        return t.reshape(Nkv)[:, None, None]
    if mode == 3:
        return t.reshape(-1, Nkv, S)[b, :, k0:k0 + n2][:, :, None]
    if mode == 4:
        return t[blk, r][None, :, None]
    if mode == 6:  # per-token-group: one scale per 32 channels of a token row
        return np.repeat(t.reshape(-1, Nkv, S, dim // 32)[b, :, k0:k0 + n2, :], 32, axis=-1)
    return t[blk, :, r].T[:, :, None]
