// Included by every kvbench shader, first: SPIR-V's float controls for 32-bit floats
// (VK_KHR_shader_float_controls), each a reliance declared rather than assumed.
// - SignedZeroInfNanPreserve (capability 4466, mode 4461). Without it Vulkan lets an
//   implementation assume that no f32 operand or result is an infinity or NaN and ignore the
//   sign of zero (the Vulkan specification, "Precision and Operation of SPIR-V
//   Instructions"), and the kernels rely on all three: the online softmax's -inf markers
//   (`m == -inf`: nothing visible yet), the NaN poison of partial states that makes an
//   unwritten slot fail, infinite and NaN data (file inputs, PMX's int4 of 65504 that
//   dequantizes to +inf) that must reach the output as the golden's, and a code of zero that
//   dequantizes to +0.0.
// - RoundingModeRTE (capability 4467, mode 4462). Without it the rounding of a correctly
//   rounded f32 operation is the implementation's choice of either neighbour (the same
//   chapter, "Correctly Rounded"), and the exact paths need round-to-nearest-even:
//   round_half_even's magic-number add (every quantizer code, FP8 codes, FIA's P codes, the
//   merges' post-quant), round_f16_fast and Veltkamp splits, two_product and div_rn.
// Devices without shaderSignedZeroInfNanPreserveFloat32 or shaderRoundingModeRTEFloat32 are
// refused with the reason (Runtime::check_pipeline; specs/runtime.md "Inf and NaN",
// "Rounding to nearest even"). glslang keeps one operand list per mode, so a module that also
// declares RTE for 16 bits (quant_f16.glsl) gets the 32-bit one back after compiling
// (tools/spirv_float_modes.cmake, which checks every module for both).
#ifndef KVBENCH_FLOAT_CONTROLS_GLSL
#define KVBENCH_FLOAT_CONTROLS_GLSL
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 32);
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4467], 4462, 32);
#endif
