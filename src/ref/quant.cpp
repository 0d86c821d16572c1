#include "ref/quant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

#include "core/float_format.hpp"

namespace kvbench {

void throw_not_float(DType t) {
  throw std::logic_error("round_to: " + std::string(dtype_name(t)) + " is not a float dtype");
}

double ulp_of(DType t, double x) {
  switch (t) {
    case DType::f16: return f16_ulp(x);
    case DType::bf16: {
      const double a = std::fabs(round_bf16(x));
      if (a < std::ldexp(1.0, -126)) return std::ldexp(1.0, -133);
      int e = 0;
      std::frexp(a, &e);
      return std::ldexp(1.0, e - 1 - 7);
    }
    case DType::f32: return f32_ulp(x);
    default: throw std::logic_error("ulp_of: not a float dtype");
  }
}

double scale_floor(DType compute) { return round_to(compute, 1e-5); }

namespace {

// rne(T(quotient)) and its boundary alternate.
std::pair<double, double> round_code(double quotient, DType compute, bool truncate) {
  // + 0.0: nearbyint(-0.3) is -0.0, and a code is an integer: 0 dequantizes to +0.0.
  return code_with_alternate(quotient, [compute, truncate](double q) {
    const double t = round_to(compute, q);
    return (truncate ? std::trunc(t) : std::nearbyint(t)) + 0.0;
  });
}

}  // namespace

void quantize_symmetric(const double* x, size_t n, int64_t qmax, DType compute, GroupCodes& g,
                        QuantFault fault) {
  g.resize(n);
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  if (fault.scale_f32) compute = DType::f32;
  g.scale = std::max(round_to(compute, m / static_cast<double>(qmax)), scale_floor(compute));
  const double lo = -static_cast<double>(qmax), hi = static_cast<double>(qmax);
  for (size_t i = 0; i < n; ++i) {
    auto [code, alt] = round_code(x[i] / g.scale, compute, fault.truncate);
    code = std::clamp(code, lo, hi);
    if (!std::isnan(alt)) alt = std::clamp(alt, lo, hi);
    g.code[i] = code;
    g.quotient[i] = round_to(compute, x[i] / g.scale);
    g.alternate[i] = alt == code ? std::numeric_limits<double>::quiet_NaN() : alt;
  }
}

void quantize_asymmetric(const double* x, size_t n, int64_t qmin, int64_t qmax, DType compute, GroupCodes& g,
                         QuantFault fault) {
  g.resize(n);
  if (fault.scale_f32) compute = DType::f32;
  double lo = fault.range_without_zero ? x[0] : 0, hi = lo;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const double qlo = static_cast<double>(qmin), qhi = static_cast<double>(qmax);
  g.scale = std::max(round_to(compute, round_to(compute, hi - lo) / (qhi - qlo)), scale_floor(compute));
  g.zero_point_exact = qlo - round_to(compute, lo / g.scale);
  g.zero_point = static_cast<int64_t>(std::clamp(std::nearbyint(g.zero_point_exact), qlo, qhi));
  const double zp = static_cast<double>(g.zero_point);
  for (size_t i = 0; i < n; ++i) {
    auto [code, alt] = round_code(x[i] / g.scale, compute, fault.truncate);
    code = std::clamp(code + zp, qlo, qhi) + 0.0;
    if (!std::isnan(alt)) alt = std::clamp(alt + zp, qlo, qhi);
    g.code[i] = code;
    g.quotient[i] = round_to(compute, x[i] / g.scale) + zp;
    g.alternate[i] = alt == code ? std::numeric_limits<double>::quiet_NaN() : alt;
  }
}

double fp8_scale_floor(Fp8 format) { return round_f32(1.0 / (fp8_max(format) * 512)); }

void quantize_fp8(const double* x, size_t n, Fp8 format, double divisor, GroupCodes& g, Fp8QuantFault fault) {
  g.resize(n);
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  g.scale = std::max(round_f32(m / divisor), fp8_scale_floor(format));
  const Fp8Overflow overflow = fault.no_saturation ? Fp8Overflow::overflow_to_special : Fp8Overflow::saturate;
  const auto code = [&](double quotient) {
    return fp8_value(format, fp8_code(format, round_f32(quotient), overflow));
  };
  for (size_t i = 0; i < n; ++i) {
    const double quotient = fault.scale_multiplied ? x[i] * g.scale : x[i] / g.scale;
    std::tie(g.code[i], g.alternate[i]) = code_with_alternate(quotient, code);
    g.quotient[i] = round_f32(quotient);
  }
}

double dequant_zero_point(double q, double zp, double s, DType out) {
  return round_to(out, round_f32((q - zp) * s));
}

}  // namespace kvbench
