// HiFloat8 (HiF8) decoding on the device, bit for bit core/hifloat8.hpp's hif8_decode
// (specs/hifloat8.md; tests/test_code_formats_device.cpp checks all 256 codes). Every HiF8 value is
// an f32 value, so the result is built from its bits, exactly, with no arithmetic.

#ifndef KVBENCH_HIF8_GLSL
#define KVBENCH_HIF8_GLSL

// The f32 value of HiF8 code `code` (its low 8 bits): payload p = code & 0x7f behind the sign.
// 0x80 is the only NaN, p = 0x6f is +-Inf, p < 8 the zero and the denormals 2^(p - 23);
// otherwise p's leading one sets the dot field: bit 3 (0001) w = 0, bit 4 (001) w = 1, bit 5
// (01) w = 2, bit 6 with bit 5 clear (10) w = 3, set (11) w = 4; then w exponent bits (sign
// and the low w - 1 bits of |E|, whose leading 1 is implicit) and 3, 3, 3, 2, 1 mantissa bits.
float hif8_to_float(uint code) {
  const uint sign = (code & 0x80u) << 24u, p = code & 0x7fu;
  const int lead = findMSB(p);  // -1 for p = 0
  const uint top = lead == 6 ? (p >> 5u) & 1u : 0u;
  const int w = lead == 6 ? 3 + int(top) : lead - 3;
  const int mbits = lead == 6 ? 2 - int(top) : 3;
  const uint m = bitfieldExtract(p, 0, mbits);
  // bitfieldExtract with 0 bits is 0: D0 has no exponent field (E = 0).
  const uint field = bitfieldExtract(p, mbits, max(w, 0));
  const int half_ = w > 0 ? 1 << (w - 1) : 0;
  const int abs_e = half_ | int(field & uint(max(half_ - 1, 0)));
  const int e = (int(field) & half_) != 0 ? -abs_e : abs_e;
  uint bits = (uint(e + 127) << 23u) | (m << uint(23 - mbits));
  bits = p < 8u ? (p == 0u ? 0u : uint(int(p) - 23 + 127) << 23u) : bits;
  bits = p == 0x6fu ? 0x7f800000u : bits;
  bits = code == 0x80u ? 0x7fc00000u : bits | sign;
  return uintBitsToFloat(bits);
}

#endif
