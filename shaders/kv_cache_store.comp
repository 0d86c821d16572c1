#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#include "grid.glsl"
// pmx.KeyValueCache step 1: quantize current_key/current_value group by group and store
// codes and scales at positions [start_pos, start_pos + seqlen) of layer layer_idx.
// One invocation per (batch, token, head, k/v) row of head_dim elements.
#include "quant.glsl"
#include "kv_cache_layout.glsl"
#include "kv_cache_push.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer CurrentKey { uint current_key[]; };
layout(std430, binding = 1) readonly buffer CurrentValue { uint current_value[]; };
layout(std430, binding = 2) buffer Cache { uint cache[]; };
layout(std430, binding = 3) buffer Scale { uint scale[]; };

void main() {
  const uint row = grid_invocation();  // large launches are a 2-D grid
  const uint rows = pc.batch * pc.seqlen * pc.heads * 2u;
  if (row >= rows) return;
  const uint kv = row & 1u;
  const uint h = (row >> 1u) % pc.heads;
  const uint s = (row >> 1u) / pc.heads % pc.seqlen;
  const uint b = (row >> 1u) / pc.heads / pc.seqlen;
  const uint D = pc.head_dim;
  const uint in_bits = dtype_bits(pc.input_dtype);
  const uint in_base = ((b * pc.seqlen + s) * pc.heads + h) * D;
  const uint t = pc.start_pos + s;
  const uint cache_base = kv_cache_row(pc.layout_, b, pc.layer_idx, kv, t, h, pc.max_batch, pc.num_layer,
                                       pc.max_seqlen, pc.heads, D);
  const uint cache_bits = dtype_bits(pc.cache_dtype);

  if (pc.quant_bit == 0u) {
    for (uint d = 0u; d < D; ++d) {
      const uint v = kv == 0u ? LOAD_BITS(current_key, in_base + d, in_bits) : LOAD_BITS(current_value, in_base + d, in_bits);
      STORE_BITS(cache, cache_base + d, cache_bits, encode_float(decode_float(v, pc.input_dtype), pc.cache_dtype));
    }
    return;
  }

  const float qmax = pc.quant_bit == 8u ? 127.0 : 7.0;
  const uint G = pc.quant_group;
  const uint groups = D / G;
  const uint scale_base = kv_cache_row(pc.layout_, b, pc.layer_idx, kv, t, h, pc.max_batch, pc.num_layer,
                                       pc.max_seqlen, pc.heads, groups);
  const uint scale_bits = dtype_bits(pc.scale_dtype);
  for (uint g = 0u; g < groups; ++g) {
    float absmax = 0.0;
    for (uint d = g * G; d < (g + 1u) * G; ++d) {
      const uint v = kv == 0u ? LOAD_BITS(current_key, in_base + d, in_bits) : LOAD_BITS(current_value, in_base + d, in_bits);
      absmax = max(absmax, abs(decode_float(v, pc.input_dtype)));
    }
    const float s_t = symmetric_scale(absmax, qmax, pc.input_dtype);
    STORE_BITS(scale, scale_base + g, scale_bits, encode_float(s_t, pc.scale_dtype));
    for (uint d = g * G; d < (g + 1u) * G; ++d) {
      const uint v = kv == 0u ? LOAD_BITS(current_key, in_base + d, in_bits) : LOAD_BITS(current_value, in_base + d, in_bits);
      const int q = symmetric_code(decode_float(v, pc.input_dtype), s_t, qmax, pc.input_dtype);
      STORE_BITS(cache, cache_base + d, cache_bits, uint(q) & ((1u << cache_bits) - 1u));
    }
  }
}
