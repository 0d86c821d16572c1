// What the two merges of the shared attention kernel (attention_core.glsl) share: for each
// output vector, O = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s over its splits,
// written in the output's dtype; a vector with no visible key is NaN (empty_zeros 0,
// torch's softmax) or zeros (1); its log-sum-exp M + log(L) (+inf for an empty vector) goes
// to lse when the plan gives the vector an lse index and has_lse is set. An i8 output is
// post-quantized in f32: sat_int8(roundEven(O * scale + offset)), scale and offset per
// tensor or per (head, channel) (FIA's quantScale2/quantOffset2).
// attention_merge.comp: an invocation per output word (the cpu kernel's, faster on
// lavapipe); attention_merge_splits.comp: a workgroup per vector (the gpu kernel's).
#ifndef KVBENCH_ATTENTION_MERGE_COMMON_GLSL
#define KVBENCH_ATTENTION_MERGE_COMMON_GLSL
#include "grid.glsl"
#include "quant.glsl"
#include "texels.glsl"

#ifndef MERGE_WORKGROUP
#define MERGE_WORKGROUP 64
#endif
layout(local_size_x = MERGE_WORKGROUP) in;
layout(std430, binding = 0) readonly buffer Partials { float partials[]; };
// Per vector: first slot, splits, lse index, head. A first slot of OTHER_WAVE marks a vector
// that another wave of the plan computes (src/ops/attention/attention_plan.hpp kOtherWave).
layout(std430, binding = 1) readonly buffer Merge { uint merge[]; };
const uint OTHER_WAVE = 0xffffffffu;
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

// A slot is D + 2 floats (D a multiple of 8): m and l start on an even word, and so do an
// output word's accumulators when PER_WORD is 2 or 4.
vec2 slot_ml(uint base) {
  return TEXELS ? uintBitsToFloat(texel_words(partials_texels, base, 2u).xy) : vec2(partials[base], partials[base + 1u]);
}

// The PER_WORD accumulators of slot `base` from channel d0.
void slot_word(uint base, uint d0, out float x[4]) {
  const uint a = base + 2u + d0;
  x = float[4](0.0, 0.0, 0.0, 0.0);
  if (TEXELS && PER_WORD == 1u) {
    x[0] = uintBitsToFloat(texel_words(partials_texels, a, 1u).x);
  } else if (TEXELS) {
    for (uint k = 0u; k < PER_WORD; k += 2u) {
      const vec2 pair = uintBitsToFloat(texel_words(partials_texels, a + k, 2u).xy);
      x[k] = pair.x;
      x[k + 1u] = pair.y;
    }
  } else {
    for (uint k = 0u; k < PER_WORD; ++k) x[k] = partials[a + k];
  }
}

void write_lse(uint vec, float M, float L) {
  if (pc.has_lse != 0u && merge[4u * vec + 2u] != 0xffffffffu)
    lse[merge[4u * vec + 2u]] = L == 0.0 ? uintBitsToFloat(0x7f800000u) : M + log(L);
}

// Output word `word` (channels d0.. of vector vec) from its sums o and the vector's L.
void write_word(uint word, uint vec, uint d0, float o[4], float L) {
  const bool zero = L == 0.0 && pc.empty_zeros != 0u;
  float r[4];
  for (uint k = 0u; k < 4u; ++k) r[k] = zero ? 0.0 : o[k] / L;
  if (PER_WORD == 1u) {
    out_[word] = floatBitsToUint(r[0]);
  } else if (PER_WORD == 2u) {
    out_[word] = encode_float(r[0], pc.out_dtype) | (encode_float(r[1], pc.out_dtype) << 16u);
  } else {
    uint w = 0u;  // a vector with no visible key is not computed: code 0, never the offset
    for (uint k = 0u; k < 4u && !zero; ++k) w |= post_quant(r[k], merge[4u * vec + 3u], d0 + k) << (8u * k);
    out_[word] = w;
  }
}

#endif
