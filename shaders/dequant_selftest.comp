#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of quant.glsl's code_float on the device, used by tests/test_dequant_codes.cpp
// only. Invocation i < 256 puts code pattern i in byte e of a word (e = 0 .. 3) and i < 16
// in nibble e (e = 0 .. 7), the other codes of the word filled with other patterns, and
// writes the float code_float gives: out[4 i + e] (int8), out[1024 + 8 i + e] (int4); and
// the float fp8_code_float gives of E4M3FN pattern i in byte e: out[1152 + 4 i + e].
#include "code_words.glsl"
#include "quant.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Floats { float floats[]; };

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= 256u) return;
  for (uint e = 0u; e < 4u; ++e) floats[4u * i + e] = code_float(biased_codes(word_with(i, e, 8u), 8u), e, 8u);
  for (uint e = 0u; e < 4u; ++e) floats[1152u + 4u * i + e] = fp8_code_float(word_with(i, e, 8u), e);
  if (i >= 16u) return;
  for (uint e = 0u; e < 8u; ++e) floats[1024u + 8u * i + e] = code_float(biased_codes(word_with(i, e, 4u), 4u), e, 4u);
}
