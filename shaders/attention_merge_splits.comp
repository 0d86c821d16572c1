#version 450
#extension GL_GOOGLE_include_directive : require
// The gpu kernel's merge (attention_merge_common.glsl has what it computes): a workgroup of
// 64 per output vector. Its invocations take the splits in turn for M = max m_s and L, each
// weight exp(m_s - M) computed once into shared memory, then the output's 32-bit words in
// turn, each a sum over the splits of loads that are coalesced across the invocations.
// Reductions go through shared memory in two levels (64 -> 8 -> 1, two barriers each):
// the same at every subgroup width, sums in a fixed order.
#include "attention_merge_common.glsl"

// The plan gives no vector more splits than this (attention_plan.hpp kMaxMergeSplits).
const uint MAX_SPLITS = 512u;
shared float weight_s[MAX_SPLITS];
shared float red_s[64];
shared float red8_s[8];

// The maximum (is_max) or sum of every invocation's x.
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

void main() {
  const uint D = pc.head_dim;
  const uint t = gl_LocalInvocationID.x;
  const uint vec = grid_workgroup();
  if (vec * D >= pc.elements) return;  // the surplus of the grid's last row: the whole workgroup
  const uint first = merge[4u * vec], nsplit = merge[4u * vec + 1u];
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
  if (t == 0u) write_lse(vec, M, L);
  for (uint d0 = t * PER_WORD; d0 < D; d0 += 64u * PER_WORD) {
    float o[4] = float[4](0.0, 0.0, 0.0, 0.0);
    for (uint s = 0u; s < nsplit; ++s) {
      const float w = weight_s[s];
      if (w == 0.0) continue;
      float x[4];
      slot_word((first + s) * (D + 2u), d0, x);
      for (uint k = 0u; k < PER_WORD; ++k) o[k] += w * x[k];
    }
    write_word((vec * D + d0) / PER_WORD, vec, d0, o, L);
  }
}
