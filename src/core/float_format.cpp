#include "core/float_format.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kvbench {

namespace {
constexpr double kE2M1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
constexpr double kE1M2[8] = {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75};
}  // namespace

double fp4_value(bool e1m2, unsigned code) {
  const double m = (e1m2 ? kE1M2 : kE2M1)[code & 7u];
  return code & 8u ? -m : m;
}

unsigned fp4_code(bool e1m2, double x) {
  const double* mag = e1m2 ? kE1M2 : kE2M1;
  const unsigned sign = std::signbit(x) ? 8u : 0u;
  const double a = std::isnan(x) ? mag[7] : std::fabs(x);
  unsigned best = 7;  // saturates
  for (unsigned k = 0; k < 7; ++k) {
    const double mid = (mag[k] + mag[k + 1]) / 2;  // exact: the magnitudes are multiples of 2^-2
    if (a < mid || (a == mid && k % 2 == 0)) {     // a tie goes to the even code
      best = k;
      break;
    }
  }
  return sign | best;
}

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
