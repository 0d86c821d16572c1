#pragma once
// Double-precision group quantization and dequantization, emulating every storage
// rounding the operator definitions make (see specs/quantize-group.md). Shared by the
// references of every operator that stores or reads quantized K/V.
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/dtype.hpp"
#include "core/float_format.hpp"

namespace kvbench {

[[noreturn]] void throw_not_float(DType t);
// x rounded to a float dtype (f16, bf16, f32).
inline double round_to(DType t, double x) {
  switch (t) {
    case DType::f16: return round_f16(x);
    case DType::bf16: return round_bf16(x);
    case DType::f32: return round_f32(x);
    default: throw_not_float(t);
  }
}
// round_to over a span, the dtype dispatched once (the loops vectorize).
inline void round_span(DType t, double* v, size_t n) {
  switch (t) {
    case DType::f16:
      for (size_t i = 0; i < n; ++i) v[i] = round_f16(v[i]);
      return;
    case DType::bf16:
      for (size_t i = 0; i < n; ++i) v[i] = round_bf16(v[i]);
      return;
    case DType::f32:
      for (size_t i = 0; i < n; ++i) v[i] = round_f32(v[i]);
      return;
    default: throw_not_float(t);
  }
}
// One unit in the last place of float dtype t at x.
double ulp_of(DType t, double x);

// fp16(1e-5) and friends: the smallest scale PPL allows, in the compute dtype.
double scale_floor(DType compute);

struct GroupCodes {
  double scale = 0;  // in the compute dtype (not yet rounded to the scale tensor's dtype)
  // A second scale a permitted implementation may produce (NVFP4's block scale at a rounding
  // boundary), or NaN.
  double scale_alternate = std::numeric_limits<double>::quiet_NaN();
  int64_t zero_point = 0;         // 0 for symmetric
  double zero_point_exact = 0;    // qmin - T(lo / s): the zero point before rne and clamp
  std::vector<double> code;       // the integer codes (a zero code is +0.0)
  std::vector<double> quotient;   // T(x / s) + zero point: each code before rne and clamp
  std::vector<double> alternate;  // NaN, or the neighbouring code accepted at a rounding boundary
  // n elements; the vectors keep their capacity, so one GroupCodes serves every group.
  void resize(size_t n) {
    code.resize(n);
    quotient.resize(n);
    alternate.resize(n);
  }
};

// The relative distance from a rounding decision within which a neighbouring code is also
// accepted: 2^-20 covers a kernel whose f32 division is off by a few ulp (Vulkan allows 2.5;
// CUDA's __hdiv and NVFP4's rcp.approx use approximate reciprocals) with room to spare, and
// is small enough that about one code in a million is a boundary code.
inline constexpr double kBoundaryEpsilon = 0x1p-20;

// code(quotient), and the neighbouring code when moving the exact quotient by
// kBoundaryEpsilon (relative) either way changes the result (else NaN).
template <typename Code>
std::pair<double, double> code_with_alternate(double quotient, Code code) {
  const double c = code(quotient);
  const double below = code(quotient * (1 - kBoundaryEpsilon));
  const double above = code(quotient * (1 + kBoundaryEpsilon));
  double alt = std::numeric_limits<double>::quiet_NaN();
  if (below != c)
    alt = below;
  else if (above != c)
    alt = above;
  return {c, alt};
}

// Kernel faults of a group quantizer (`kvbench coverage --faults`); all off for a golden.
struct QuantFault {
  bool truncate = false;            // codes truncated toward zero (a C cast) instead of rne
  bool scale_f32 = false;           // the scale computed and used in f32, not the compute dtype
  bool range_without_zero = false;  // asymmetric range [min x, max x], 0 not included
};

// PPL's symmetric rule (OpenPPL/ppl.pmx torch_function/KeyValueCache.py, quant()),
// generalised to any qmax:
//   s = max(T(max|x| / qmax), T(1e-5));  q = clamp(rne(T(x / s)), -qmax, qmax)
// where T() rounds to the compute dtype. The alternate code is offered when moving the
// exact quotient x/s by 2^-20 (relative) either way would change the code.
void quantize_symmetric(const double* x, size_t n, int64_t qmax, DType compute, GroupCodes& out,
                        QuantFault fault = {});
inline GroupCodes quantize_symmetric(const double* x, size_t n, int64_t qmax, DType compute) {
  GroupCodes g;
  quantize_symmetric(x, n, qmax, compute, g);
  return g;
}

// Asymmetric with a zero point over the full integer range [qmin, qmax]:
//   lo = min(min x, 0), hi = max(max x, 0)
//   s  = max(T(T(hi - lo) / (qmax - qmin)), T(1e-5))
//   zp = clamp(rne(qmin - T(lo / s)), qmin, qmax)
//   q  = clamp(rne(T(x / s)) + zp, qmin, qmax)
void quantize_asymmetric(const double* x, size_t n, int64_t qmin, int64_t qmax, DType compute,
                         GroupCodes& out, QuantFault fault = {});
inline GroupCodes quantize_asymmetric(const double* x, size_t n, int64_t qmin, int64_t qmax, DType compute) {
  GroupCodes g;
  quantize_asymmetric(x, n, qmin, qmax, compute, g);
  return g;
}

// Kernel faults of an FP8 quantizer; all off for a golden.
struct Fp8QuantFault {
  bool no_saturation = false;  // torch's `.to(float8_*)` after the division: past the largest value NaN / inf
  bool scale_multiplied = false;  // x * s where the rule divides, x / s
};

// FP8 codes with an f32 scale, as inference engines store an FP8 cache (vLLM
// csrc/quantization/fp8/nvidia/quant_utils.cuh: Quantize(x / scale), __NV_SATFINITE;
// TensorRT-LLM's MIN_SCALING_FACTOR, after FBGEMM's quantize.cu):
//   s = max(f32(max|x| / divisor), f32(1 / (fp8_max * 512)));  q = fp8_sat(f32(x / s))
// fp8_sat rounds to nearest even and saturates at +-fp8_max (NaN stays NaN). The codes are
// their values (a -0 code is -0.0); quotient holds f32(x / s); the alternate code is offered
// when moving the exact quotient by 2^-20 (relative) either way would change the code.
void quantize_fp8(const double* x, size_t n, Fp8 format, double divisor, GroupCodes& out,
                  Fp8QuantFault fault = {});
double fp8_scale_floor(Fp8 format);
// The fault fp8_e4m3_with_infinities: the value an IEEE-style E4M3 decoder makes of an
// E4M3FN code's value v (exponent 1111, E4M3FN's [256, 448], read as +-inf at 256 and NaN
// above); every other value unchanged.
inline double e4m3fn_read_as_ieee(double v) {
  const double a = std::fabs(v);
  return a == 256 ? std::copysign(kInf, v) : a > 256 ? std::numeric_limits<double>::quiet_NaN() : v;
}

// Dequantization formulas of the three source families; `out` is the output dtype.
// PPL:    y = out(S(q * s))            the product in the scale dtype S, then to out
// oneDNN: y = out(f32((q - zp) * s))   f32 arithmetic
// Ascend: y = out(f32(f32(q + offset) * s))
inline double dequant_ppl(double q, double s, DType scale_dtype, DType out) {
  return round_to(out, round_to(scale_dtype, q * s));
}
double dequant_zero_point(double q, double zp, double s, DType out);
inline double dequant_offset(double q, double offset, double s, DType out) {
  return round_to(out, round_f32(round_f32(q + offset) * s));
}

}  // namespace kvbench
