// The block-scaled code formats on the device, bit for bit src/core/float_format.cpp's
// small floats, core/hifloat8.cpp's TA encoder and src/ref/microscaling.cpp's scale rules
// (specs/quantize-group.md, "Microscaling and HiF8 codes"). Checked for every code and every
// midpoint by tests/test_code_formats_device.cpp.

#ifndef KVBENCH_CODE_FORMATS_GLSL
#define KVBENCH_CODE_FORMATS_GLSL

#include "float_format.glsl"
#include "hif8.glsl"

bool is_small_float(uint dt) { return dt == DT_F4E2M1 || dt == DT_F6E2M3 || dt == DT_F6E3M2; }
int small_float_ebits(uint dt) { return dt == DT_F6E3M2 ? 3 : 2; }
int small_float_mbits(uint dt) { return dt == DT_F4E2M1 ? 1 : dt == DT_F6E2M3 ? 3 : 2; }
// 6, 7.5, 28: (2 - 2^-mbits) * 2^(2^ebits - 1 - bias).
float small_float_max(uint dt) { return dt == DT_F4E2M1 ? 6.0 : dt == DT_F6E2M3 ? 7.5 : 28.0; }

// The value of a small-float code (OCP MX E2M1, E2M3, E3M2; bias 2^(ebits-1) - 1, no
// specials); NaN for bits beyond the format's width, which no code has.
float small_float_to_float(uint code, uint dt) {
  const int eb = small_float_ebits(dt), mb = small_float_mbits(dt), bias = (1 << (eb - 1)) - 1;
  const uint width = uint(1 + eb + mb);
  const uint e = bitfieldExtract(code, mb, eb), m = bitfieldExtract(code, 0, mb);
  float v = e == 0u ? float(m) * pow2(1 - bias - mb) : float((1u << uint(mb)) + m) * pow2(int(e) - bias - mb);
  v = ((code >> (width - 1u)) & 1u) != 0u ? -v : v;
  return (code >> width) != 0u ? uintBitsToFloat(0x7fc00000u) : v;
}

// The small-float code of v: to nearest, ties to the even code, saturating at the largest
// magnitude; -0 and negative values that round to 0 keep the sign bit.
uint float_to_small_float(float v, uint dt) {
  const int eb = small_float_ebits(dt), mb = small_float_mbits(dt), bias = (1 << (eb - 1)) - 1;
  const int emin = 1 - bias;
  const uint x = floatBitsToUint(v), sign = (x >> 31u) << uint(eb + mb), ax = x & 0x7fffffffu;
  const float largest = small_float_max(dt);
  if (ax > 0x7f800000u) return sign | ((1u << uint(eb + mb)) - 1u);  // NaN: the largest
  // Past twice the largest (infinity included) the result saturates anyway.
  const float r = min(round_to_grid(min(uintBitsToFloat(ax), 2.0 * largest), mb, emin), largest);
  return sign | grid_fields(r, mb, emin, bias);
}

// The HiF8 code of v by TA rounding (to nearest, ties away from zero on the magnitude), past
// 32768 saturating at +-32768 (core/hifloat8.hpp hif8_encode with Hif8Overflow::saturate).
uint float_to_hif8_saturate(float v) {
  const uint x = floatBitsToUint(v), ax = x & 0x7fffffffu, sign = (x >> 24u) & 0x80u;
  if (ax > 0x7f800000u) return 0x80u;
  const float a = min(uintBitsToFloat(ax), 32768.0);
  if (a < 0.00000011920928955078125) return 0u;  // below 2^-23: zero, which has no sign
  const int e = int(floatBitsToUint(a) >> 23u) - 127;  // a is normal in f32 here
  if (e < -15) {  // denormals 2^-22 .. 2^-16 and the step to 2^-15: powers of two
    const int k = a >= 1.5 * pow2(e) ? e + 1 : e;  // (2^-23 goes to 2^-22)
    if (k >= -15) return sign | 0x60u | 0x10u | (7u << 1u);  // 2^-15: E = -15, w = 4
    return sign | uint(max(k, -22) + 23);
  }
  const int ae = abs(e);
  const int mb = ae <= 3 ? 3 : ae <= 7 ? 2 : 1;
  // Half away from zero on the grid of a's binade; a carry steps to 2^(e+1).
  precise float r = floor(a * pow2(mb - e) + 0.5) * pow2(e - mb);
  const int er = int(floatBitsToUint(r) >> 23u) - 127;
  const int aer = abs(er), mbr = aer <= 3 ? 3 : aer <= 7 ? 2 : 1;
  const uint m = uint(r * pow2(mbr - er)) & ((1u << uint(mbr)) - 1u);
  const uint s = er < 0 ? 1u : 0u;
  uint p;
  if (aer == 0) p = 0x08u | m;
  else if (aer == 1) p = 0x10u | (s << 3u) | m;
  else if (aer <= 3) p = 0x20u | (s << 4u) | (uint(aer & 1) << 3u) | m;
  else if (aer <= 7) p = 0x40u | (s << 4u) | (uint(aer & 3) << 2u) | m;
  else p = 0x60u | (s << 4u) | (uint(aer & 7) << 1u) | m;
  return sign | p;
}

// An E8M0 scale's value: 2^(bits - 127), 0xFF NaN. 2^-127 is an f32 subnormal, built from bits.
float e8m0_to_float(uint bits) {
  const uint b = bits & 0xffu;
  return b == 0xffu ? uintBitsToFloat(0x7fc00000u) : b == 0u ? uintBitsToFloat(0x00400000u) : pow2(int(b) - 127);
}

// OCP MX's shared exponent of a block whose largest magnitude is amax (finite): floor(log2
// amax) - emax_elem, at least -127; amax = 0 counts as 2^-126 (Microsoft's microxcaling).
int mx_shared_exponent(float amax, int emax_elem) {
  const uint b = floatBitsToUint(amax);
  const int lg = amax == 0.0 ? -126 : (b >> 23u) != 0u ? int(b >> 23u) - 127 : findMSB(b) - 149;
  return max(lg - emax_elem, -127);
}

// v * 2^k, exact while the result is an f32 normal or zero (two steps keep each factor normal).
float times_pow2(float v, int k) {
  const int half_ = k / 2;
  precise float r = v * pow2(half_);
  precise float s = r * pow2(k - half_);
  return s;
}

#endif
