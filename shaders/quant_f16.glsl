// f16 arithmetic for the decode kernel's dequantization (issue 35 step 4), included only by
// the shaders built for devices with shaderFloat16 and shaderRoundingModeRTEFloat16
// (DeviceInfo::f16_rte): every 16-bit float operation of the shader rounds to nearest even
// (SPIR-V RoundingModeRTE 16, VK_KHR_shader_float_controls), so one f16 multiply is f16's
// rounding of its exact product. Denormals are not relied on: a caller takes this path only
// for normal, finite f16 scales, whose products with an integer code are 0 or at least 2^-14.
#ifndef KVBENCH_QUANT_F16_GLSL
#define KVBENCH_QUANT_F16_GLSL
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_spirv_intrinsics : require
// OpExecutionMode RoundingModeRTE (4462) for 16-bit floats; capability RoundingModeRTE (4467).
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 16);
// This declaration replaces float_controls.glsl's RoundingModeRTE 32 in glslang 12 (one
// operand list per execution mode); tools/spirv_float_modes.cmake adds the 32-bit one back
// after compiling. SignedZeroInfNanPreserve is declared for f32 only: a second declaration
// for 16 bits would replace the f32 one, on which the softmax's -inf markers rely. An f16 product here is
// rounded (an overflow to inf is the rounding's result, as in the golden) and converted to
// f32 at once; no f16 operation consumes an inf or NaN.

#include "quant.glsl"

// Two codes of a biased word (biased_codes) as f16, with no conversion instruction: int8
// bytes e and e + 2 (e = 0, 1), int4 nibbles e and e + 4 (e = 0 .. 3), one from each 16-bit
// half. The f16 with bits 0x6400 | b is 1024 + b exactly for b < 1024 (f16's spacing in
// [1024, 2048) is 1), and (1024 + b) - (1024 + 2^(bits-1)) is the code, exactly.
f16vec2 code_pair_f16(uint biased, uint e, uint bits) {
  const uint mask = bits == 8u ? 0x00ff00ffu : 0x000f000fu;
  const f16vec2 bias = f16vec2(float16_t(1024u + (1u << (bits - 1u))));
  precise f16vec2 r = unpackFloat2x16(((biased >> (e * bits)) & mask) | 0x64006400u) - bias;
  return r;
}

#endif
