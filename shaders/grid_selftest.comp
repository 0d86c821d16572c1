#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of grid.glsl with Batch::dispatch_invocations past 65535 workgroups: each
// invocation below `count` counts itself at its linear index, so every slot must end at 1.
// Used by tests/test_runtime.cpp only.
#include "grid.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Hits { uint hits[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count;
} pc;

void main() {
  const uint i = grid_invocation();
  if (i < pc.count) atomicAdd(hits[i], 1u);
}
