#pragma once
// The OCP FP8 formats' values from the specification (OFP8 rev 1.0, table 1), written
// independently of core/float_format.cpp and shaders/float_format.glsl: what the tests of
// the host decoders (tests/test_fp8_format.cpp) and of the device's (tests/test_dequant_codes.cpp)
// expect.
#include <cmath>

namespace kvbench {

// value = (-1)^S * 2^(E - bias) * (1 + M / 2^m) for E > 0, and (-1)^S * 2^(1 - bias) *
// (M / 2^m) for E = 0 (subnormal). Specials: E4M3FN S.1111.111 NaN only; E5M2 S.11111.00
// infinity, S.11111.{01,10,11} NaN.
inline double ofp8_formula(unsigned code, int ebits, int mbits, int bias, bool ieee_specials) {
  const unsigned S = code >> 7, E = (code >> mbits) & ((1u << ebits) - 1u), M = code & ((1u << mbits) - 1u);
  const double sign = S ? -1.0 : 1.0;
  const unsigned e_max = (1u << ebits) - 1u, m_max = (1u << mbits) - 1u;
  if (ieee_specials && E == e_max) return M == 0 ? sign * INFINITY : NAN;
  if (!ieee_specials && E == e_max && M == m_max) return NAN;
  const double fraction = static_cast<double>(M) / static_cast<double>(1u << mbits);
  return E == 0 ? sign * std::pow(2.0, 1 - bias) * fraction
                : sign * std::pow(2.0, static_cast<int>(E) - bias) * (1.0 + fraction);
}

inline double e4m3_formula(unsigned code) { return ofp8_formula(code, 4, 3, 7, false); }
inline double e5m2_formula(unsigned code) { return ofp8_formula(code, 5, 2, 15, true); }

}  // namespace kvbench
