#version 450
#extension GL_GOOGLE_include_directive : require
#include "float_controls.glsl"  // IEEE inf, NaN and signed zeros, relied on
#include "grid.glsl"
// kvbench.QuantizeGroup: one invocation per (row, group) of the last axis; the last
// group of a row may be shorter. Integer codes (symmetric, PPL, or asymmetric with a zero
// point), FP8 and HiF8 codes under an f32 scale, OCP MX blocks under an E8M0 scale, NVFP4
// under an E4M3 scale and the global scale (src/ref/microscaling.hpp).
#include "code_formats.glsl"
#include "quant.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) buffer Y { uint y[]; };
layout(std430, binding = 2) buffer Scale { uint scale[]; };
layout(std430, binding = 3) buffer ZeroPoint { uint zero_point[]; };
layout(std430, binding = 4) readonly buffer GlobalScale { uint global_scale[]; };  // NVFP4's gs

const uint FAMILY_INTEGER = 0u, FAMILY_FLOAT8 = 1u, FAMILY_MX = 2u, FAMILY_NVFP4 = 3u;  // CodeFamily

layout(std140, binding = 31) uniform Params {  // kernel parameters, set by name from C++ (reflected)
  uint rows, row_length, group_size, groups;
  uint x_dtype, y_dtype, scale_dtype, has_zero_point;
  uint code_family;
  int qmin, qmax, mx_emax;
  float fp8_divisor, fp8_scale_floor;  // FP8 and HiF8 codes: s = max(max|x| / divisor, floor)
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
  if (pc.code_family == FAMILY_FLOAT8) {
    const float s = fp8_scale(absmax, pc.fp8_divisor, pc.fp8_scale_floor);
    STORE_BITS(scale, id, dtype_bits(pc.scale_dtype), encode_float(s, pc.scale_dtype));
    for (uint i = begin; i < end; ++i) {
      const float q = div_rn(decode_float(LOAD_BITS(x, i, xb), T), s);
      STORE_BITS(y, i, yb, pc.y_dtype == DT_HIFLOAT8 ? float_to_hif8_saturate(q) : float_to_fp8(q, pc.y_dtype, true));
    }
  } else if (pc.code_family == FAMILY_MX) {
    // 2^shared from the largest magnitude; each element x / 2^shared (exact) to the element format.
    const int shared_exp = mx_shared_exponent(absmax, pc.mx_emax);
    STORE_BITS(scale, id, 8u, uint(shared_exp + 127));
    for (uint i = begin; i < end; ++i) {
      const float q = times_pow2(decode_float(LOAD_BITS(x, i, xb), T), -shared_exp);
      uint code;
      if (is_fp8(pc.y_dtype)) code = float_to_fp8(q, pc.y_dtype, true);
      else if (pc.y_dtype == DT_I8) code = uint(int(clamp(round_half_even(q * 64.0), -127.0, 127.0))) & 0xffu;
      else code = float_to_small_float(q, pc.y_dtype);
      STORE_BITS(y, i, yb, code);
    }
  } else if (pc.code_family == FAMILY_NVFP4) {
    // sf = e4m3_sat(gs * amax / 6); codes e2m1_sat(x * gs / sf), x * 0 where sf = 0.
    const float gs = uintBitsToFloat(global_scale[0]);
    const uint sf_code = float_to_fp8(div_rn(gs * absmax, 6.0), DT_F8E4M3FN, true);
    const float sf = fp8_to_float(sf_code, DT_F8E4M3FN);
    STORE_BITS(scale, id, 8u, sf_code);
    for (uint i = begin; i < end; ++i) {
      const float v = decode_float(LOAD_BITS(x, i, xb), T);
      const float q = sf == 0.0 ? v * 0.0 : div_rn(v * gs, sf);
      STORE_BITS(y, i, yb, float_to_small_float(q, DT_F4E2M1));
    }
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
