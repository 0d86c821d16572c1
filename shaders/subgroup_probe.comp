#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#extension GL_KHR_shader_subgroup_basic : require
// Runtime::probe_subgroups: whether a pipeline that requires subgroups of SIZE lanes, all
// full, gets them. Invocation i of one workgroup of `local_size_x` writes gl_SubgroupSize,
// gl_NumSubgroups, gl_SubgroupID and gl_SubgroupInvocationID at out[4 i ..].
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) writeonly buffer Out { uint words[]; };
void main() {
  const uint i = gl_LocalInvocationIndex;
  words[4u * i] = gl_SubgroupSize;
  words[4u * i + 1u] = gl_NumSubgroups;
  words[4u * i + 2u] = gl_SubgroupID;
  words[4u * i + 3u] = gl_SubgroupInvocationID;
}
