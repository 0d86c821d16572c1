#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
// A test of float_format.glsl on the device, used by tests/test_runtime.cpp only:
// op 0: every 16-bit pattern of one dtype (f16 or bf16) decoded to f32, so that a driver
//       that flushes f16 subnormals in unpackHalf2x16 (Vulkan allows it) is caught;
// op 1: round_f16_fast of each input float (its bits in `inputs`);
// op 2: round_f16_product(q * s) for f16 bits s = i and every q in [-128, 127], at
//       floats[256 * i + q + 128] (s = inf or NaN included: the host skips them);
// op 3: every FP8 code of dtype dt (count 256) decoded to f32;
// op 4, 5: the FP8 code of dtype dt of each input float, without (4) and with (5) saturation.
#include "float_format.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Floats { uint floats[]; };
layout(std430, binding = 1) readonly buffer Inputs { uint inputs[]; };
layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint count, dt, op;
} pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.count) return;
  if (pc.op == 2u) {
    const float s = decode_float(i, DT_F16);
    for (int q = -128; q < 128; ++q) floats[256u * i + uint(q + 128)] = floatBitsToUint(round_f16_product(float(q) * s));
    return;
  }
  if (pc.op == 3u) {
    floats[i] = floatBitsToUint(fp8_to_float(i, pc.dt));
    return;
  }
  if (pc.op >= 4u) {
    floats[i] = float_to_fp8(uintBitsToFloat(inputs[i]), pc.dt, pc.op == 5u);
    return;
  }
  floats[i] = floatBitsToUint(pc.op == 0u ? decode_float(i, pc.dt) : round_f16_fast(uintBitsToFloat(inputs[i])));
}
