#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// MultiHeadCacheAttention step 1: write current_key/current_value of every token into the
// cache at row T(b, t), t = start_pos[b] + (token - seqstarts[b]), quantizing group by group.
// One invocation per 32-bit word of one (token, kv head, k/v) row of the cache or of the
// scale: it computes its word's elements (each group's scale again from the group's inputs,
// the same for every invocation) and writes the word whole with one plain store. Only a word
// that the row shares with a neighbouring row (a row that does not start on a word) is
// written element by element with atomics. A thread per row writing element by element made
// a GPU run one long chain of atomics: 0.43 ms for a 32k decode on an H200.
#include "grid.glsl"
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

// Element d of the k (c = 0) or v (c = 1) input row starting at `base`.
float input_at(uint c, uint base, uint d) {
  const uint bits = dtype_bits(pc.t1_dtype);
  const uint v = c == 0u ? LOAD_BITS(current_key, base + d, bits) : LOAD_BITS(current_value, base + d, bits);
  return decode_float(v, pc.t1_dtype);
}

float group_scale(uint c, uint base, uint g, float qmax) {
  float absmax = 0.0;
  for (uint d = g * pc.quant_group; d < (g + 1u) * pc.quant_group; ++d) absmax = max(absmax, abs(input_at(c, base, d)));
  return symmetric_scale(absmax, qmax, pc.t1_dtype);
}

// Words per row of `n` elements of `bits`, one more for a row that starts inside a word.
uint words_spanned(uint n, uint bits) { return (n * bits + 31u) / 32u + 1u; }

void main() {
  const uint H = pc.num_kv_heads, D = pc.head_dim;
  const bool quantized = pc.quant_bit != 0u;
  const uint groups = quantized ? D / pc.quant_group : 0u;
  const uint cache_bits = dtype_bits(pc.cache_dtype), scale_bits = dtype_bits(pc.scale_dtype);
  const uint cache_words = words_spanned(D, cache_bits), scale_words = quantized ? words_spanned(groups, scale_bits) : 0u;
  const uint per_row = cache_words + scale_words;
  const uint id = grid_invocation();
  if (id >= pc.total_rows * H * 2u * per_row) return;
  const uint row = id / per_row, unit = id % per_row;
  const uint c = row & 1u, h = (row >> 1u) % H, n = (row >> 1u) / H;
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
  const uint in_base = (n * H + h) * D;
  const float qmax = pc.quant_bit == 8u ? 127.0 : 7.0;

  // This invocation's word: of the cache row (elements d of the row) or of the scale row (groups).
  const bool is_scale = unit >= cache_words;
  const uint bits = is_scale ? scale_bits : cache_bits, count = is_scale ? groups : D;
  const uint base = is_scale ? mhca_row(T, c, h, groups) : mhca_row(T, c, h, D);
  const uint per_word = 32u / bits;
  const uint word = base / per_word + (is_scale ? unit - cache_words : unit);
  const uint e0 = max(word * per_word, base), e1 = min((word + 1u) * per_word, base + count);
  if (e0 >= e1) return;  // the spare word of a row that starts on a word
  uint packed = 0u;
  uint last_group = 0xffffffffu;
  float s = 0.0;
  for (uint e = e0; e < e1; ++e) {
    const uint i = e - base;  // the element (cache) or group (scale) of the row
    const uint g = is_scale ? i : i / max(pc.quant_group, 1u);
    if (quantized && g != last_group) {
      s = group_scale(c, in_base, g, qmax);
      last_group = g;
    }
    uint v;
    if (is_scale) v = encode_float(s, pc.scale_dtype);
    else if (quantized) v = uint(symmetric_code(input_at(c, in_base, i), s, qmax, pc.t1_dtype)) & (0xffffffffu >> (32u - bits));
    else v = encode_float(input_at(c, in_base, i), pc.cache_dtype);
    packed |= bits == 32u ? v : v << ((e % per_word) * bits);
    if (e1 - e0 < per_word) {
      if (is_scale) STORE_BITS(scale, e, bits, v) else STORE_BITS(cache, e, bits, v)
    }
  }
  if (e1 - e0 == per_word) {
    if (is_scale) scale[word] = packed;
    else cache[word] = packed;
  }
}
