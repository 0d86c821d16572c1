#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#include "grid.glsl"
// atb.ReshapeAndCache: one invocation per (token, head) copies key/value[t, h, :] to
// cache[slot // block_size, slot % block_size, h, :] (flat row slot * heads + h); a
// negative slot is a padding token and writes nothing.
#include "storage.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Key { uint key[]; };
layout(std430, binding = 1) readonly buffer Value { uint value[]; };
layout(std430, binding = 2) buffer KeyCache { uint key_cache[]; };
layout(std430, binding = 3) buffer ValueCache { uint value_cache[]; };
layout(std430, binding = 4) readonly buffer SlotMapping { int slot_mapping[]; };

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint num_tokens, num_heads, row_words;
} pc;

void main() {
  const uint id = grid_invocation();  // large launches are a 2-D grid
  if (id >= pc.num_tokens * pc.num_heads) return;
  const uint t = id / pc.num_heads, h = id % pc.num_heads;
  const int slot = slot_mapping[t];
  if (slot < 0) return;
  const uint src = id * pc.row_words, dst = (uint(slot) * pc.num_heads + h) * pc.row_words;
  for (uint k = 0u; k < pc.row_words; ++k) {
    key_cache[dst + k] = key[src + k];
    value_cache[dst + k] = value[src + k];
  }
}
