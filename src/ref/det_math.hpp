#pragma once
// exp and log with the same bits on every machine. glibc's std::exp/std::log pick an FMA
// code path at run time on CPUs that have FMA (ifunc), so their last bit may differ
// between machines; these use plain double additions, multiplications and divisions only
// (built with -ffp-contract=off), so each result is fixed by IEEE 754 alone. Both are
// within 1 ulp of the exact result (tests/test_det_math.cpp checks them against std::exp
// and std::log). Decision recorded in specs/golden-format.md, "Determinism".
#include <cstdint>

namespace kvbench {

// e^x: Cody-Waite reduction x = k ln2 + r (k = round(x / ln2), ln2 split in a 32-bit
// head and a tail) and fdlibm's rational approximation of e^r on |r| <= ln2/2, scaled by
// 2^k. exp(+-0) = 1, exp(-inf) = +0, exp(+inf) = +inf, NaN -> NaN, +inf past
// 709.78..., subnormal results rounded once, +0 below -745.13....
double det_exp(double x);

// x[i] = det_exp(x[i]) for i in [0, n), four at a time in vectors (the same operations,
// so the same bits as det_exp).
void det_exp_inplace(double* x, int64_t n);
// out[i] = det_exp(x[i]) for i in [0, n) (x and out the same array or apart).
void det_exp_to(const double* x, double* out, int64_t n);

// ln x: fdlibm's (musl's) log: x = 2^k (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)), then
// a polynomial in s = f / (2 + f). log(1) = +0, log(+-0) = -inf, log(x < 0) = NaN,
// log(+inf) = +inf, NaN -> NaN.
double det_log(double x);

}  // namespace kvbench
