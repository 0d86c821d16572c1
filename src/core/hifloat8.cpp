// HiF8 decode and TA encode, written from the definition in specs/hifloat8.md.
#include "core/hifloat8.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace kvbench {

namespace {

// Exponent-field width w and mantissa bits of a normal payload (p >= 8), from its dot field:
// 0001 -> (0, 3), 001 -> (1, 3), 01 -> (2, 3), 10 -> (3, 2), 11 -> (4, 1).
struct Hif8Layout {
  int w, mbits;
};

Hif8Layout hif8_layout_of_payload(unsigned p) {
  if (p >= 0x60) return {4, 1};
  if (p >= 0x40) return {3, 2};
  if (p >= 0x20) return {2, 3};
  if (p >= 0x10) return {1, 3};
  return {0, 3};
}

// The same layout chosen by |E| (0 .. 15) when encoding.
Hif8Layout hif8_layout_of_exponent(int abs_e) {
  if (abs_e == 0) return {0, 3};
  if (abs_e == 1) return {1, 3};
  if (abs_e <= 3) return {2, 3};
  if (abs_e <= 7) return {3, 2};
  return {4, 1};
}

// The payload of a magnitude r that is exactly a finite nonzero HiF8 value.
unsigned hif8_payload(double r) {
  const int e = std::ilogb(r);
  if (e <= -16) return static_cast<unsigned>(e + 23);  // denormal 2^(M-23)
  const int abs_e = std::abs(e);
  const Hif8Layout l = hif8_layout_of_exponent(abs_e);
  const auto m = static_cast<unsigned>(std::ldexp(r, l.mbits - e)) - (1u << l.mbits);
  // Dot prefixes as payload bits above the exponent field: 0001, 001, 01, 10, 11.
  static constexpr unsigned kDot[5] = {0x1, 0x1, 0x1, 0x2, 0x3};
  unsigned field = 0;
  if (l.w > 0) {
    const unsigned tail = static_cast<unsigned>(abs_e) - (1u << (l.w - 1));  // implicit leading 1 dropped
    field = ((e < 0 ? 1u : 0u) << (l.w - 1)) | tail;
  }
  return (kDot[l.w] << (l.w + l.mbits)) | (field << l.mbits) | m;
}

}  // namespace

double hif8_decode(uint8_t code) {
  if (code == kHif8Nan) return std::numeric_limits<double>::quiet_NaN();
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const unsigned p = code & 0x7Fu;
  if (p == kHif8Inf) return sign * std::numeric_limits<double>::infinity();
  if (p < 8) return p == 0 ? 0.0 : sign * std::ldexp(1.0, static_cast<int>(p) - 23);
  const Hif8Layout l = hif8_layout_of_payload(p);
  const unsigned m = p & ((1u << l.mbits) - 1u);
  int e = 0;
  if (l.w > 0) {
    const unsigned field = (p >> l.mbits) & ((1u << l.w) - 1u);
    const unsigned half = 1u << (l.w - 1);  // the implicit leading 1 of |E|
    const int abs_e = static_cast<int>(half | (field & (half - 1u)));
    e = (field & half) ? -abs_e : abs_e;
  }
  return sign * std::ldexp(1.0 + static_cast<double>(m) / static_cast<double>(1u << l.mbits), e);
}

const std::array<double, 256>& hif8_values() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (unsigned c = 0; c < 256; ++c) t[c] = hif8_decode(static_cast<uint8_t>(c));
    return t;
  }();
  return table;
}

uint8_t hif8_encode(double x, Hif8Overflow mode) {
  if (std::isnan(x)) return kHif8Nan;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const uint8_t overflow = sign | (mode == Hif8Overflow::saturate ? kHif8Max : kHif8Inf);
  const double a = std::fabs(x);
  if (std::isinf(a)) return overflow;
  if (a < 0x1p-23) return 0x00;  // also +-0: the only zero has no sign
  const int e = std::ilogb(a);
  if (e > 15) return overflow;
  // The binade's quantum: 2^(e - mbits); denormal binades have none (q = 2^e), and binade
  // -23 rounds on the grid of 2^-22 (so that [2^-23, 2^-22) goes to 2^-22).
  int qexp;
  if (e < -22)
    qexp = -22;
  else if (e <= -16)
    qexp = e;
  else
    qexp = e - hif8_layout_of_exponent(std::abs(e)).mbits;
  // Exact: scaling by powers of two, and std::round is half away from zero.
  const double r = std::ldexp(std::round(std::ldexp(a, -qexp)), qexp);
  if (r > kHif8MaxValue) return overflow;  // 49152 (the Inf slot) or 65536
  return static_cast<uint8_t>(sign | hif8_payload(r));
}

}  // namespace kvbench
