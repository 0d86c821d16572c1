#version 450
#extension GL_GOOGLE_include_directive : require
// MultiHeadCacheAttention step 1: write current_key/current_value of every token into the
// cache at row T(b, t), t = start_pos[b] + (token - seqstarts[b]), quantizing group by group.
// One invocation per (token, kv head, k/v).
#include "quant.glsl"
#include "mhca_common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer CurrentKey { uint current_key[]; };
layout(std430, binding = 1) readonly buffer CurrentValue { uint current_value[]; };
layout(std430, binding = 2) readonly buffer Seqstarts { uint seqstarts[]; };
layout(std430, binding = 3) readonly buffer Cachestarts { uint cachestarts[]; };
layout(std430, binding = 4) readonly buffer StartPos { uint start_pos[]; };
layout(std430, binding = 5) buffer Cache { uint cache[]; };
layout(std430, binding = 6) buffer Scale { uint scale[]; };

void main() {
  const uint id = gl_GlobalInvocationID.x;
  const uint H = pc.num_kv_heads, D = pc.head_dim;
  if (id >= pc.total_rows * H * 2u) return;
  const uint c = id & 1u;
  const uint h = (id >> 1u) % H;
  const uint n = (id >> 1u) / H;
  // The batch of token n: the last b with seqstarts[b] <= n.
  uint lo = 0u, hi = pc.batches;
  while (hi - lo > 1u) {
    const uint mid = (lo + hi) / 2u;
    if (uint(LOAD_I64(seqstarts, mid)) <= n) lo = mid; else hi = mid;
  }
  const uint b = lo;
  const uint t = uint(LOAD_I64(start_pos, b)) + n - uint(LOAD_I64(seqstarts, b));
  const uint T = pc.cache_mode == 0u ? uint(LOAD_I64(cachestarts, b)) + t
                                     : uint(LOAD_I64(cachestarts, b * pc.max_pages + t / pc.page_size)) + t % pc.page_size;
  const uint in_bits = dtype_bits(pc.t1_dtype), cache_bits = dtype_bits(pc.cache_dtype);
  const uint in_base = (n * H + h) * D;
  const uint cache_base = mhca_row(T, c, h, D);
  if (pc.quant_bit == 0u) {
    for (uint d = 0u; d < D; ++d) {
      const uint v = c == 0u ? LOAD_BITS(current_key, in_base + d, in_bits) : LOAD_BITS(current_value, in_base + d, in_bits);
      STORE_BITS(cache, cache_base + d, cache_bits, encode_float(decode_float(v, pc.t1_dtype), pc.cache_dtype));
    }
    return;
  }
  const float qmax = pc.quant_bit == 8u ? 127.0 : 7.0;
  const uint G = pc.quant_group, groups = D / G;
  const uint scale_base = mhca_row(T, c, h, groups);
  for (uint g = 0u; g < groups; ++g) {
    float absmax = 0.0;
    for (uint d = g * G; d < (g + 1u) * G; ++d) {
      const uint v = c == 0u ? LOAD_BITS(current_key, in_base + d, in_bits) : LOAD_BITS(current_value, in_base + d, in_bits);
      absmax = max(absmax, abs(decode_float(v, pc.t1_dtype)));
    }
    const float s = symmetric_scale(absmax, qmax, pc.t1_dtype);
    STORE_BITS(scale, scale_base + g, dtype_bits(pc.scale_dtype), encode_float(s, pc.scale_dtype));
    for (uint d = g * G; d < (g + 1u) * G; ++d) {
      const uint v = c == 0u ? LOAD_BITS(current_key, in_base + d, in_bits) : LOAD_BITS(current_value, in_base + d, in_bits);
      const int q = symmetric_code(decode_float(v, pc.t1_dtype), s, qmax, pc.t1_dtype);
      STORE_BITS(cache, cache_base + d, cache_bits, uint(q) & ((1u << cache_bits) - 1u));
    }
  }
}
