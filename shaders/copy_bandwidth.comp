#version 450
#extension GL_GOOGLE_include_directive : require
// The device's copy bandwidth for `kvbench bench`: uvec4 loads and stores (lavapipe is
// bound by the number of loads, so the widest load streams fastest) in a grid-stride
// loop. Dispatched with about 4 elements per invocation: on lavapipe that measured ~6%
// faster than one element per invocation, and much faster than 16 or more.

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Source { uvec4 source[]; };
layout(std430, binding = 1) writeonly buffer Destination { uvec4 destination[]; };

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count;  // uvec4 elements
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) destination[i] = source[i];
}
