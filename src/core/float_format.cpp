#include "core/float_format.hpp"

#include "core/clones.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kvbench {

SmallFloatLayout small_float_layout(SmallFloat f) {
  switch (f) {
    case SmallFloat::e2m1: return {2, 1, 1};
    case SmallFloat::e1m2: return {1, 2, 1};
    case SmallFloat::e2m3: return {2, 3, 1};
    case SmallFloat::e3m2: return {3, 2, 3};
  }
  return {2, 1, 1};
}

namespace {
// The non-negative magnitudes of a small float, by code (ascending: the format has no
// specials, so its magnitudes grow with the code).
struct SmallFloatTable {
  std::array<double, 32> magnitude{};
  unsigned count = 0;
  explicit SmallFloatTable(SmallFloat f) {
    const SmallFloatLayout l = small_float_layout(f);
    count = 1u << (l.ebits + l.mbits);
    for (unsigned c = 0; c < count; ++c) {
      const int e = static_cast<int>(c >> l.mbits), m = static_cast<int>(c & ((1u << l.mbits) - 1u));
      magnitude[c] = e == 0 ? std::ldexp(m, 1 - l.bias() - l.mbits)
                            : std::ldexp((1 << l.mbits) + m, e - l.bias() - l.mbits);
    }
  }
};
const SmallFloatTable& table(SmallFloat f) {
  static const SmallFloatTable t[] = {SmallFloatTable(SmallFloat::e2m1), SmallFloatTable(SmallFloat::e1m2),
                                      SmallFloatTable(SmallFloat::e2m3), SmallFloatTable(SmallFloat::e3m2)};
  return t[static_cast<int>(f)];
}

// The magnitude code of |x| rounded to nearest (a tie to the even code, or with `away` to
// the larger), saturating; NaN gives the largest.
unsigned small_float_magnitude(SmallFloat f, double x, bool away) {
  const SmallFloatTable& t = table(f);
  const double a = std::isnan(x) ? t.magnitude[t.count - 1] : std::fabs(x);
  for (unsigned k = 0; k + 1 < t.count; ++k) {
    const double mid = (t.magnitude[k] + t.magnitude[k + 1]) / 2;  // exact: a few bits
    if (a < mid || (a == mid && !away && k % 2 == 0)) return k;
  }
  return t.count - 1;
}
}  // namespace

double small_float_value(SmallFloat f, unsigned code) {
  const SmallFloatLayout l = small_float_layout(f);
  const unsigned magnitude_bits = static_cast<unsigned>(l.ebits + l.mbits);
  if (code >> (magnitude_bits + 1)) return std::numeric_limits<double>::quiet_NaN();
  const double m = table(f).magnitude[code & ((1u << magnitude_bits) - 1u)];
  return code >> magnitude_bits ? -m : m;
}

unsigned small_float_code(SmallFloat f, double x) {
  const unsigned sign = std::signbit(x) ? 1u << (small_float_layout(f).bits() - 1) : 0u;
  return sign | small_float_magnitude(f, x, false);
}

unsigned small_float_code_away(SmallFloat f, double x) {
  const unsigned sign = std::signbit(x) ? 1u << (small_float_layout(f).bits() - 1) : 0u;
  return sign | small_float_magnitude(f, x, true);
}

double small_float_max(SmallFloat f) { return table(f).magnitude[table(f).count - 1]; }

double e8m0_value(unsigned bits) {
  return (bits & 0xFFu) == 0xFFu ? std::numeric_limits<double>::quiet_NaN()
                                 : std::ldexp(1.0, static_cast<int>(bits & 0xFFu) - 127);
}

unsigned e8m0_code(double x) {
  if (std::isnan(x)) return 0xFFu;
  int e = 0;
  const double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1)
  if (m != 0.5 || e - 1 < -127 || e - 1 > 127)
    throw std::logic_error("e8m0_code: " + std::to_string(x) + " is not a power of two in [2^-127, 2^127]");
  return static_cast<unsigned>(e - 1 + 127);
}

namespace {
struct Fp8Layout {
  int mbits, bias;
  unsigned nan_code;
  double max;
};
constexpr Fp8Layout layout(Fp8 f) {
  return f == Fp8::e4m3fn ? Fp8Layout{3, 7, 0x7Fu, 448} : Fp8Layout{2, 15, 0x7Eu, 57344};
}

// The value of an FP8 code from its fields (OFP8 table 1); fp8_value looks it up.
double fp8_decode(Fp8 f, unsigned code) {
  const Fp8Layout l = layout(f);
  const unsigned mag = code & 0x7Fu, e = mag >> l.mbits, m = mag & ((1u << l.mbits) - 1u);
  const bool negative = (code & 0x80u) != 0;
  double v;
  if (f == Fp8::e4m3fn && mag == 0x7Fu)
    v = std::numeric_limits<double>::quiet_NaN();
  else if (f == Fp8::e5m2 && e == 31u)
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0)
    v = std::ldexp(static_cast<double>(m), 1 - l.bias - l.mbits);
  else
    v = std::ldexp(static_cast<double>(m | (1u << l.mbits)), static_cast<int>(e) - l.bias - l.mbits);
  return negative ? -v : v;
}
}  // namespace

double fp8_max(Fp8 f) { return layout(f).max; }

double fp8_value(Fp8 f, unsigned code) { return fp8_values(f)[code & 0xFFu]; }

unsigned fp8_code(Fp8 f, double x, Fp8Overflow overflow) {
  return fp8_code_inline(f, x, overflow == Fp8Overflow::saturate);
}

const std::array<double, 256>& fp8_values(Fp8 f) {
  static const auto table = [] {
    std::array<std::array<double, 256>, 2> t{};
    for (unsigned c = 0; c < 256; ++c) {
      t[0][c] = fp8_decode(Fp8::e4m3fn, c);
      t[1][c] = fp8_decode(Fp8::e5m2, c);
    }
    return t;
  }();
  return table[f == Fp8::e4m3fn ? 0 : 1];
}

// Code c's magnitude bits m7 = c & 0x7F placed in an f32 with the exponent rebiased by 120
// (E4M3FN's bias 7 to f32's 127) are the value for exponent fields 1-15. An exponent field
// of 0 (m7 < 8, value m * 2^-9) is read as field 1 instead, 2^-6 (1 + m/8), less 2^-6: exact
// (Sterbenz). S.1111.111 is NaN; the sign is set last, so 0x80 is -0. Every value is an f32,
// so the widening to double is exact.
KVB_CLONES_AVX512 void e4m3fn_values(const uint8_t* codes, size_t n, double* out) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t c = codes[i], m7 = c & 0x7Fu, sub = static_cast<uint32_t>(m7 < 8u);
    const uint32_t bits = ((m7 + (sub << 3)) << 20) + (120u << 23);
    const float mag = std::bit_cast<float>(bits) - std::bit_cast<float>(sub * 0x3C800000u);  // 2^-6 or +0
    const uint32_t nan = 0u - static_cast<uint32_t>(m7 == 0x7Fu);
    const uint32_t r = (std::bit_cast<uint32_t>(mag) & ~nan) | (0x7FC00000u & nan) | ((c & 0x80u) << 24);
    out[i] = static_cast<double>(std::bit_cast<float>(r));
  }
}

double f16_ulp(double x) {
  const double a = std::fabs(round_f16(x));
  if (a < std::ldexp(1.0, -14)) return std::ldexp(1.0, -24);
  int e = 0;
  std::frexp(a, &e);
  return std::ldexp(1.0, e - 1 - 10);
}

double f32_ulp(double x) {
  const float a = std::fabs(static_cast<float>(x));
  return static_cast<double>(std::nextafter(a, std::numeric_limits<float>::infinity()) - a);
}

}  // namespace kvbench
