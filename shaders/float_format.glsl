// Exact f16/bf16 <-> f32 conversions with round-to-nearest-even, written with integer
// operations so that results do not depend on the driver's conversion rounding mode.
// Mirrors src/core/float_format.cpp.

#ifndef KVBENCH_FLOAT_FORMAT_GLSL
#define KVBENCH_FLOAT_FORMAT_GLSL

#include "storage.glsl"

// x rounded to the nearest integer, ties to even, by the 1.5 * 2^23 shift (exact below
// 2^22; larger floats are integers already). Not the driver's roundEven: lavapipe at
// LP_NATIVE_VECTOR_WIDTH=512 on a CPU without AVX-512 (16 lanes emulated on 8) rounds
// ties away from zero there (measured: -44.5 -> -45, Mesa 22.3 on an AMD EPYC).
float round_half_even(float x) {
  precise float shifted = (x + 12582912.0) - 12582912.0;
  return abs(x) < 4194304.0 ? shifted : x;
}

float f16_to_float(uint h) {
  // unpackHalf2x16 is one instruction on most devices (F16C on lavapipe) and exact, but
  // Vulkan lets a device flush f16 subnormals there: those (exponent 0) are rebuilt
  // exactly, by a select rather than a branch (lane-varying branches are slow on lavapipe).
  const float subnormal = float(h & 1023u) * exp2(-24.0);
  const float v = (h & 0x7c00u) == 0u ? ((h & 0x8000u) != 0u ? -subnormal : subnormal) : unpackHalf2x16(h & 0xffffu).x;
  return v;
}

uint float_to_f16(float f) {
  const uint x = floatBitsToUint(f);
  const uint sign = (x >> 16u) & 0x8000u;
  const uint ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (ax >= 0x477ff000u) return sign | 0x7c00u; // >= 65520 (and inf) rounds to inf
  if (ax < 0x38800000u) {                       // below 2^-14: f16 subnormal or zero
    const uint e = ax >> 23u;
    if (e < 102u) return sign;                  // below 2^-25: rounds to zero
    const uint m = (ax & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - e;                // value * 2^24 = m >> shift
    uint q = m >> shift;
    const uint rem = m & ((1u << shift) - 1u);
    const uint half_ = 1u << (shift - 1u);
    if (rem > half_ || (rem == half_ && (q & 1u) != 0u)) q += 1u;
    return sign | q;
  }
  // Normal: round the 13 dropped bits to nearest even; a carry moves into the exponent.
  return sign | ((ax + 0xfffu + ((ax >> 13u) & 1u) - 0x38000000u) >> 13u);
}

float bf16_to_float(uint b) { return uintBitsToFloat(b << 16u); }

uint float_to_bf16(float f) {
  const uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16u) | 0x40u;  // quiet NaN
  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;
}

// 2^k for k in f32's normal exponent range, exactly (exp2 need not be exact).
float pow2(int k) { return uintBitsToFloat(uint(k + 127) << 23u); }

bool is_fp8(uint dt) { return dt == DT_F8E4M3FN || dt == DT_F8E5M2; }

// The value of an OCP FP8 code (core/float_format.hpp fp8_value): E4M3FN (bias 7, no
// infinities, S.1111.111 NaN) or E5M2 (binary16's layout cut to 8 bits, so the code is
// an f16's top byte). Exact: every FP8 value is an f32 value.
float fp8_to_float(uint code, uint dt) {
  if (dt == DT_F8E5M2) return f16_to_float((code & 0xffu) << 8u);
  const uint mag = code & 0x7fu, e = mag >> 3u, m = mag & 7u;
  float v = e == 0u ? float(m) * pow2(-9) : uintBitsToFloat(((e + 120u) << 23u) | (m << 20u));
  v = mag == 0x7fu ? uintBitsToFloat(0x7fc00000u) : v;
  return (code & 0x80u) != 0u ? -v : v;
}

// a >= 0 rounded to nearest, ties to even, onto the grid of a binary format with `mbits` stored
// mantissa bits and least normal exponent `emin` (subnormals below it). Scaled by
// 2^(mbits - e), a has the format's quantum at a as its unit: rounding it to an integer
// rounds a to the format, and both scalings are exact. Shared by the FP8 and small-float
// encoders (code_formats.glsl).
float round_to_grid(float a, int mbits, int emin) {
  const int e = clamp(int(floatBitsToUint(a) >> 23u) - 127, emin, 127);
  precise float r = round_half_even(a * pow2(mbits - e)) * pow2(e - mbits);
  return r;
}

// The exponent and mantissa fields of r >= 0 on that grid (exponent bias `bias`; field 0 for
// the subnormals and zero).
uint grid_fields(float r, int mbits, int emin, int bias) {
  const int er = max(int(floatBitsToUint(r) >> 23u) - 127, emin);
  const uint m = uint(r * pow2(mbits - er));  // exact: r is on the grid
  const uint field = (m >> uint(mbits)) != 0u ? uint(er + bias) : 0u;
  return (field << uint(mbits)) | (m & ((1u << uint(mbits)) - 1u));
}

// The FP8 code of v, rounded to nearest even in one step (core/float_format.hpp fp8_code).
// Past the largest value: with `saturate` the largest of v's sign (infinities included),
// else E4M3FN NaN and E5M2 infinity. NaN stays NaN.
uint float_to_fp8(float v, uint dt, bool saturate) {
  const bool e4 = dt == DT_F8E4M3FN;
  const int mbits = e4 ? 3 : 2, emin = e4 ? -6 : -14, bias = e4 ? 7 : 15;
  const float largest = e4 ? 448.0 : 57344.0;
  const uint x = floatBitsToUint(v), sign = (x >> 24u) & 0x80u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | (e4 ? 0x7fu : 0x7eu);
  float r = round_to_grid(uintBitsToFloat(ax), mbits, emin);
  if (r > largest) {
    if (!saturate) return sign | (e4 ? 0x7fu : 0x7cu);
    r = largest;
  }
  return sign | grid_fields(r, mbits, emin, bias);
}

// The float an element of float dtype dt (f16, bf16, f32) with raw bits `bits` holds. FP8
// is not among them: the few kernels that read or write FP8 call fp8_to_float and
// float_to_fp8 themselves, which keeps these two, inlined everywhere, small: lavapipe compiles
// every branch of them into every pipeline that reads a runtime dtype.
float decode_float(uint bits, uint dt) {
  if (dt == DT_F16) return f16_to_float(bits);
  if (dt == DT_BF16) return bf16_to_float(bits);
  return uintBitsToFloat(bits);
}

// The raw bits of v stored in float dtype dt.
uint encode_float(float v, uint dt) {
  if (dt == DT_F16) return float_to_f16(v);
  if (dt == DT_BF16) return float_to_bf16(v);
  return floatBitsToUint(v);
}

// v rounded to f16 (round to nearest even), as a float, without branches: one add and
// subtract of a magic number that sets the spacing, infinity from 65520 on.
// Equal to decode_float(float_to_f16(v), DT_F16) for every non-NaN v; a NaN stays NaN or
// becomes an infinity. Used on hot paths.
float round_f16_fast(float v) {
  const uint u = floatBitsToUint(v), sign = u & 0x80000000u;
  // m = 1.5 x 2^(e + 13), e = v's exponent, at least f16's smallest normal one (-14): the
  // sum v + m has f16's spacing at v (2^(e - 10); 2^-24 below 2^-14), so the FPU's round
  // to nearest even of the sum is f16's rounding of v, and subtracting m is exact.
  const float m = uintBitsToFloat((max(u & 0x7f800000u, 0x38800000u) + 0x06800000u) | 0x00400000u);
  precise float r = (v + m) - m;
  const float rounded = uintBitsToFloat(floatBitsToUint(r) | sign);  // -0 and small negatives keep their sign
  return abs(v) >= 65520.0 ? uintBitsToFloat(sign | 0x7f800000u) : rounded;
}

// f16's rounding of x = q * s, for an int8 or int4 code q (|q| <= 128) and an f16 scale s
// (the product is exact in f32), in five operations instead of round_f16_fast's ten: Veltkamp's
// split with 2^13 + 1 leaves x's 11 leading significant bits, rounded to nearest even, and
// such an x never needs f16's subnormal spacing (|x| >= |s| >= 2^-14 when s is normal, and
// a multiple of 2^-24 when it is not). Past f16's largest value the split gives 2^16 or
// more, which times 2^112 overflows f32 to +-inf; every smaller value comes back exactly
// from the two power-of-two multiplies. Checked bit for bit against round_f16 for every
// such q and s (tests/test_runtime.cpp).
float round_f16_product(float x) {
  precise float c = x * 8193.0;
  precise float r = c - (c - x);
  precise float big = r * uintBitsToFloat(0x77800000u);  // 2^112
  precise float back = big * uintBitsToFloat(0x07800000u);  // 2^-112
  return back;
}

// v rounded to float dtype dt, as a float.
float round_to(float v, uint dt) { return decode_float(encode_float(v, dt), dt); }

// a * b = p + e exactly (Dekker's TwoProduct with Veltkamp splitting), without relying
// on a fused fma: some drivers lower fma() to a separate multiply and add.
void two_product(float a, float b, out float p, out float e) {
  precise float pp = a * b;
  precise float ca = 4097.0 * a;
  precise float ah = ca - (ca - a);
  precise float al = a - ah;
  precise float cb = 4097.0 * b;
  precise float bh = cb - (cb - b);
  precise float bl = b - bh;
  precise float err = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
  p = pp;
  e = err;
}

// a / b correctly rounded to f32 (for normal, finite results). GLSL's `/` may be off by
// 2.5 ulp, so: one Newton step on the exact residual, then a final check of the residual
// against half an ulp (a quotient of floats is never exactly a midpoint, so there are no
// ties). The quantizers depend on this to reproduce the reference's codes bit for bit.
float div_rn(float a, float b) {
  precise float q = a / b;
  float p, e;
  two_product(q, b, p, e);
  precise float r = (a - p) - e;  // exact: the residual of a faithful quotient is representable
  precise float step = r / b;
  q = q + step;
  two_product(q, b, p, e);
  r = (a - p) - e;
  const int ex = int((floatBitsToUint(q) >> 23u) & 255u) - 127;
  precise float half_ulp_b = ldexp(abs(b), ex - 24);  // (ulp(q) / 2) * |b|, exact
  // The true quotient lies on the side sign(r) * sign(b) of q. Below a power of two the
  // spacing halves, and so does the distance that makes the neighbour nearer.
  const bool up = (r > 0.0) == (b > 0.0);
  const bool away_from_zero = up == (q > 0.0);
  const bool power_of_two = (floatBitsToUint(q) & 0x7fffffu) == 0u;
  precise float limit = (!away_from_zero && power_of_two) ? 0.5 * half_ulp_b : half_ulp_b;
  if (abs(r) > limit) q = uintBitsToFloat(floatBitsToUint(q) + (away_from_zero ? 1u : 0xffffffffu));
  return q;
}

#endif
