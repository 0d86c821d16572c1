#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// pmx.KeyValueCache step 2: read positions [0, start_pos + seqlen) of layer layer_idx back
// from the cache, dequantize, and write key/value with each kv head repeated num_repeat
// times. Invocations stride over the output elements (the host caps the groups at
// maxComputeWorkGroupCount.x); gl_GlobalInvocationID.y selects key (0) or value (1).
#include "quant.glsl"
#include "kv_cache_layout.glsl"
#include "kv_cache_push.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Cache { uint cache[]; };
layout(std430, binding = 1) readonly buffer Scale { uint scale[]; };
layout(std430, binding = 2) buffer Key { uint key[]; };
layout(std430, binding = 3) buffer Value { uint value[]; };

void fetch(uint i, uint kv) {
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
  const uint bits = encode_float(x, pc.input_dtype);
  const uint out_bits = dtype_bits(pc.input_dtype);
  if (kv == 0u) STORE_BITS(key, i, out_bits, bits) else STORE_BITS(value, i, out_bits, bits)
}

void main() {
  const uint n = pc.batch * (pc.start_pos + pc.seqlen) * pc.heads * pc.num_repeat * pc.head_dim;
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
    fetch(i, gl_GlobalInvocationID.y);
    if (n - i <= stride) break;  // i + stride would reach n, or wrap past 2^32
  }
}
