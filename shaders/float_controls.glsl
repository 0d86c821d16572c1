// Included by every kvbench shader, first: SPIR-V's SignedZeroInfNanPreserve execution mode
// for 32-bit floats (VK_KHR_shader_float_controls; capability 4466, mode 4461). Without it
// Vulkan lets an implementation assume that no f32 operand or result is an infinity or NaN
// and ignore the sign of zero (the Vulkan specification, "Precision and Operation of SPIR-V
// Instructions"), and the kernels rely on all three: the online softmax's -inf markers
// (`m == -inf`: nothing visible yet), the NaN poison of partial states that makes an
// unwritten slot fail, infinite and NaN data (file inputs, PMX's int4 of 65504 that
// dequantizes to +inf) that must reach the output as the golden's, and a code of zero that
// dequantizes to +0.0. Devices without shaderSignedZeroInfNanPreserveFloat32 are refused with
// the reason (Runtime::pipeline; specs/runtime.md "Inf and NaN").
#ifndef KVBENCH_FLOAT_CONTROLS_GLSL
#define KVBENCH_FLOAT_CONTROLS_GLSL
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 32);
#endif
