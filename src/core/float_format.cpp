#include "core/float_format.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace kvbench {

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
