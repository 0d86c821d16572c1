#version 450
#extension GL_GOOGLE_include_directive : require
// The device's copy bandwidth for `kvbench bench`: one uvec4 per invocation, the widest
// load lavapipe streams (uint loads are bound by the load count, not bytes).

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Source { uvec4 source[]; };
layout(std430, binding = 1) writeonly buffer Destination { uvec4 destination[]; };

layout(push_constant) uniform Push {
  uint count;     // uvec4 elements
  uint row_width; // invocations per row of the 2D grid (65535 groups is the portable limit per axis)
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.y * pc.row_width + gl_GlobalInvocationID.x;
  if (i < pc.count) destination[i] = source[i];
}
