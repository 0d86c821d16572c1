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
