// HiFloat8 (specs/hifloat8.md) on the host: all 256 codes decoded against a table built here
// from the definition's fields (bit strings, independent of core/hifloat8.cpp), and TA encoding
// against a brute-force nearest-value search over that table (ties to the larger magnitude) on
// every midpoint and its neighbours, every f16 and bf16 value, f32 subnormals, random f32
// patterns and the overflow boundaries, in both overflow modes.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/float_format.hpp"
#include "core/hifloat8.hpp"

using namespace kvbench;

namespace {

constexpr auto kHifSat = Hif8Overflow::saturate;
constexpr auto kHifToInf = Hif8Overflow::to_inf;
constexpr double kHifNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kHifInfinity = std::numeric_limits<double>::infinity();

std::string hif_bits(unsigned v, int n) {
  std::string s;
  for (int i = n - 1; i >= 0; --i) s += ((v >> i) & 1u) ? '1' : '0';
  return s;
}

// code -> value, from the definition: S | dot | exponent field (sign, |E| without its leading
// 1) | mantissa, concatenated as bit strings.
std::map<unsigned, double> hif_definition_table() {
  std::map<unsigned, double> t;
  const auto add = [&](const std::string& payload, double magnitude) {
    REQUIRE(payload.size() == 7);
    for (const char s : {'0', '1'}) {
      const auto code = static_cast<unsigned>(std::stoul(std::string(1, s) + payload, nullptr, 2));
      REQUIRE(t.count(code) == 0);
      t[code] = s == '1' ? -magnitude : magnitude;
    }
  };
  t[0x00] = 0.0;  // 0 0000 000: the only zero; 1 0000 000 is NaN
  t[0x80] = kHifNan;
  for (unsigned M = 1; M <= 7; ++M) add("0000" + hif_bits(M, 3), std::ldexp(1.0, static_cast<int>(M) - 23));
  struct HifDot {
    const char* prefix;
    int w, mbits;
  };
  for (const HifDot d : {HifDot{"0001", 0, 3}, HifDot{"001", 1, 3}, HifDot{"01", 2, 3}, HifDot{"10", 3, 2},
                         HifDot{"11", 4, 1}}) {
    // (field bits, E): w = 0 has E = 0 only; else a sign bit and |E| in [2^(w-1), 2^w).
    std::vector<std::pair<std::string, int>> exponents;
    if (d.w == 0) exponents.push_back({"", 0});
    for (int neg = 0; neg < 2 && d.w > 0; ++neg)
      for (int mag = 1 << (d.w - 1); mag < (1 << d.w); ++mag)
        exponents.push_back(
            {(neg ? "1" : "0") + hif_bits(mag - (1 << (d.w - 1)), d.w - 1), neg ? -mag : mag});
    for (const auto& [field, E] : exponents)
      for (unsigned m = 0; m < (1u << d.mbits); ++m) {
        const bool inf = E == 15 && m == 1;  // the 1.5 * 2^15 slot
        add(d.prefix + field + hif_bits(m, d.mbits),
            inf ? kHifInfinity : std::ldexp(1.0 + m / double(1u << d.mbits), E));
      }
  }
  return t;
}

const std::map<unsigned, double>& hif_table() {
  static const std::map<unsigned, double> t = hif_definition_table();
  return t;
}

bool hif_same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

// The finite magnitudes in increasing order (0 first), with their positive codes, and the Inf
// slot counted at 49152 = 1.5 * 2^15, the value its fields would have.
struct HifGrid {
  std::vector<double> mags;
  std::vector<unsigned> codes;  // 0x6F for the Inf slot
};
const HifGrid& hif_grid() {
  static const HifGrid g = [] {
    HifGrid r;
    for (const auto& [c, v] : hif_table())
      if (c < 0x80 && (std::isfinite(v) || c == 0x6F)) {
        r.mags.push_back(std::isfinite(v) ? v : 49152.0);
        r.codes.push_back(c);
      }
    std::vector<size_t> order(r.mags.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.mags[a] < r.mags[b]; });
    HifGrid s;
    for (size_t i : order) s.mags.push_back(r.mags[i]), s.codes.push_back(r.codes[i]);
    return s;
  }();
  return g;
}

// The definition's TA encoding by brute force: the nearest magnitude, ties to the larger one;
// the Inf slot (or anything past it) overflows.
unsigned hif_reference_code(double x, Hif8Overflow mode) {
  if (std::isnan(x)) return 0x80;
  const unsigned sign = std::signbit(x) ? 0x80 : 0x00;
  const unsigned overflow = sign | (mode == kHifSat ? 0x6E : 0x6F);
  const double a = std::fabs(x);
  const HifGrid& g = hif_grid();
  size_t i = std::lower_bound(g.mags.begin(), g.mags.end(), a) - g.mags.begin();  // first >= a
  if (i == g.mags.size()) return overflow;
  if (g.mags[i] != a && i > 0 && a - g.mags[i - 1] < g.mags[i] - a) --i;  // strictly nearer below
  if (g.codes[i] == 0x6F) return overflow;
  return g.codes[i] == 0 ? 0x00 : sign | g.codes[i];
}

void hif_check_encode(double x) {
  for (const Hif8Overflow mode : {kHifToInf, kHifSat}) {
    const unsigned want = hif_reference_code(x, mode), got = hif8_encode(x, mode);
    if (got != want) {
      char text[96];
      std::snprintf(text, sizeof text, "%a%s -> 0x%02X, want 0x%02X", x, mode == kHifSat ? " saturating" : "",
                    got, want);
      FAIL_CHECK(text);
    }
  }
}

}  // namespace

TEST_CASE("hif8: the definition's table covers the 256 codes, with the paper's counts") {
  REQUIRE(hif_table().size() == 256);
  // Nonzero finite magnitudes per binade: 8 for |E| <= 3, 4 for 4..7, 2 for 8..15 (1 at 15,
  // the Inf slot), 1 per denormal binade -22..-16: 126, over 38 binades [-22, 15].
  std::map<int, int> per_binade;
  for (const auto& [c, v] : hif_table())
    if (c > 0 && c < 0x80 && std::isfinite(v)) ++per_binade[std::ilogb(v)];
  CHECK(per_binade.size() == 38);
  CHECK(per_binade.begin()->first == -22);
  CHECK(per_binade.rbegin()->first == 15);
  int total = 0;
  for (const auto& binade : per_binade) {
    const int e = binade.first, n = binade.second;  // not a structured binding: CAPTURE captures it
    CAPTURE(e);
    const int a = std::abs(e);
    CHECK(n == (e < -15 ? 1 : a <= 3 ? 8 : a <= 7 ? 4 : e == 15 ? 1 : 2));
    total += n;
  }
  CHECK(total == 126);
}

TEST_CASE("hif8_decode: every one of the 256 codes as the definition says") {
  for (const auto& entry : hif_table()) {
    const auto c = entry.first;
    const auto want = entry.second;
    CAPTURE(c);
    CHECK(hif_same(hif8_decode(static_cast<uint8_t>(c)), want));
    CHECK(hif_same(hif8_values()[c], want));
  }
  // Landmarks by hand.
  CHECK(hif_same(hif8_decode(0x00), 0.0));
  CHECK(std::isnan(hif8_decode(0x80)));
  CHECK(hif8_decode(0x01) == 0x1p-22);
  CHECK(hif8_decode(0x07) == 0x1p-16);
  CHECK(hif8_decode(0x87) == -0x1p-16);
  CHECK(hif8_decode(0x08) == 1.0);
  CHECK(hif8_decode(0x0F) == 1.875);
  CHECK(hif8_decode(0x10) == 2.0);            // 001 0 000
  CHECK(hif8_decode(0x18) == 0.5);            // 001 1 000
  CHECK(hif8_decode(0x38) == 0.125);          // 01 1 1 000: E = -3
  CHECK(hif8_decode(0x5F) == 1.75 * 0x1p-7);  // 10 1 11 11: E = -7, 1.75
  CHECK(hif8_decode(0x7E) == 0x1p-15);        // 11 1 111 0: the smallest normal
  CHECK(hif8_decode(0x6D) == 1.5 * 0x1p14);   // 11 0 110 1
  CHECK(hif8_decode(0x6E) == 32768.0);
  CHECK(hif8_decode(0xEE) == -32768.0);
  CHECK(hif8_decode(0x6F) == kHifInfinity);
  CHECK(hif8_decode(0xEF) == -kHifInfinity);
}

TEST_CASE("hif8: every value is exact in f16, bf16 and f32") {
  for (unsigned c = 0; c < 256; ++c) {
    const double v = hif8_decode(static_cast<uint8_t>(c));
    if (!std::isfinite(v)) continue;
    CAPTURE(c);
    CHECK(round_f16(v) == v);
    CHECK(round_bf16(v) == v);
    CHECK(round_f32(v) == v);
  }
}

TEST_CASE("hif8_encode: every finite code back to itself; zeros, NaN and infinities") {
  for (unsigned c = 0; c < 256; ++c) {
    const double v = hif8_decode(static_cast<uint8_t>(c));
    if (!std::isfinite(v)) continue;
    CAPTURE(c);
    CHECK(hif8_encode(v) == c);
    CHECK(hif8_encode(v, kHifSat) == c);
    CHECK(hif8_encode(static_cast<float>(v)) == c);
  }
  // The only zero has no sign: -0 (and every underflow of either sign) gives 0x00, not 0x80.
  CHECK(hif8_encode(0.0) == 0x00);
  CHECK(hif8_encode(-0.0) == 0x00);
  CHECK(hif8_encode(-0.0, kHifSat) == 0x00);
  for (const Hif8Overflow mode : {kHifToInf, kHifSat}) {
    CHECK(hif8_encode(kHifNan, mode) == 0x80);
    CHECK(hif8_encode(-kHifNan, mode) == 0x80);
  }
  CHECK(hif8_encode(kHifInfinity) == 0x6F);
  CHECK(hif8_encode(-kHifInfinity) == 0xEF);
  CHECK(hif8_encode(kHifInfinity, kHifSat) == 0x6E);
  CHECK(hif8_encode(-kHifInfinity, kHifSat) == 0xEE);
}

TEST_CASE("hif8_encode: every midpoint rounds away from zero, its neighbours to the nearer value") {
  const HifGrid& g = hif_grid();
  REQUIRE(g.mags.size() == 128);  // 0, 126 finite, the Inf slot
  for (size_t i = 0; i + 1 < g.mags.size(); ++i) {
    const double a = g.mags[i], b = g.mags[i + 1], mid = (a + b) / 2;  // exact
    CAPTURE(a);
    CAPTURE(b);
    const bool to_inf = g.codes[i + 1] == 0x6F;
    const unsigned up = to_inf ? 0x6F : g.codes[i + 1];
    CHECK(hif8_encode(mid) == up);
    CHECK(hif8_encode(-mid) == (up | 0x80));
    CHECK(hif8_encode(mid, kHifSat) == (to_inf ? 0x6E : up));
    const float midf = static_cast<float>(mid);
    REQUIRE(static_cast<double>(midf) == mid);
    for (const double below : {std::nextafter(mid, 0.0), double(std::nextafter(midf, 0.0f))}) {
      CHECK(hif8_encode(below) == g.codes[i]);
      CHECK(hif8_encode(-below) == (g.codes[i] == 0 ? 0x00 : g.codes[i] | 0x80));
    }
    for (const double above : {std::nextafter(mid, kHifInfinity), double(std::nextafter(midf, INFINITY))})
      CHECK(hif8_encode(above) == up);
    for (const double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, kHifInfinity), a, b}) {
      hif_check_encode(x);
      hif_check_encode(-x);
    }
  }
}

TEST_CASE("hif8_encode: the bottom: [2^-23, 2^-22) to 2^-22, below to 0x00, f32 subnormals") {
  for (const double x : {0x1p-23, 1.25 * 0x1p-23, 1.5 * 0x1p-23, std::nextafter(0x1p-22, 0.0), 0x1p-22}) {
    CHECK(hif8_encode(x) == 0x01);
    CHECK(hif8_encode(-x) == 0x81);
  }
  CHECK(hif8_encode(std::nextafter(0x1p-23, 0.0)) == 0x00);
  CHECK(hif8_encode(-std::nextafter(0x1p-23, 0.0)) == 0x00);
  CHECK(hif8_encode(1.5 * 0x1p-22) == 0x02);  // tie between 2^-22 and 2^-21: away
  CHECK(hif8_encode(1.5 * 0x1p-16) == 0x7E);  // tie between 2^-16 and 2^-15 (D4, E = -15)
  // IEEE f32 subnormals (all below 2^-126) underflow, either sign.
  for (const uint32_t b : {0x00000001u, 0x00000002u, 0x00400000u, 0x007FFFFFu, 0x00800000u}) {
    CAPTURE(b);
    CHECK(hif8_encode(std::bit_cast<float>(b)) == 0x00);
    CHECK(hif8_encode(std::bit_cast<float>(b | 0x80000000u)) == 0x00);
    CHECK(hif8_encode(std::bit_cast<float>(b), kHifSat) == 0x00);
  }
  uint64_t state = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    const auto b = static_cast<uint32_t>(state >> 32) & 0x807FFFFFu;  // exponent field 0
    hif_check_encode(std::bit_cast<float>(b));
  }
  // f16 subnormals: 2^-24 underflows, 2^-23 is the tie to 2^-22, 3 * 2^-24 above it.
  CHECK(hif8_encode(f16_bits_to_double(0x0001)) == 0x00);
  CHECK(hif8_encode(f16_bits_to_double(0x0002)) == 0x01);
  CHECK(hif8_encode(f16_bits_to_double(0x0003)) == 0x01);
  CHECK(hif8_encode(f16_bits_to_double(0x8003)) == 0x81);
}

TEST_CASE("hif8_encode: overflow from 40960 (the midpoint to the Inf slot) up") {
  for (const double x :
       {32768.0, 36864.0, std::nextafter(40960.0, 0.0), double(std::nextafter(40960.0f, 0.0f))}) {
    CAPTURE(x);
    CHECK(hif8_encode(x) == 0x6E);
    CHECK(hif8_encode(-x) == 0xEE);
    CHECK(hif8_encode(x, kHifSat) == 0x6E);
  }
  for (const double x : {40960.0, 45056.0, 49152.0, 65504.0, 65536.0, 1e300, kHifInfinity}) {
    CAPTURE(x);
    CHECK(hif8_encode(x) == 0x6F);
    CHECK(hif8_encode(-x) == 0xEF);
    CHECK(hif8_encode(x, kHifSat) == 0x6E);
    CHECK(hif8_encode(-x, kHifSat) == 0xEE);
  }
  // 24576 = 1.5 * 2^14 is a value.
  CHECK(hif8_encode(24576.0) == 0x6D);
  CHECK(hif8_encode(28672.0) == 0x6E);  // tie between 24576 and 32768: away
}

TEST_CASE("hif8_encode: every f16 and bf16 value, and random f32 patterns, as the definition rounds") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    hif_check_encode(f16_bits_to_double(static_cast<uint16_t>(b)));
    hif_check_encode(bf16_bits_to_double(static_cast<uint16_t>(b)));
  }
  uint64_t state = 0x243f6a8885a308d3u;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    // Half of them with exponents near HiF8's range [2^-24, 2^17), inf and NaN included.
    auto b = static_cast<uint32_t>(state >> 32);
    if (i & 1) b = (b & 0x807FFFFFu) | ((103u + (b >> 23) % 41u) << 23);
    hif_check_encode(std::bit_cast<float>(b));
  }
}
