#version 450
#extension GL_GOOGLE_include_directive : require
// The merge of the shared attention kernel (attention_core.glsl): for each output vector,
// O = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s over its splits, written in the
// output's dtype. A vector with no visible key is NaN (empty_zeros 0, torch's softmax) or
// zeros (1). A workgroup per output vector: its invocations take the splits in turn for
// M = max m_s and L, each weight exp(m_s - M) computed once into shared memory, then the
// output's 32-bit words in turn (one f32, two f16/bf16, four i8), each a sum over the
// splits of coalesced loads. Reductions go through shared memory in two levels (64 -> 8
// -> 1, two barriers each), the same at every subgroup width. Invocation 0 writes the
// log-sum-exp M + log(L) (+inf for an empty vector) when the plan gives the vector an lse
// index and has_lse is set. An i8 output is post-quantized in f32:
// sat_int8(roundEven(O * scale + offset)), scale and offset per tensor or per (head,
// channel) (FIA's quantScale2/quantOffset2).
#include "grid.glsl"
#include "quant.glsl"
#include "texels.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Partials { float partials[]; };
// Per vector: first slot, splits, lse index, head.
layout(std430, binding = 1) readonly buffer Merge { uint merge[]; };
layout(std430, binding = 2) writeonly buffer Out { uint out_[]; };
layout(std430, binding = 3) writeonly buffer Lse { float lse[]; };
layout(std430, binding = 4) readonly buffer QuantScale2 { uint quantScale2[]; };
layout(std430, binding = 5) readonly buffer QuantOffset2 { uint quantOffset2[]; };
// The partial states again, as uvec4 texels: read through this view when TEXELS is set
// (the host's texels_cover), one gather per (m, l) pair and per output word's
// accumulators instead of a storage-buffer load per float (shaders/texels.glsl).
layout(binding = 6) uniform usamplerBuffer partials_texels;
layout(constant_id = 0) const bool TEXELS = false;
// Output elements per 32-bit word (4 / dtype bits of out_dtype): a constant, so that only
// this dtype's loads are compiled in (lavapipe runs a run-time branch's loads as masked
// code even where no lane takes it).
layout(constant_id = 1) const uint PER_WORD = 1u;
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint elements, head_dim, out_dtype, empty_zeros;
  uint has_lse, pq_per_channel, pq_offset, pq_dtype;
} pc;

// Element k of an i8 output vector (head h, channel d) from its f32 value.
uint post_quant(float x, uint h, uint d) {
  const uint i = pc.pq_per_channel != 0u ? h * pc.head_dim + d : 0u;
  const uint bits = dtype_bits(pc.pq_dtype);
  const float s = decode_float(LOAD_BITS(quantScale2, i, bits), pc.pq_dtype);
  const float o = pc.pq_offset != 0u ? decode_float(LOAD_BITS(quantOffset2, i, bits), pc.pq_dtype) : 0.0;
  precise float v = x * s + o;
  return uint(int(clamp(round_half_even(v), -128.0, 127.0))) & 0xffu;
}

// The plan gives no vector more splits than this (attention_plan.hpp kMaxMergeSplits).
const uint MAX_SPLITS = 512u;
shared float weight_s[MAX_SPLITS];
shared float red_s[64];
shared float red8_s[8];

// The maximum (is_max) or sum of every invocation's x. Sums go in a fixed order: the same
// result at every subgroup width and on every run.
float workgroup_reduce(float x, bool is_max) {
  const uint t = gl_LocalInvocationID.x;
  red_s[t] = x;
  barrier();
  if (t < 8u) {
    float r = red_s[8u * t];
    for (uint i = 1u; i < 8u; ++i) r = is_max ? max(r, red_s[8u * t + i]) : r + red_s[8u * t + i];
    red8_s[t] = r;
  }
  barrier();
  float r = red8_s[0];
  for (uint i = 1u; i < 8u; ++i) r = is_max ? max(r, red8_s[i]) : r + red8_s[i];
  return r;
}

// m and l of split slot `base`.
vec2 slot_ml(uint base) {
  return TEXELS ? uintBitsToFloat(texel_words(partials_texels, base, 2u).xy) : vec2(partials[base], partials[base + 1u]);
}

void main() {
  const uint D = pc.head_dim;
  const uint per_word = PER_WORD;
  const uint t = gl_LocalInvocationID.x;
  const uint vec = grid_workgroup();
  if (vec * D >= pc.elements) return;  // the surplus of the grid's last row: the whole workgroup
  const uint first = merge[4u * vec], nsplit = merge[4u * vec + 1u];
  // A slot is D + 2 floats (D a multiple of 8): m and l start on an even word, and so do
  // each word's accumulators when per_word is 2 or 4.
  float M = uintBitsToFloat(0xff800000u);
  for (uint s = t; s < nsplit; s += 64u) M = max(M, slot_ml((first + s) * (D + 2u)).x);
  M = workgroup_reduce(M, true);
  float L = 0.0;
  for (uint s = t; s < nsplit; s += 64u) {
    const vec2 ml = slot_ml((first + s) * (D + 2u));
    // A split with no visible key weighs 0; an unwritten (NaN) slot makes the vector NaN.
    const float w = isinf(ml.x) && ml.x < 0.0 ? 0.0 : exp(ml.x - M);
    weight_s[s] = w;
    L += w == 0.0 ? 0.0 : w * ml.y;
  }
  L = workgroup_reduce(L, false);  // its barriers also publish weight_s
  const bool zero = L == 0.0 && pc.empty_zeros != 0u;
  if (t == 0u && pc.has_lse != 0u && merge[4u * vec + 2u] != 0xffffffffu)
    lse[merge[4u * vec + 2u]] = L == 0.0 ? uintBitsToFloat(0x7f800000u) : M + log(L);
  for (uint d0 = t * per_word; d0 < D; d0 += 64u * per_word) {
    float o[4] = float[4](0.0, 0.0, 0.0, 0.0);
    for (uint s = 0u; s < nsplit; ++s) {
      const float w = weight_s[s];
      if (w == 0.0) continue;
      const uint a = (first + s) * (D + 2u) + 2u + d0;
      float x[4];
      if (TEXELS && per_word == 1u) {
        x[0] = uintBitsToFloat(texel_words(partials_texels, a, 1u).x);
      } else if (TEXELS) {
        for (uint k = 0u; k < per_word; k += 2u) {
          const vec2 pair = uintBitsToFloat(texel_words(partials_texels, a + k, 2u).xy);
          x[k] = pair.x;
          x[k + 1u] = pair.y;
        }
      } else {
        for (uint k = 0u; k < per_word; ++k) x[k] = partials[a + k];
      }
      for (uint k = 0u; k < per_word; ++k) o[k] += w * x[k];
    }
    float r[4];
    for (uint k = 0u; k < 4u; ++k) r[k] = zero ? 0.0 : o[k] / L;
    const uint word = (vec * D + d0) / per_word;
    if (per_word == 1u) {
      out_[word] = floatBitsToUint(r[0]);
    } else if (per_word == 2u) {
      out_[word] = encode_float(r[0], pc.out_dtype) | (encode_float(r[1], pc.out_dtype) << 16u);
    } else {
      uint w = 0u;  // a vector with no visible key is not computed: code 0, never the offset
      for (uint k = 0u; k < 4u && !zero; ++k) w |= post_quant(r[k], merge[4u * vec + 3u], d0 + k) << (8u * k);
      out_[word] = w;
    }
  }
}
