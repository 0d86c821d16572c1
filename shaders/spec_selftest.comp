#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of specialization constants by name (tests/test_spec_constants.cpp): a named
// constant and a workgroup size set by one (`local_size_x_id`, which the runtime names
// "local_size_x"). Each invocation writes SCALE times its local index.
layout(constant_id = 0) const uint SCALE = 1u;
layout(local_size_x_id = 3) in;
layout(std430, binding = 0) buffer Out { uint out_[]; };

void main() { out_[gl_LocalInvocationID.x] = SCALE * gl_LocalInvocationID.x; }
