"""OpenPPL's KV-cache quantizer and dequantizer in torch ops, shared by the KeyValueCache and
MultiHeadCacheAttention backends (specs/key_value_cache.md; PMX's torch_function/KeyValueCache.py
`quant()` at OpenPPL/ppl.pmx 4b3a146, which this follows op for op):

    s = max(T1(max|x| / qmax), T1(1e-5));  q = clamp(round(T1(x / s)), -qmax, qmax)
    stored scale = S(s);                   dequantized = T1(S(q * S(s)))

T1 is the tensor's dtype (f16 or f32): every operation runs in it, as torch runs it. On the CPU
torch computes an f16 operation in f32 and rounds the result to f16; for one division or
product of two f16 values that is the correctly rounded f16 result (f32 holds 24 >= 2 * 11 + 2
bits), so this is PMX's arithmetic on any device that rounds correctly.
"""
import torch

TORCH_DTYPE = {"f16": torch.float16, "f32": torch.float32, "bf16": torch.bfloat16}


def qmax_of(quant_bit):
    return (1 << (quant_bit - 1)) - 1


def quantize(x, quant_bit, quant_group, scale_dtype, truncate=False):
    """x (..., D) in T1 -> (codes int8 (..., D), scale (..., D / quant_group) in scale_dtype).
    truncate: the planted error `kvc_truncate` (codes rounded toward zero, a C cast)."""
    qmax = qmax_of(quant_bit)
    shape = x.shape
    g = x.reshape(*shape[:-1], shape[-1] // quant_group, quant_group)
    floor = torch.tensor(1e-5, dtype=x.dtype)
    s = torch.maximum(g.abs().amax(dim=-1, keepdim=True) / qmax, floor)
    # The quotient rounded to T1, then to an integer (half to even). torch 1.13 has no CPU
    # round for f16: it runs on the quotient widened to f32, which holds every f16 exactly.
    quotient = (g / s).float()
    codes = torch.trunc(quotient) if truncate else torch.round(quotient)
    codes = codes.clamp(-qmax, qmax).to(torch.int8).reshape(shape)
    return codes, s.squeeze(-1).to(scale_dtype)


def dequantize(codes, scale, quant_group, t1):
    """T1(S(q * s)): PMX's `X.type_as(scale) * scale`, then the cast to T1."""
    s = scale.repeat_interleave(quant_group, dim=-1)
    return (codes.to(scale.dtype) * s).to(t1)
