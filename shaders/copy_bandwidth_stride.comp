#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Source { uvec4 source[]; };
layout(std430, binding = 1) writeonly buffer Destination { uvec4 destination[]; };
layout(push_constant) uniform Push { uint count; uint row_width; } pc;
void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) destination[i] = source[i];
}
