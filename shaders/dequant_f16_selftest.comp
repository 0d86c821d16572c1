#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of quant_f16.glsl on the device, used by tests/test_dequant_codes.cpp only (on
// devices with DeviceInfo::f16_rte).
// op 0: invocation i < 256 puts code pattern i in byte e of a word (e = 0 .. 3; i < 16: in
//       nibble e, e = 0 .. 7), the word's other codes other patterns, and writes the f16
//       code_pair_f16 gives for it, widened to f32: out[4 i + e] (int8), out[1024 + 8 i + e].
// op 1: for f16 bits s = i and every int8 q, the f16 product of code_pair_f16's q and s,
//       widened: out[256 i + q + 128] (the decode kernel's dequantization of MHCA).
#include "code_words.glsl"
#include "quant_f16.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Floats { float floats[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count, op;
} pc;

// Code at position e of a biased word through code_pair_f16: the pair's first or second half.
float16_t code_at(uint biased, uint e, uint bits) {
  const uint half_codes = 16u / bits;  // codes per 16-bit half
  const f16vec2 pair = code_pair_f16(biased, e % half_codes, bits);
  return e < half_codes ? pair.x : pair.y;
}

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  if (pc.op == 1u) {
    const float16_t s = unpackFloat2x16(i).x;
    for (uint q = 0u; q < 256u; ++q) {  // q - 128 in byte 1 of the word
      const uint biased = biased_codes(word_with(q ^ 0x80u, 1u, 8u), 8u);
      precise float16_t x = code_at(biased, 1u, 8u) * s;
      floats[256u * i + q] = float(x);
    }
    return;
  }
  if (i >= 256u) return;
  for (uint e = 0u; e < 4u; ++e) floats[4u * i + e] = float(code_at(biased_codes(word_with(i, e, 8u), 8u), e, 8u));
  if (i >= 16u) return;
  for (uint e = 0u; e < 8u; ++e) floats[1024u + 8u * i + e] = float(code_at(biased_codes(word_with(i, e, 4u), 4u), e, 4u));
}
