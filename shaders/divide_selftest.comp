#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of divide.glsl on the device, used by tests/test_runtime.cpp only: invocation i
// divides t = first + i * stride by d and writes (t / d, t % d) at out[2 i], out[2 i + 1].
#include "divide.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { uint words[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count, first, stride, d, magic;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  const uvec2 qr = divide_by_magic(pc.first + i * pc.stride, pc.d, pc.magic);
  words[2u * i] = qr.x;
  words[2u * i + 1u] = qr.y;
}
