#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#include "grid.glsl"
// kvbench.QuantizeGroup: one invocation per (row, group) of the last axis; the last
// group of a row may be shorter. Symmetric (PPL) or asymmetric with a zero point.
#include "quant.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) buffer Y { uint y[]; };
layout(std430, binding = 2) buffer Scale { uint scale[]; };
layout(std430, binding = 3) buffer ZeroPoint { uint zero_point[]; };

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint rows, row_length, group_size, groups;
  uint x_dtype, y_dtype, scale_dtype, has_zero_point;
  int qmin, qmax;
  float fp8_divisor, fp8_scale_floor;  // FP8 codes: s = max(max|x| / divisor, floor)
} pc;

void main() {
  const uint id = grid_invocation();  // large launches are a 2-D grid
  if (id >= pc.rows * pc.groups) return;
  const uint r = id / pc.groups, g = id % pc.groups;
  const uint begin = r * pc.row_length + g * pc.group_size;
  const uint end = r * pc.row_length + min((g + 1u) * pc.group_size, pc.row_length);
  const uint xb = dtype_bits(pc.x_dtype), yb = dtype_bits(pc.y_dtype);
  const uint T = pc.x_dtype;
  const float qmin = float(pc.qmin), qmax = float(pc.qmax);
  float lo = 0.0, hi = 0.0, absmax = 0.0;
  for (uint i = begin; i < end; ++i) {
    const float v = decode_float(LOAD_BITS(x, i, xb), T);
    lo = min(lo, v);
    hi = max(hi, v);
    absmax = max(absmax, abs(v));
  }
  const uint ymask = (1u << yb) - 1u;
  if (is_fp8(pc.y_dtype)) {
    const float s = fp8_scale(absmax, pc.fp8_divisor, pc.fp8_scale_floor);
    STORE_BITS(scale, id, dtype_bits(pc.scale_dtype), encode_float(s, pc.scale_dtype));
    for (uint i = begin; i < end; ++i)
      STORE_BITS(y, i, yb, fp8_code(decode_float(LOAD_BITS(x, i, xb), T), s, pc.y_dtype));
  } else if (pc.has_zero_point == 0u) {
    const float s = symmetric_scale(absmax, qmax, T);
    STORE_BITS(scale, id, dtype_bits(pc.scale_dtype), encode_float(s, pc.scale_dtype));
    for (uint i = begin; i < end; ++i)
      STORE_BITS(y, i, yb, uint(symmetric_code(decode_float(LOAD_BITS(x, i, xb), T), s, qmax, T)) & ymask);
  } else {
    const float s = asymmetric_scale(lo, hi, qmin, qmax, T);
    const int zp = asymmetric_zero_point(lo, s, qmin, qmax, T);
    STORE_BITS(scale, id, dtype_bits(pc.scale_dtype), encode_float(s, pc.scale_dtype));
    STORE_BITS(zero_point, id, yb, uint(zp) & ymask);
    for (uint i = begin; i < end; ++i)
      STORE_BITS(y, i, yb, uint(asymmetric_code(decode_float(LOAD_BITS(x, i, xb), T), s, zp, qmin, qmax, T)) & ymask);
  }
}
