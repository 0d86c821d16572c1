// The per-element bound of attention (src/ref/attention_bound.hpp), its use by the comparator
// (a bound replaces atol/rtol, a NaN passes where it is permitted), and the permitted
// implementations' emulation (src/ref/attention_variants.cpp), on cases small enough to
// derive by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "check/compare.hpp"
#include "check/expected.hpp"
#include "core/float_format.hpp"
#include "ref/attention.hpp"
#include "ref/attention_bound.hpp"

using namespace kvbench;

namespace {

constexpr double u32 = 0x1p-24;

// One row attending to `k`, `v` (dk = dv = 1) with the given steps or none.
struct Tiny {
  std::vector<double> q{1.0}, k, v;
  double out = 0, lse = 0;
  uint16_t bound = 0;  // bf16 bits (QueryRow::bound)
  NanPermits nan_ok;
  void run(AttentionBlock a, int64_t begin, int64_t end) {
    QueryRow row{.q = q.data(), .begin = begin, .end = end, .out = &out, .bound = &bound, .nan_ok = &nan_ok};
    attend(a, std::span(&row, 1), RowsView{k.data(), 1}, RowsView{v.data(), 1}, &lse);
  }
};

}  // namespace

TEST_CASE("attention bound: each term of the derivation, by hand") {
  // One row, two keys, q = 1, k = (0, 0): scores 0 and 0, p = (1/2, 1/2), v = (1, -1), o = 0:
  // sum_j p_j |v_j| = 1, |o| = 0, max |v| = 1.
  const RowFigures row{.q_norm = 1, .score_max = 0, .spread = 0, .keys = 2};
  const ChannelFigures ch{.v_max = 1, .weighted = 1, .out = 0};
  // Nothing permitted but f32 arithmetic: scores' term 0 (|scale| q k = 0 and max|s| = 0);
  // exp's (6 + 6 * 0) u * (w + |o|); the sums' (2 * 2 + 8) u * w; times (1 + 2^-6).
  double want = (6 * u32 * 1 + 12 * u32 * 1) * (1 + 0x1p-6);
  CHECK(attention_element_bound({}, 1.0, 1, 0.0, ch, row) == doctest::Approx(want).epsilon(1e-12));
  // P within 2^-10 relative and 2^-25 absolute per key: + (2^-10 w + 2 * 2^-25 max|v|).
  const PermittedDeltas p{.p = 0x1p-10, .p_abs = 0x1p-25};
  want += (0x1p-10 + 2 * 0x1p-25) * (1 + 0x1p-6);
  CHECK(attention_element_bound(p, 1.0, 1, 0.0, ch, row) == doctest::Approx(want).epsilon(1e-12));
  // K~ within 2^-11: the scores move by eps = |scale| ||q|| max||k|| (2^-11 + (dk + 2) u);
  // with ||k|| = 3, scale 0.5: eps = 1.5 (2^-11 + 3 u); the term expm1(2 eps) * (w + |o|).
  const double eps = 1.5 * (0x1p-11 + 3 * u32);
  const double with_k = (std::expm1(2 * eps) * 1 + 6 * u32 * 1 + 12 * u32 * 1) * (1 + 0x1p-6);
  CHECK(attention_element_bound({.k = 0x1p-11}, 0.5, 1, 3.0, ch, row) ==
        doctest::Approx(with_k).epsilon(1e-12));
  // The output's rounding: one f16 ulp at |golden| + bound (0.5 + tiny: 2^-11).
  CHECK(rounded_bound(DType::f16, 0.5, 1e-9) == doctest::Approx(1e-9 + 0x1p-11).epsilon(1e-12));
  CHECK(rounded_bound(DType::bf16, 1.0, 0) == 0x1p-7);
  CHECK(rounded_bound(DType::f32, 0.0, 0) == std::ldexp(1.0, -149));
}

TEST_CASE("f32_at_or_above and ulp_at from bits: libm's nextafter, ilogb and ldexp on every kind of input") {
  // The libm formulas they replace, the oracle here.
  const auto f32_up = [](double x) {
    float f = static_cast<float>(x);
    if (static_cast<double>(f) < x) f = std::nextafter(f, INFINITY);
    return f;
  };
  const auto ulp = [](DType t, double x) {
    int mantissa = 23, min_exponent = -126;
    if (t == DType::f16) mantissa = 10, min_exponent = -14;
    if (t == DType::bf16) mantissa = 7;
    const int e = x > 0 ? std::max(std::ilogb(x), min_exponent) : min_exponent;
    return std::ldexp(1.0, e - mantissa);
  };
  std::vector<double> xs{0.0,
                         -0.0,
                         INFINITY,
                         -INFINITY,
                         std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::denorm_min(),
                         std::numeric_limits<double>::min(),
                         std::numeric_limits<double>::max(),
                         -std::numeric_limits<double>::max(),
                         static_cast<double>(std::numeric_limits<float>::max()),
                         static_cast<double>(std::numeric_limits<float>::denorm_min()),
                         0x1p-126,
                         0x1p-14};
  for (const double x : std::vector<double>(xs))  // each neighbour too
    xs.insert(xs.end(), {std::nextafter(x, INFINITY), std::nextafter(x, -INFINITY)});
  uint64_t state = 88172645463325252ull;  // xorshift64: bit patterns of every exponent
  for (int i = 0; i < 200000; ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    xs.push_back(std::bit_cast<double>(state));
  }
  for (const double x : xs) {
    const float got = f32_at_or_above(x), want = f32_up(x);
    CHECK_MESSAGE(std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want), x);
    for (const DType t : {DType::f16, DType::bf16, DType::f32})
      CHECK_MESSAGE(std::bit_cast<uint64_t>(ulp_at(t, x)) == std::bit_cast<uint64_t>(ulp(t, x)), x);
  }
}

TEST_CASE("attend: the bound it writes is the derivation's for the row it measured") {
  Tiny t;
  t.k = {0, 0};
  t.v = {1, -1};
  AttentionBlock a{.dk = 1, .dv = 1, .scale = 1, .permitted = PermittedDeltas{.p = 0x1p-10}};
  t.run(a, 0, 2);
  CHECK(t.out == 0);
  const RowFigures row{.q_norm = 1, .score_max = 0, .spread = 0, .keys = 2};
  CHECK(t.bound == bf16_at_or_above(f32_at_or_above(attention_element_bound(
                       {.p = 0x1p-10}, 1.0, 1, 0.0, {.v_max = 1, .weighted = 1, .out = 0}, row))));
  // A row that sees no key: bound 0 (every implementation gives its empty value exactly).
  t.run(a, 1, 1);
  CHECK(t.bound == 0);
}

TEST_CASE("attend: NaN is permitted where a key of the call the row weighs 0 has a non-finite V") {
  Tiny t;
  t.k = {0, 0, 0};
  t.v = {1, 2, kInf};
  AttentionBlock a{.dk = 1, .dv = 1, .scale = 1, .permitted = PermittedDeltas{}};
  // Rows are causal over the call's three keys: the first sees keys [0, 2), key 2 is inside
  // the sequence, weighs 0 for it, and has V = inf.
  std::vector<double> q{1, 1}, out(2);
  std::vector<uint16_t> bound(2);
  NanPermits nan_ok;
  std::vector<QueryRow> rows{{.q = &q[0],
                              .begin = 0,
                              .end = 2,
                              .out = &out[0],
                              .bound = &bound[0],
                              .nan_ok = &nan_ok,
                              .out_index = 0},
                             {.q = &q[1],
                              .begin = 0,
                              .end = 3,
                              .out = &out[1],
                              .bound = &bound[1],
                              .nan_ok = &nan_ok,
                              .out_index = 1}};
  attend(a, rows, RowsView{t.k.data(), 1}, RowsView{t.v.data(), 1}, nullptr);
  CHECK(out[0] == 1.5);  // (1 + 2) / 2: the golden leaves the zero-weight key out
  CHECK(nan_ok.sorted() == std::vector<int64_t>{0});  // row 1 sees the key: no permission
  CHECK(std::isinf(out[1]));                          // it sees the key: inf either way
  // ieee_zero_weight, the implementation that multiplies it: NaN exactly there.
  const PrecisionSteps ieee{.ieee_zero_weight = true};
  a.steps = &ieee;
  attend(a, rows, RowsView{t.k.data(), 1}, RowsView{t.v.data(), 1}, nullptr);
  CHECK(std::isnan(out[0]));
}

TEST_CASE("compare: a bound replaces atol and rtol, and a permitted NaN passes where it is listed") {
  Tensor like("out", DType::f32, {3}, Role::output);
  Expected e = Expected::rounded(like, {1.0, 2.0, 3.0});
  e.tensor = "out";
  e.tolerance = {.atol = 1e-9, .rtol = 0};
  e.set_bound({0.5f, 0.25f, 0.0f});
  e.permit_nan(2);
  e.finish();
  Tensor actual = like;
  actual.set(0, 1.5);   // within its bound 0.5, far outside atol
  actual.set(1, 2.26);  // 0.01 outside its bound
  actual.set(2, std::numeric_limits<double>::quiet_NaN());
  const Metrics m = compare_output(e, actual, actual);
  CHECK(m.per_element_bound);
  CHECK(m.violations == 1);
  CHECK(m.worst_index == 1);
  CHECK(m.worst_allowed == doctest::Approx(0.25));
  CHECK(m.boundary == 1);  // the NaN, accepted through its permission
  // A case file's tolerance replaces the bound: then atol decides (the NaN permission, a
  // fact of the definition, stays).
  e.tolerance_override = true;
  const Metrics o = compare_output(e, actual, actual);
  CHECK(!o.per_element_bound);
  CHECK(o.violations == 2);
}

TEST_CASE("permitted implementations by hand: P unnormalized in f16, split keys, exp2") {
  // Scores 0 and ln 3 (q = 1, k = (0, ln 3)): weights 1/4 and 3/4; V = (0, 1): o = 3/4.
  Tiny t;
  t.k = {0, std::log(3.0)};
  t.v = {0, 1};
  AttentionBlock a{.dk = 1, .dv = 1, .scale = 1};
  t.run(a, 0, 2);
  CHECK(t.out == doctest::Approx(0.75).epsilon(1e-15));
  // unnormalized_p: e = (f32 exp(-ln3 rounded) = 1/3 in f32, 1), rounded to f16 before P @ V:
  // o = f16(1) * 1 / (f32(1/3) + 1), in f32.
  const float third =
      static_cast<float>(std::exp(static_cast<double>(0.0f - static_cast<float>(std::log(3.0)))));
  const PrecisionSteps un{.p = PrecisionSteps::P::unnormalized, .p_dtype = DType::f16};
  a.steps = &un;
  t.run(a, 0, 2);
  CHECK(t.out == static_cast<float>(1.0f / (third + 1.0f)));
  // split_k_64 over two keys is one split: the flash result, P in f32.
  const PrecisionSteps split{.p = PrecisionSteps::P::unrounded, .split = 1};
  a.steps = &split;
  t.run(a, 0, 2);
  // Two splits of one key each: maxima 0 and ln 3 (f32), merged with f32 exp(0 - ln 3).
  const float m1 = static_cast<float>(std::log(3.0));
  const float w0 = static_cast<float>(std::exp(static_cast<double>(0.0f - m1)));
  CHECK(t.out == static_cast<float>(1.0f * 1.0f / (w0 * 1.0f + 1.0f)));
  // A bound made for the golden holds every one of them.
  a.steps = nullptr;
  a.permitted = PermittedDeltas{.p = 2 * 0x1p-11, .p_abs = 2 * 0x1p-25};
  t.run(a, 0, 2);
  CHECK(std::fabs(static_cast<double>(static_cast<float>(1.0f / (third + 1.0f))) - 0.75) <=
        bf16_widened(t.bound));
}
