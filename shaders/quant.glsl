// Group quantization and dequantization, the GPU twin of src/ref/quant.cpp; reused by
// every kernel that stores or reads quantized K/V. `T` is the compute dtype (PPL's T1):
// every intermediate the definitions round is rounded to it here too.

#ifndef KVBENCH_QUANT_GLSL
#define KVBENCH_QUANT_GLSL

#include "float_format.glsl"

float scale_floor(uint T) { return round_to(1e-5, T); }

// PPL symmetric: s = max(T(m / qmax), T(1e-5)) for the group's max |x| = m.
float symmetric_scale(float absmax, float qmax, uint T) {
  return max(round_to(div_rn(absmax, qmax), T), scale_floor(T));
}

// q = clamp(rne(T(x / s)), -qmax, qmax)
int symmetric_code(float x, float s, float qmax, uint T) {
  return int(clamp(round_half_even(round_to(div_rn(x, s), T)), -qmax, qmax));
}

// Asymmetric over [qmin, qmax] with the group's lo = min(min x, 0), hi = max(max x, 0);
// the range hi - lo is rounded to T like every other intermediate.
float asymmetric_scale(float lo, float hi, float qmin, float qmax, uint T) {
  return max(round_to(div_rn(round_to(hi - lo, T), qmax - qmin), T), scale_floor(T));
}

int asymmetric_zero_point(float lo, float s, float qmin, float qmax, uint T) {
  return int(clamp(round_half_even(qmin - round_to(div_rn(lo, s), T)), qmin, qmax));
}

int asymmetric_code(float x, float s, int zp, float qmin, float qmax, uint T) {
  return int(clamp(round_half_even(round_to(div_rn(x, s), T)) + float(zp), qmin, qmax));
}

// FP8 codes with an f32 scale (src/ref/quant.hpp quantize_fp8):
//   s = max(f32(max|x| / divisor), floor);  q = fp8_sat(f32(x / s))
float fp8_scale(float absmax, float divisor, float floor_) { return max(div_rn(absmax, divisor), floor_); }
uint fp8_code(float x, float s, uint dt) { return float_to_fp8(div_rn(x, s), dt, true); }

// Signed int8 and int4 codes as floats without an int-to-float conversion (issue 35 step 4:
// on NVIDIA I2F issues at a quarter of the FMA rate; here an XOR per word, an AND/OR and a
// subtraction per code). The float with bits 0x4B000000 | b is 2^23 + b exactly for any
// b < 2^23; with b the code biased by 2^(bits-1), (2^23 + b) - (2^23 + 2^(bits-1)) is the
// code, and the subtraction is exact because its result is a float. Checked on the device
// for every code at every position of a word (tests/test_dequant_codes.cpp).
// The word w of packed codes with each code c (bits 8 or 4) replaced by c + 2^(bits-1).
uint biased_codes(uint w, uint bits) { return w ^ (bits == 8u ? 0x80808080u : 0x88888888u); }
// Code number e of a biased word, as a float.
float code_float(uint biased, uint e, uint bits) {
  const uint b = (biased >> (e * bits)) & ((1u << bits) - 1u);
  precise float r = uintBitsToFloat(0x4b000000u | b) - float(0x800000u + (1u << (bits - 1u)));
  return r;
}

// FP8 E4M3FN code number e (byte e) of a word of four, as its float (fp8_to_float ignores
// the bits above the code's eight). Checked on the device for every code at every byte.
float fp8_code_float(uint word, uint e) { return fp8_to_float(word >> (8u * e), DT_F8E4M3FN); }

// PPL: the product in the scale dtype S (exact in f32 for |q| <= 255), rounded to S.
float dequant_ppl(int q, float s, uint S) { return round_to(float(q) * s, S); }
// oneDNN: (q - zp) * s in f32.
float dequant_zero_point(int q, int zp, float s) { precise float r = float(q - zp) * s; return r; }
// Ascend antiquant: (q + offset) * s in f32.
float dequant_offset(int q, float offset, float s) { precise float t = float(q) + offset; precise float r = t * s; return r; }

#endif
