// det_exp / det_log (src/ref/det_math.hpp): within 1 ulp of std::exp / std::log over many
// values, exact at the special points, and det_exp_inplace's vector lanes bit-identical
// to det_exp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/rng.hpp"
#include "ref/det_math.hpp"
#include "core/float_format.hpp"

using namespace kvbench;

namespace {

uint64_t bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Distance in ulps between two finite doubles of the same sign (or zeros).
int64_t ulps(double a, double b) {
  auto key = [](double x) {
    const auto u = static_cast<int64_t>(bits(x));
    return u < 0 ? std::numeric_limits<int64_t>::min() - u : u;
  };
  const int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

}  // namespace

TEST_CASE("det_exp: within 1 ulp of std::exp from -745 to 709.78, and the special values") {
  const CounterRng rng(7, "det_exp");
  int64_t worst = 0, exact = 0, n = 0;
  std::vector<double> xs;
  for (uint64_t i = 0; i < 400000; ++i) {
    // Spread over the whole range, dense near 0 (softmax arguments are s - max <= 0).
    const double u = rng.uniform(i, 0, 1);
    double x = i % 4 == 0   ? rng.uniform(i + (1ull << 40), -745.1, 709.78)
               : i % 4 == 1 ? -u * 40
               : i % 4 == 2 ? (u - 0.5) * std::ldexp(1.0, -static_cast<int>(i % 60))
                            : -u;
    xs.push_back(x);
  }
  for (double x : {0.5 * std::log(2.0), -0.5 * std::log(2.0), 1.5 * std::log(2.0), 1e-300, -1e-300, 708.0,
                   -708.0, 709.0, 709.78, -744.0, -745.0, -745.13, 1.0, -1.0})
    xs.push_back(x);
  for (double x : xs) {
    const double got = det_exp(x), want = std::exp(x);
    const int64_t d = ulps(got, want);
    worst = std::max(worst, d);
    exact += d == 0;
    ++n;
    if (d > 1) FAIL_CHECK("x = " << x << ": det_exp " << got << " std::exp " << want << " (" << d << " ulp)");
  }
  MESSAGE("det_exp: " << exact << " of " << n << " equal to std::exp, worst " << worst << " ulp");
  CHECK(worst <= 1);
  CHECK(bits(det_exp(0.0)) == bits(1.0));
  CHECK(bits(det_exp(-0.0)) == bits(1.0));
  CHECK(bits(det_exp(-kInf)) == bits(0.0));
  CHECK(det_exp(kInf) == kInf);
  CHECK(std::isnan(det_exp(std::numeric_limits<double>::quiet_NaN())));
  CHECK(det_exp(710.0) == kInf);
  CHECK(bits(det_exp(-746.0)) == bits(0.0));
  CHECK(bits(det_exp(-745.0)) == bits(std::exp(-745.0)));  // the smallest subnormal, 2^-1074
}

TEST_CASE("det_exp_inplace: every lane, fast and careful, the bits of det_exp") {
  const CounterRng rng(8, "det_exp_inplace");
  std::vector<double> x;
  for (uint64_t i = 0; i < 10001; ++i) {  // not a multiple of 4: a scalar tail
    double v = rng.uniform(i, -760, 720);
    if (i % 7 == 0) v = rng.uniform(i, -2, 0);
    if (i % 97 == 0) v = -kInf;
    if (i % 101 == 0) v = std::numeric_limits<double>::quiet_NaN();
    x.push_back(v);
  }
  std::vector<double> y = x;
  det_exp_inplace(y.data(), static_cast<int64_t>(y.size()));
  int64_t mismatches = 0;
  for (size_t i = 0; i < x.size(); ++i) mismatches += bits(y[i]) != bits(det_exp(x[i]));
  CHECK(mismatches == 0);
}

TEST_CASE("det_log: within 1 ulp of std::log, and the special values") {
  const CounterRng rng(9, "det_log");
  int64_t worst = 0, exact = 0, n = 0;
  for (uint64_t i = 0; i < 400000; ++i) {
    // Softmax sums lie in [1, keys]; also the whole range, subnormals included.
    const double x = i % 3 == 0 ? rng.uniform(i, 1, 70000)
                     : i % 3 == 1
                         ? std::ldexp(rng.uniform(i, 1, 2), static_cast<int>(rng.integer(i, -1074, 1023)))
                         : rng.uniform(i, 0.5, 2);
    if (x == 0 || std::isinf(x)) continue;
    const double got = det_log(x), want = std::log(x);
    const int64_t d = ulps(got, want);
    worst = std::max(worst, d);
    exact += d == 0;
    ++n;
    if (d > 1) FAIL_CHECK("x = " << x << ": det_log " << got << " std::log " << want << " (" << d << " ulp)");
  }
  MESSAGE("det_log: " << exact << " of " << n << " equal to std::log, worst " << worst << " ulp");
  CHECK(worst <= 1);
  CHECK(bits(det_log(1.0)) == bits(0.0));
  CHECK(det_log(0.0) == -kInf);
  CHECK(det_log(-0.0) == -kInf);
  CHECK(std::isnan(det_log(-1.0)));
  CHECK(det_log(kInf) == kInf);
  CHECK(std::isnan(det_log(std::numeric_limits<double>::quiet_NaN())));
  CHECK(det_log(std::ldexp(1.0, -1074)) == std::log(std::ldexp(1.0, -1074)));
  CHECK(det_log(2.0) == std::log(2.0));
}
