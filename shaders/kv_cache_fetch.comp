#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// pmx.KeyValueCache step 2: read positions [0, start_pos + seqlen) of layer layer_idx back
// from the cache, dequantize, and write key/value with each kv head repeated num_repeat
// times. An invocation writes whole output words, 32 / bits elements each (two f16, one
// f32), with one plain store: no atomics, as STORE_BITS needs when neighbours in a word
// belong to other invocations (they made the fetch 0.17 GB/s on lavapipe). Invocations
// stride over the words (the host caps the groups at maxComputeWorkGroupCount.x);
// gl_GlobalInvocationID.y selects key (0) or value (1).
#include "quant.glsl"
#include "kv_cache_layout.glsl"
#include "kv_cache_push.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Cache { uint cache[]; };
layout(std430, binding = 1) readonly buffer Scale { uint scale[]; };
layout(std430, binding = 2) buffer Key { uint key[]; };
layout(std430, binding = 3) buffer Value { uint value[]; };

// The bits of output element i of key (kv 0) or value (kv 1).
uint fetch(uint i, uint kv) {
  const uint D = pc.head_dim;
  const uint out_heads = pc.heads * pc.num_repeat;
  const uint total = pc.start_pos + pc.seqlen;
  const uint d = i % D;
  const uint o = i / D % out_heads;
  const uint t = i / D / out_heads % total;
  const uint b = i / D / out_heads / total;
  const uint h = o / pc.num_repeat;  // output head o reads kv head o / num_repeat

  const uint cache_bits = dtype_bits(pc.cache_dtype);
  const uint c = LOAD_BITS(cache, kv_cache_row(pc.layout_, b, pc.layer_idx, kv, t, h, pc.max_batch, pc.num_layer,
                                               pc.max_seqlen, pc.heads, D) + d, cache_bits);
  float x;
  if (pc.quant_bit == 0u) {
    x = decode_float(c, pc.cache_dtype);
  } else {
    const uint groups = D / pc.quant_group;
    const uint sb = LOAD_BITS(scale, kv_cache_row(pc.layout_, b, pc.layer_idx, kv, t, h, pc.max_batch, pc.num_layer,
                                                  pc.max_seqlen, pc.heads, groups) + d / pc.quant_group,
                              dtype_bits(pc.scale_dtype));
    x = dequant_ppl(sign_extend(c, cache_bits), decode_float(sb, pc.scale_dtype), pc.scale_dtype);
  }
  return encode_float(x, pc.input_dtype);
}

void main() {
  const uint n = pc.batch * (pc.start_pos + pc.seqlen) * pc.heads * pc.num_repeat * pc.head_dim;
  const uint kv = gl_GlobalInvocationID.y;
  const uint bits = dtype_bits(pc.input_dtype);  // 16 or 32 (the signature's T1)
  const uint per_word = 32u / bits;
  const uint words = n / per_word + (n % per_word != 0u ? 1u : 0u);
  const uint mask = 0xffffffffu >> (32u - bits);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
    const uint first = w * per_word;
    // The last word of an odd count of f16 keeps the bits past the tensor's end.
    uint word = n - first >= per_word ? 0u : (kv == 0u ? key[w] : value[w]);
    for (uint j = 0u; j < per_word && j < n - first; ++j) {
      const uint shift = j * bits;
      word = (word & ~(mask << shift)) | ((fetch(first + j, kv) & mask) << shift);
    }
    if (kv == 0u)
      key[w] = word;
    else
      value[w] = word;
    if (words - w <= stride) break;  // w + stride would reach words, or wrap past 2^32
  }
}
