#version 450
#extension GL_GOOGLE_include_directive : require
// A test of float_format.glsl's decoding on the device: every 16-bit pattern of one dtype
// (f16 or bf16) decoded to f32, so that a driver that flushes f16 subnormals in
// unpackHalf2x16 (Vulkan allows it) is caught. Used by tests/test_runtime.cpp only.
#include "float_format.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Floats { uint floats[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count, dt;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < pc.count) floats[i] = floatBitsToUint(decode_float(i, pc.dt));
}
