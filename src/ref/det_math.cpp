// The constants and the structure of det_exp's approximation and of det_log are those of
// fdlibm's e_exp.c and e_log.c as carried by musl (src/math/exp.c and log.c before 2018):
//   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//   Developed at SunSoft, a Sun Microsystems, Inc. business.
//   Permission to use, copy, modify, and distribute this software is freely granted,
//   provided that this notice is preserved.
// det_exp's reduction (k by round-to-nearest with a shifter constant, so the same formula
// runs in vector lanes) and its scaling by 2^k are kvbench's.
#include "ref/det_math.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/clones.hpp"

namespace kvbench {
namespace {

typedef double V4 __attribute__((vector_size(32)));
typedef int64_t I4 __attribute__((vector_size(32)));
typedef double V4u __attribute__((vector_size(32), aligned(8), may_alias));

constexpr double kInvLn2 = 1.44269504088896338700e+00;  // 0x3ff71547652b82fe
constexpr double kLn2Hi = 6.93147180369123816490e-01;   // 0x3fe62e42fee00000: k * kLn2Hi is exact
constexpr double kLn2Lo = 1.90821492927058770002e-10;   // 0x3dea39ef35793c76
constexpr double kShift = 0x1.8p52;                     // x + kShift - kShift rounds x to an integer
constexpr double P1 = 1.66666666666666019037e-01, P2 = -2.77777777770155933842e-03,
                 P3 = 6.61375632143793436117e-05, P4 = -1.65339022054652515390e-06,
                 P5 = 4.13813679705723846039e-08;
// Inside [kFastLo, kFastHi] the result is 2^k times y in [ln2/2, 2 ln2) with 2^k a normal
// double (-1022 <= k <= 1023); outside it (and for NaN) det_exp takes the careful path.
constexpr double kFastLo = -708.0, kFastHi = 709.0;
constexpr double kOverflow = 7.09782712893383973096e+02, kUnderflow = -7.45133219101941108420e+02;

// e^r for x = k ln2 + r: y ~ e^r, k as a double, and t = x / ln2 + 1.5 * 2^52, whose low
// bits hold k (two's complement). One formula for a double and a vector of four, so both
// give the same bits (by reference: a 32-byte vector by value has another ABI in the
// AVX2 clone).
template <class T>
inline __attribute__((always_inline)) void exp_reduced(const T& x, T& y, T& kd, T& t) {
  t = x * kInvLn2 + kShift;
  kd = t - kShift;
  const T hi = x - kd * kLn2Hi;
  const T lo = kd * kLn2Lo;
  const T r = hi - lo;
  const T rr = r * r;
  const T c = r - rr * (P1 + rr * (P2 + rr * (P3 + rr * (P4 + rr * P5))));
  y = 1.0 + (r * c / (2.0 - c) - lo + hi);
}

double pow2(int64_t k) {  // 2^k for -1022 <= k <= 1023
  const uint64_t bits = static_cast<uint64_t>(k + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// Every x, one at a time: NaN, overflow, subnormal and zero results included.
double exp_careful(double x) {
  if (x != x) return x + x;  // NaN, quieted
  if (x > kOverflow) return std::numeric_limits<double>::infinity();
  if (x < kUnderflow) return 0.0;
  double y, kd, t;
  exp_reduced(x, y, kd, t);
  const auto k = static_cast<int64_t>(kd);
  if (k > 1023) return y * pow2(k - 1) * 2.0;            // y 2^(k-1) is exact; the last step may overflow
  if (k < -1022) return y * pow2(k + 1000) * 0x1p-1000;  // exact, then one rounding into the subnormals
  return y * pow2(k);
}

}  // namespace

KVB_CLONES void det_exp_to(const double* x, double* out, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const V4 v = *reinterpret_cast<const V4u*>(x + i);
    const bool fast = v[0] >= kFastLo && v[0] <= kFastHi && v[1] >= kFastLo && v[1] <= kFastHi &&
                      v[2] >= kFastLo && v[2] <= kFastHi && v[3] >= kFastLo && v[3] <= kFastHi;
    if (!fast) {
      for (int j = 0; j < 4; ++j) out[i + j] = exp_careful(x[i + j]);
      continue;
    }
    V4 y, kd, t;
    exp_reduced(v, y, kd, t);
    // 2^k: k + 1023 in the exponent field, from the low bits of t (pow2(k) exactly).
    const V4 scale = reinterpret_cast<V4>((reinterpret_cast<I4>(t) + 1023) << 52);
    *reinterpret_cast<V4u*>(out + i) = y * scale;
  }
  for (; i < n; ++i) out[i] = exp_careful(x[i]);
}

void det_exp_inplace(double* x, int64_t n) { det_exp_to(x, x, n); }

double det_exp(double x) { return exp_careful(x); }

double det_log(double x) {
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  constexpr double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                   Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                   Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                   Lg7 = 1.479819860511658591e-01;
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  auto hx = static_cast<uint32_t>(u >> 32);
  int k = 0;
  if (hx < 0x00100000 || hx >> 31) {
    if (u << 1 == 0) return -std::numeric_limits<double>::infinity();  // log(+-0)
    if (hx >> 31) return std::numeric_limits<double>::quiet_NaN();     // log(x < 0), NaN with the sign bit
    k -= 54;                                                           // subnormal: scale up
    x *= 0x1p54;
    std::memcpy(&u, &x, sizeof u);
    hx = static_cast<uint32_t>(u >> 32);
  } else if (hx >= 0x7ff00000) {
    return x + x;  // +inf, NaN
  } else if (hx == 0x3ff00000 && (u << 32) == 0) {
    return 0;
  }
  // Reduce x into [sqrt(2)/2, sqrt(2)).
  hx += 0x3ff00000 - 0x3fe6a09e;
  k += static_cast<int>(hx >> 20) - 0x3ff;
  hx = (hx & 0x000fffff) + 0x3fe6a09e;
  u = static_cast<uint64_t>(hx) << 32 | (u & 0xffffffff);
  std::memcpy(&x, &u, sizeof x);
  const double f = x - 1.0;
  const double hfsq = 0.5 * f * f;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;
  const double dk = k;
  return s * (hfsq + R) + dk * ln2_lo - hfsq + f + dk * ln2_hi;
}

}  // namespace kvbench
