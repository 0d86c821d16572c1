// Block-scaled codes, written from their definitions (specs/quantize-group.md).
#include "ref/microscaling.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "core/hifloat8.hpp"

namespace kvbench {

int MxElement::emax() const {
  switch (kind) {
    case Kind::fp8: return fp8 == Fp8::e4m3fn ? 8 : 15;
    case Kind::small_float: return small_float_layout(small).emax();
    case Kind::int8: return 0;
  }
  return 0;
}

double MxElement::largest() const {
  switch (kind) {
    case Kind::fp8: return fp8_max(fp8);
    case Kind::small_float: return small_float_max(small);
    case Kind::int8: return 127.0 / 64;
  }
  return 0;
}

int mx_shared_exponent(double amax, int emax) {
  int e = 0;
  std::frexp(amax == 0 ? 0x1p-126 : amax, &e);  // amax = m 2^e, m in [0.5, 1): floor(log2) = e - 1
  return std::max(e - 1 - emax, -127);
}

namespace {

// The element nearest q (the code's value; MXINT8: the integer code), ties to even or, with
// `away`, away from zero; saturating.
double mx_element(const MxElement& e, double q, bool away) {
  // Nudged off an exact tie: q = x / 2^k has at most 53 significant bits against a midpoint's
  // few, so 2^-40 (relative) moves only an exact tie, and always away from zero.
  if (away) q *= 1 + 0x1p-40;
  switch (e.kind) {
    case MxElement::Kind::fp8: return fp8_value(e.fp8, fp8_code(e.fp8, q, Fp8Overflow::saturate));
    case MxElement::Kind::small_float: return small_float_value(e.small, small_float_code(e.small, q));
    case MxElement::Kind::int8: return std::clamp(std::nearbyint(q * 64), -127.0, 127.0) + 0.0;
  }
  return 0;
}

}  // namespace

void quantize_mx(const double* x, size_t n, MxElement e, GroupCodes& g, MxFault fault) {
  g.resize(n);
  double amax = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) throw std::logic_error("quantize_mx: a block holding NaN or infinity");
    amax = std::max(amax, std::fabs(x[i]));
  }
  const int shared = mx_shared_exponent(amax, e.emax()) + (fault.exponent_plus_one ? 1 : 0);
  g.scale = std::ldexp(1.0, shared);
  g.scale_alternate = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < n; ++i) {
    const double q = std::ldexp(x[i], -shared);  // exact
    g.code[i] = mx_element(e, q, false);
    const double away = mx_element(e, q, true);
    g.alternate[i] = away != g.code[i] ? away : std::numeric_limits<double>::quiet_NaN();
    g.quotient[i] = e.kind == MxElement::Kind::int8 ? q * 64 : q;
  }
}

void quantize_nvfp4(const double* x, size_t n, double global_scale, GroupCodes& g, Nvfp4Fault fault) {
  g.resize(n);
  double amax = 0;
  for (size_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const double gs = fault.global_scale_dropped ? 1.0 : global_scale;
  const auto e4m3 = [](double v) {
    return fp8_value(Fp8::e4m3fn, fp8_code(Fp8::e4m3fn, v, Fp8Overflow::saturate));
  };
  const auto e2m1 = [](double v) {
    return small_float_value(SmallFloat::e2m1, small_float_code(SmallFloat::e2m1, v));
  };
  std::tie(g.scale, g.scale_alternate) = code_with_alternate(gs * amax / 6, e4m3);
  // x * gs / sf; sf = 0 multiplies by 0 (the engines' outputScale), keeping x's sign.
  const auto quotient = [&](double xi, double sf) { return sf == 0 ? xi * 0.0 : xi * gs / sf; };
  for (size_t i = 0; i < n; ++i) {
    g.quotient[i] = quotient(x[i], g.scale);
    std::tie(g.code[i], g.alternate[i]) = code_with_alternate(g.quotient[i], e2m1);
    if (!std::isnan(g.scale_alternate) && std::isnan(g.alternate[i])) {
      const double other = e2m1(quotient(x[i], g.scale_alternate));
      if (other != g.code[i]) g.alternate[i] = other;
    }
  }
}

double hif8_scale_floor() { return round_f32(1.0 / (kHif8MaxValue * 512)); }

void quantize_hif8(const double* x, size_t n, double divisor, GroupCodes& g) {
  g.resize(n);
  double amax = 0;
  for (size_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  g.scale = std::max(round_f32(amax / divisor), hif8_scale_floor());
  g.scale_alternate = std::numeric_limits<double>::quiet_NaN();
  const auto code = [](double quotient) {
    return hif8_decode(hif8_encode(round_f32(quotient), Hif8Overflow::saturate));
  };
  for (size_t i = 0; i < n; ++i) {
    std::tie(g.code[i], g.alternate[i]) = code_with_alternate(x[i] / g.scale, code);
    g.quotient[i] = round_f32(x[i] / g.scale);
  }
}

}  // namespace kvbench
