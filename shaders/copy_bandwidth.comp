#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// The device's copy bandwidth for `kvbench bench`: uvec4 texel fetches and uvec4 stores
// (lavapipe is bound by the number of loads, so the widest load streams fastest, and a
// texel fetch is one gather where a storage-buffer load is a loop over the lanes: 12.2-12.6
// against 7.8-9.4 GB/s measured, specs/runtime.md "Texel buffers"; the attention kernels
// read through texel views too) in a grid-stride loop. Dispatched with about 4 elements per
// invocation: on lavapipe that measured ~6% faster than one element per invocation, and
// much faster than 16 or more.

layout(local_size_x = 64) in;
layout(binding = 0) uniform usamplerBuffer source_texels;
layout(std430, binding = 1) writeonly buffer Destination { uvec4 destination[]; };

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count;  // uvec4 elements
} pc;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) destination[i] = texelFetch(source_texels, int(i));
}
