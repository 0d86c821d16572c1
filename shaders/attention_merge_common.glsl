// What the two merges of the shared attention kernel (attention_core.glsl) share: for each
// output vector, O = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s over its splits,
// finished as attention_finish.glsl says (dtype, empty rows, log-sum-exp, post-quant).
// attention_merge.comp: an invocation per output word (the cpu kernel's, faster on
// lavapipe); attention_merge_splits.comp: a workgroup per vector (the gpu kernel's).
#ifndef KVBENCH_ATTENTION_MERGE_COMMON_GLSL
#define KVBENCH_ATTENTION_MERGE_COMMON_GLSL
#include "grid.glsl"
#include "attention_finish.glsl"
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
  uint first_vector;  // the first output vector of the dispatch: a wave's range (plan_waves)
  uint has_sinks;
} pc;

Finish merge_finish() {
  return Finish(pc.head_dim, pc.out_dtype, pc.empty_zeros, pc.has_lse, pc.pq_per_channel, pc.pq_offset, pc.pq_dtype,
                pc.has_sinks);
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

void write_lse(uint vec, float M, float L) { finish_lse(merge_finish(), merge[4u * vec + 2u], M, L); }

// Output word `word` (channels d0.. of vector vec) from its sums o and the vector's M and L.
void write_word(uint word, uint vec, uint d0, float o[4], float M, float L) {
  finish_word(merge_finish(), PER_WORD, word, merge[4u * vec + 3u], d0, o, M, L);
}

#endif
