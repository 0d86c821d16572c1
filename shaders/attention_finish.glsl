// How an attention output vector is finished from its softmax state (max M, sum L, the sums
// o of exp(s - M) V): O = o / L written in the output's dtype; a vector with no visible key
// is NaN (empty_zeros 0, torch's softmax) or zeros (1); its log-sum-exp M + log(L) (+inf for
// an empty vector) goes to lse when the plan gives the vector an lse index and has_lse is
// set. An i8 output is post-quantized in f32: sat_int8(roundEven(O * scale + offset)), scale
// and offset per tensor or per (head, channel) (FIA's quantScale2/quantOffset2).
// One place for both writers: the merges (attention_merge_common.glsl), which combine a
// vector's splits, and the attention kernels themselves for plans whose every vector has one
// split (attention_core.glsl's direct output: no partial state, no merge).
#ifndef KVBENCH_ATTENTION_FINISH_GLSL
#define KVBENCH_ATTENTION_FINISH_GLSL
#include "quant.glsl"

layout(std430, binding = 24) writeonly buffer Out { uint out_[]; };
layout(std430, binding = 25) writeonly buffer Lse { float lse[]; };
layout(std430, binding = 26) readonly buffer QuantScale2 { uint quantScale2[]; };
layout(std430, binding = 27) readonly buffer QuantOffset2 { uint quantOffset2[]; };
// One sink logit per head (ggml's flash_attn_ext_add_sinks): a score in the softmax's max and
// sum with no value row.
layout(std430, binding = 22) readonly buffer Sinks { float sinks[]; };

struct Finish {
  uint head_dim, out_dtype, empty_zeros, has_lse, pq_per_channel, pq_offset, pq_dtype, has_sinks;
};

// The sink of head h joins a vector's state (max M, sum L, sums o): the sink's weight added
// to L, both rescaled to the larger max. A vector with no visible key (M = -inf) stays 0.
void finish_sink(Finish f, uint h, float M, inout float L, inout float o[4]) {
  if (f.has_sinks == 0u) return;
  const float sk = sinks[h];
  if (sk > M) {
    const float r = exp(M - sk);
    for (uint k = 0u; k < 4u; ++k) o[k] *= r;
    L = L * r + 1.0;
  } else {
    L += exp(sk - M);
  }
}

// Element k of an i8 output vector (head h, channel d) from its f32 value.
uint finish_post_quant(Finish f, float x, uint h, uint d) {
  const uint i = f.pq_per_channel != 0u ? h * f.head_dim + d : 0u;
  const uint bits = dtype_bits(f.pq_dtype);
  const float s = decode_float(LOAD_BITS(quantScale2, i, bits), f.pq_dtype);
  const float o = f.pq_offset != 0u ? decode_float(LOAD_BITS(quantOffset2, i, bits), f.pq_dtype) : 0.0;
  precise float v = x * s + o;
  return uint(int(clamp(round_half_even(v), -128.0, 127.0))) & 0xffu;
}

// The log-sum-exp of a vector at lse[index] (0xffffffff: the vector has none).
void finish_lse(Finish f, uint index, float M, float L) {
  if (f.has_lse != 0u && index != 0xffffffffu) lse[index] = L == 0.0 ? uintBitsToFloat(0x7f800000u) : M + log(L);
}

// Output word `word`: channels d0 .. d0 + per_word - 1 (per_word = 32 / the dtype's bits) of
// a vector of head h, from their sums o and the vector's M and L.
void finish_word(Finish f, uint per_word, uint word, uint h, uint d0, float o[4], float M, float L) {
  finish_sink(f, h, M, L, o);
  const bool zero = L == 0.0 && f.empty_zeros != 0u;
  float r[4];
  for (uint k = 0u; k < 4u; ++k) r[k] = zero ? 0.0 : o[k] / L;
  if (per_word == 1u) {
    out_[word] = floatBitsToUint(r[0]);
  } else if (per_word == 2u) {
    out_[word] = encode_float(r[0], f.out_dtype) | (encode_float(r[1], f.out_dtype) << 16u);
  } else {
    uint w = 0u;  // a vector with no visible key is not computed: code 0, never the offset
    for (uint k = 0u; k < 4u && !zero; ++k) w |= finish_post_quant(f, r[k], h, d0 + k) << (8u * k);
    out_[word] = w;
  }
}

#endif
