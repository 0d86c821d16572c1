#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of hif8.glsl on the device, used by tests/test_hif8_device.cpp only: the f32 bits of
// hif8_to_float(i) for each code i below `count` (256: every code).
#include "hif8.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Floats { uint floats[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < pc.count) floats[i] = floatBitsToUint(hif8_to_float(i));
}
