"""softmax(S) @ V as each variant of the torch backends computes it (examples/torch/torch_backend.py
--variant; specs/comparison.md "Permitted implementations"), in f32 with P in `dtype`:

    None              the upstream computation (PMX's torch reference, oneDNN's pattern, Ascend's
                      golden): torch.softmax in f32, P rounded to dtype, P @ V in f32
    flash             P stays f32 (a flash-style kernel normalises in f32)
    unnormalized_exp  exp(S - max) rounded to dtype before P @ V, the f32 sum divided out after
                      (oneDNN's micro-SDPA, PMX's flash prefill, Ascend's prompt kernel)
    kv_query_dtype    K and V in the query's dtype (applied by the caller), P as upstream

A row of only -inf gives NaN here (torch's softmax); the callers apply their operator's
rule. Like torch's softmax @ V, every key of S multiplies its V, weight 0 included (IEEE
0 * inf = NaN: permitted inside the sequence, specs/golden-format.md)."""
import torch


def softmax_pv(s, v, dtype, variant):
    if variant == "unnormalized_exp":
        m = s.amax(dim=-1, keepdim=True)
        e = torch.exp(s - m)
        return torch.matmul(e.to(dtype).float(), v) / e.sum(dim=-1, keepdim=True)
    p = torch.softmax(s, dim=-1)
    if variant != "flash":
        p = p.to(dtype).float()
    return torch.matmul(p, v)
