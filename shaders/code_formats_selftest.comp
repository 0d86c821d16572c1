#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of code_formats.glsl and hif8.glsl on the device, used by
// tests/test_code_formats_device.cpp only. decode 1: out[i] = the f32 bits of code i's value;
// decode 0: out[i] = the code of the f32 whose bits are in[i] (saturating encoders).
#include "code_formats.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Inputs { uint inputs[]; };
layout(std430, binding = 1) writeonly buffer Outputs { uint outputs[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count, dtype, decode;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  if (pc.decode != 0u) {
    const float v = pc.dtype == DT_HIFLOAT8 ? hif8_to_float(i)
                    : pc.dtype == DT_F8E8M0 ? e8m0_to_float(i)
                                            : small_float_to_float(i, pc.dtype);
    outputs[i] = floatBitsToUint(v);
  } else {
    const float v = uintBitsToFloat(inputs[i]);
    outputs[i] = pc.dtype == DT_HIFLOAT8 ? float_to_hif8_saturate(v) : float_to_small_float(v, pc.dtype);
  }
}
