#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#extension GL_ARB_shader_clock : require
// The shader clock `kvbench bench` ran at (src/vk/batch.cpp): one invocation spins until
// the subgroup clock (VK_KHR_shader_clock: SM/CU cycles on GPUs) has advanced `spin`
// cycles and writes how far it went; the dispatch's timestamps give the time, so
// cycles / time is the clock. 64-bit counts as two words: shaderInt64 is not required.

layout(local_size_x = 1) in;
layout(std430, binding = 0) writeonly buffer Cycles { uint cycles[]; };

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint spin;  // cycles to spin
} pc;

// b - a of two (low, high) clock readings.
uvec2 elapsed(uvec2 a, uvec2 b) {
  uint borrow;
  const uint lo = usubBorrow(b.x, a.x, borrow);
  return uvec2(lo, b.y - a.y - borrow);
}

void main() {
  const uvec2 start = clock2x32ARB();
  uvec2 d = uvec2(0);
  while (d.y == 0 && d.x < pc.spin) d = elapsed(start, clock2x32ARB());
  cycles[0] = d.x;
  cycles[1] = d.y;
}
