#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of shaders/texels.glsl and of the runtime's `_texels` views: word i of
// `destination` is word i of `source` read by texel_words in groups of n (1, 2 or 4)
// words (tests/test_runtime.cpp).
#include "texels.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Source { uint source[]; };
layout(binding = 1) uniform usamplerBuffer source_texels;
layout(std430, binding = 2) writeonly buffer Destination { uint destination[]; };
layout(std140, binding = 31) uniform Params { uint count, n; } pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  const uint first = i - i % pc.n;  // a multiple of n, as texel_words requires
  uvec4 t;
  if (pc.n == 4u) t = texel_words(source_texels, first, 4u);
  else if (pc.n == 2u) t = texel_words(source_texels, first, 2u);
  else t = texel_words(source_texels, first, 1u);
  destination[i] = t[i % pc.n];
}
