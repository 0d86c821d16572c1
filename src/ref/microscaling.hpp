#pragma once
// Block-scaled codes (specs/quantize-group.md "Microscaling, NVFP4 and HiF8 codes"): OCP MX
// v1.0 blocks of 32 under an E8M0 scale, NVIDIA's NVFP4 (E2M1 under an E4M3 scale per 16 and
// an f32 global scale), and HiF8 under an f32 scale. The element codes are held as their
// values (GroupCodes::code), with the alternate a permitted implementation may produce.
#include <cstddef>

#include "core/float_format.hpp"
#include "ref/quant.hpp"

namespace kvbench {

// An MX element format: an FP8, a small float, or MXINT8 (an i8 code worth code * 2^-6).
struct MxElement {
  enum class Kind { fp8, small_float, int8 } kind = Kind::fp8;
  Fp8 fp8 = Fp8::e4m3fn;
  SmallFloat small = SmallFloat::e2m1;
  // emax_elem, the exponent of the element format's largest normal: E4M3 8, E5M2 15, E3M2 4,
  // E2M3 2, E2M1 2, INT8 0.
  int emax() const;
  double largest() const;  // 448, 57344, 28, 7.5, 6, 127/64
};

// OCP MX's shared exponent: floor(log2 amax) - emax_elem, at least -127 (E8M0's smallest);
// amax = 0 counts as 2^-126 (Microsoft's microxcaling, mx/mx_ops.py `_shared_exponents`).
int mx_shared_exponent(double amax, int emax);

struct MxFault {
  bool exponent_plus_one = false;  // the shared exponent one too large (codes halved)
};
// One block: g.scale = 2^shared, each code the element nearest x / 2^shared (ties to even,
// saturating at the largest magnitude; MXINT8: rne(64 x / 2^shared) clamped to [-127, 127]);
// at an exact tie the other neighbour is the alternate (microxcaling rounds half away from
// zero). A block holding NaN or infinity throws std::runtime_error: its scale is NaN and the
// specification leaves its codes free.
void quantize_mx(const double* x, size_t n, MxElement e, GroupCodes& g, MxFault fault = {});

struct Nvfp4Fault {
  bool global_scale_dropped = false;  // the block scale from amax / 6 alone, codes x / scale
};
// One NVFP4 block of 16 under the global scale gs (TensorRT-LLM and vLLM's
// cvt_warp_fp16_to_fp4): sf = e4m3_sat(gs * amax / 6), g.scale = sf; codes e2m1_sat(x * gs /
// sf) (0 where sf = 0). The engines compute gs * amax / 6 and gs / sf with approximate
// reciprocals, so both roundings take boundary alternates (2^-20 relative): the scale's in
// g.scale_alternate, and a group whose sf has one gets, as its codes' alternates, the codes
// under the other sf.
void quantize_nvfp4(const double* x, size_t n, double global_scale, GroupCodes& g, Nvfp4Fault fault = {});

// HiF8 codes under an f32 scale, the FP8 rule with HiF8's conversion: s = max(f32(amax /
// divisor), f32(1 / (32768 * 512))); q = hif8_sat(f32(x / s)) by TA rounding.
void quantize_hif8(const double* x, size_t n, double divisor, GroupCodes& g);
double hif8_scale_floor();

}  // namespace kvbench
