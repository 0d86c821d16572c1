// kvbench.QuantizeGroup: x [rows, length] -> codes y, scale [rows, groups] and, when
// asymmetric, zero_point [rows, groups]. Groups run along the last axis; the last group
// of a row is shorter when group_size does not divide length.
#include "ops/quantize_group/quantize_group.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <sstream>

#include "core/hifloat8.hpp"
#include "core/rng.hpp"
#include "ops/quantize_group/group_params.hpp"
#include "ops/vulkan_io.hpp"
#include "ref/microscaling.hpp"
#include "ref/quant.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

class QuantizeGroupCase final : public OpCase {
 public:
  QuantizeGroupCase(Args a, GroupParams p, DType x, DType scale, double divisor)
      : OpCase(std::move(a)), p_(p), x_(x), scale_(scale), divisor_(divisor) {}

  std::string describe() const override {
    return "x=" + shape_string({p_.rows, p_.length}) + " " + std::string(dtype_name(x_)) + " -> " +
           std::string(dtype_name(p_.code)) + " group_size=" + std::to_string(p_.group_size) +
           (p_.zero_point ? " asymmetric" : " symmetric") + " scale=" + std::string(dtype_name(scale_)) +
           (p_.family == CodeFamily::float8 ? " scale_divisor=" + (std::ostringstream() << divisor_).str()
                                            : "");
  }

  std::vector<TensorSpec> tensor_specs() const override {
    const Shape xs{p_.rows, p_.length}, gs{p_.rows, p_.groups()};
    std::vector<TensorSpec> s{{"x", x_, xs}, {"y", p_.code, xs}, {"scale", scale_, gs}};
    if (p_.zero_point) s.push_back({"zero_point", p_.code, gs});
    if (p_.family == CodeFamily::nvfp4) s.push_back({"global_scale", DType::f32, {1}});
    return s;
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const Tensor& x = in.at("x");
    // Values and exact values of y, scale and zero_point; y's boundary alternates.
    std::vector<double> y, y_exact, scale, scale_exact, zp, zp_exact;
    std::vector<Alternate> y_alternates;
    // The row and, for the fault last_group_reads_next_row, group_size elements past it.
    std::vector<double> row(static_cast<size_t>(p_.length + p_.group_size), 0.0);
    GroupCodes q;
    const QuantFault qf{.truncate = fault_is("quant_truncate"),
                        .scale_f32 = fault_is("scale_f32"),
                        .range_without_zero = fault_is("range_without_zero")};
    const Fp8QuantFault fp8_fault{.no_saturation = fault_is("fp8_saturation_dropped"),
                                  .scale_multiplied = fault_is("fp8_scale_multiplied")};
    const bool over_qmin = fault_is("symmetric_scale_over_qmin"),
               read_on = fault_is("last_group_reads_next_row");
    std::vector<double> scale_alternates(static_cast<size_t>(p_.rows * p_.groups()),
                                         std::numeric_limits<double>::quiet_NaN());
    const double global_scale = p_.family == CodeFamily::nvfp4 ? in.at("global_scale").get(0) : 0.0;
    for (int64_t r = 0; r < p_.rows; ++r) {
      const int64_t have = std::min<int64_t>(p_.length + (read_on ? p_.group_size : 0),
                                             static_cast<int64_t>(x.numel()) - r * p_.length);
      for (int64_t k = 0; k < have; ++k) row[k] = x.get(static_cast<size_t>(r * p_.length + k));
      for (int64_t g = 0; g < p_.groups(); ++g) {
        const int64_t begin = g * p_.group_size, n = std::min(p_.group_size, p_.length - begin);
        const int64_t seen = read_on ? std::min(p_.group_size, have - begin) : n;
        switch (p_.family) {
          case CodeFamily::float8:
            if (p_.hif8())
              quantize_hif8(&row[begin], seen, divisor_, q);
            else
              quantize_fp8(&row[begin], seen, *p_.fp8, divisor_, q, fp8_fault);
            break;
          case CodeFamily::mx:
            for (int64_t k = begin; k < begin + seen; ++k)
              if (!std::isfinite(row[k]))
                throw std::runtime_error("x[" + std::to_string(r) + ", " + std::to_string(k) +
                                         "] is NaN or infinite: an MX block holding one has a NaN scale "
                                         "and codes the specification leaves free (check the input file)");
            quantize_mx(&row[begin], seen, p_.mx, q,
                        {.exponent_plus_one = fault_is("mx_scale_exponent_plus_one")});
            break;
          case CodeFamily::nvfp4:
            quantize_nvfp4(&row[begin], seen, global_scale, q,
                           {.global_scale_dropped = fault_is("nvfp4_global_scale_dropped")});
            break;
          case CodeFamily::integer:
            if (p_.zero_point)
              quantize_asymmetric(&row[begin], seen, p_.qmin(), p_.qmax(), x_, q, qf);
            else
              quantize_symmetric(&row[begin], seen, p_.qmax() + (over_qmin ? 1 : 0), x_, q, qf);
            for (double& c : q.code) c = std::min(c, static_cast<double>(p_.qmax()));
            break;
        }
        if (!std::isnan(q.scale_alternate)) scale_alternates[scale.size()] = q.scale_alternate;
        scale.push_back(round_to_scale(q.scale));
        scale_exact.push_back(q.scale);
        zp.push_back(static_cast<double>(q.zero_point));
        zp_exact.push_back(q.zero_point_exact);
        for (int64_t k = 0; k < n; ++k) {
          if (!std::isnan(q.alternate[k])) y_alternates.push_back({y.size(), q.alternate[k]});
          y.push_back(q.code[k]);
          y_exact.push_back(q.quotient[k]);
        }
      }
    }
    if (fault_is("fp4_nibbles_swapped") && p_.bits == 4) swap_nibbles(y, y_alternates);
    Expected y_golden = Expected::output(in.at("y"), y, std::move(y_exact));
    for (const Alternate& a : y_alternates) y_golden.set_alternate(a.index, a.value);
    Expected scale_golden = Expected::output(in.at("scale"), scale, std::move(scale_exact));
    for (size_t i = 0; i < scale_alternates.size(); ++i)
      if (!std::isnan(scale_alternates[i])) scale_golden.set_alternate(i, scale_alternates[i]);
    std::vector<Expected> out = expected_list(y_golden, scale_golden);
    if (p_.zero_point) out.push_back(Expected::output(in.at("zero_point"), zp, std::move(zp_exact)));
    return out;
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    Batch batch(rt);
    DeviceTensors dev(batch, io, args().signature());
    const KernelParams params{{"rows", p_.rows},
                              {"row_length", p_.length},
                              {"group_size", p_.group_size},
                              {"groups", p_.groups()},
                              {"x_dtype", static_cast<uint32_t>(x_)},
                              {"y_dtype", static_cast<uint32_t>(p_.code)},
                              {"scale_dtype", static_cast<uint32_t>(scale_)},
                              {"has_zero_point", p_.zero_point},
                              {"code_family", static_cast<uint32_t>(p_.family)},
                              {"qmin", p_.family != CodeFamily::integer ? 0
                                       : p_.zero_point                  ? p_.qmin()
                                                                        : -p_.qmax()},
                              {"qmax", p_.family != CodeFamily::integer ? 0 : p_.qmax()},
                              {"mx_emax", p_.family == CodeFamily::mx ? p_.mx.emax() : 0},
                              {"fp8_divisor", static_cast<float>(divisor_)},
                              {"fp8_scale_floor", static_cast<float>(p_.hif8() ? hif8_scale_floor()
                                                                     : p_.fp8  ? fp8_scale_floor(*p_.fp8)
                                                                               : 0.0)}};
    const auto invocations = static_cast<uint32_t>(p_.rows * p_.groups());
    batch.dispatch_invocations("quantize_group", dev.bindings(), params, invocations);
    dev.download(io);
    return batch.submit();
  }

 private:
  // A scale's value in the scale tensor's dtype (E8M0 and E4M3 scales are exact already).
  double round_to_scale(double s) const {
    return scale_ == DType::f16 || scale_ == DType::bf16 || scale_ == DType::f32 ? round_to(scale_, s) : s;
  }
  // The fault fp4_nibbles_swapped: each byte's two codes written the other way round.
  static void swap_nibbles(std::vector<double>& y, std::vector<Alternate>& alternates) {
    for (size_t i = 0; i + 1 < y.size(); i += 2) std::swap(y[i], y[i + 1]);
    for (Alternate& a : alternates)
      if ((a.index ^ 1) < y.size()) a.index ^= 1;
  }

  GroupParams p_;
  DType x_, scale_;
  double divisor_;  // FP8 and HiF8: s = max|x| / divisor
};

class QuantizeGroupOperator final : public Operator {
 public:
  const Signature& signature() const override {
    static const Signature sig{
        .id = "kvbench.QuantizeGroup",
        .doc =
            "x [rows, length] -> codes y, scale and (asymmetric) zero_point per group along the row "
            "(specs/quantize-group.md)",
        .params =
            [] {
              std::vector<Param> p = group_params_declared();
              p.push_back(
                  {.section = "attributes",
                   .name = "scale_divisor",
                   .type = ParamType::number,
                   .derived = "FP8 and HiF8 codes: the format's largest value (448, 57344, 32768)",
                   .min = 1,
                   .doc = "FP8 and HiF8 codes: s = max|x| / scale_divisor (vLLM's KV cache: 200 for K, 100 "
                          "for V; above the format's largest value, the largest |x| saturate)"});
              return p;
            }(),
        .tensors =
            {
                {.name = "x",
                 .shape = "[rows, length]",
                 .choices = {DType::f16, DType::bf16, DType::f32},
                 .dtype_rule = "T: f16 (default), bf16 or f32; the compute dtype",
                 .range = {{-1, 1}}},
                {.name = "y",
                 .role = Role::output,
                 .shape = "[rows, length]",
                 .dtype_rule = "s4/i8/u4/u8 by bits and signed; by code_format: f8e4m3fn, f8e5m2, "
                               "hifloat8, f6e2m3, f6e3m2, f4e2m1 (two a byte, even index in the low nibble), "
                               "i8 (MXINT8: code * 2^-6)"},
                {.name = "scale",
                 .role = Role::output,
                 .shape = "[rows, groups]",
                 .choices = {DType::f16, DType::bf16, DType::f32, DType::f8e8m0, DType::f8e4m3fn},
                 .dtype_rule = "integer codes: f16 (default), bf16 or f32; FP8 and HiF8: f32; MX: f8e8m0; "
                               "nvfp4: f8e4m3fn"},
                {.name = "zero_point",
                 .role = Role::output,
                 .shape = "[rows, groups]",
                 .dtype_rule = "= y",
                 .present = "with_zero_point"},
                {.name = "global_scale",
                 .shape = "[1]",
                 .choices = {DType::f32},
                 .dtype_rule = "f32: NVFP4's per-tensor scale gs (448 * 6 / max|x| of the tensor), which "
                               "multiplies: block scale e4m3(gs * amax / 6), codes e2m1(x * gs / scale)",
                 .range = {{1000, 2688}},
                 .present = "code_format nvfp4"},
            },
        .from_files = {"x", "global_scale"},
        .sizes = {"rows", "length", "group_size"},
        .faults =
            {
                {"quant_truncate",
                 "codes truncated toward zero (a C cast of x / s) instead of rounded to nearest even", ""},
                {"scale_f32", "the scale computed and applied in f32 where the compute dtype is f16 or bf16",
                 ""},
                {"range_without_zero",
                 "asymmetric range [min x, max x] without 0, as a plain min/max kernel computes it", ""},
                {"symmetric_scale_over_qmin",
                 "symmetric scale max|x| / |qmin| (128, 8) instead of / qmax, codes clamped to qmax", ""},
                {"fp8_saturation_dropped",
                 "FP8: x / s converted as torch's .to(float8) does, past the largest value NaN (E4M3FN) or "
                 "infinity (E5M2), where the rule saturates",
                 ""},
                {"fp8_scale_multiplied", "FP8: x * s where the rule divides, x / s", ""},
                {"last_group_reads_next_row",
                 "the row's last, partial group takes its scale over group_size elements, "
                 "reading on into the next row (no bounds check)",
                 ""},
                {"mx_scale_exponent_plus_one",
                 "MX: the shared exponent one too large (floor(log2 amax) - emax + 1), every code halved",
                 ""},
                {"nvfp4_global_scale_dropped",
                 "NVFP4: the block scale taken as e4m3(amax / 6) and the codes as x / scale, the global "
                 "scale never applied",
                 ""},
                {"fp4_nibbles_swapped", "4-bit codes packed with each byte's two codes the other way round",
                 ""},
            },
    };
    return sig;
  }

  std::unique_ptr<OpCase> instantiate(Args a) const override {
    GroupParams p = parse_group_params(a);
    if (!p.is_signed && !p.zero_point)
      a.fail("signed", "unsigned codes need a zero point (set with_zero_point: true)");
    const DType x = a.dtype("x", DType::f16);
    // Engines keep an FP8 cache's scales in f32 (the scale the codes were divided by); MX and
    // NVFP4 fix their scale's format.
    const DType scale = p.family == CodeFamily::integer
                            ? a.dtype("scale", DType::f16, {DType::f16, DType::bf16, DType::f32})
                            : a.dtype("scale", p.scale, {p.scale});
    double divisor = 0;
    if (p.family == CodeFamily::float8) {
      divisor = a.written("scale_divisor") ? a.number("scale_divisor")
                : p.hif8()                 ? kHif8MaxValue
                                           : fp8_max(*p.fp8);
      a.resolve("scale_divisor", divisor);
    } else if (a.written("scale_divisor")) {
      a.fail("scale_divisor",
             "scale_divisor is for FP8 and HiF8 codes (code_format f8e4m3fn, f8e5m2 or hif8)");
    }
    return std::make_unique<QuantizeGroupCase>(std::move(a), p, x, scale, divisor);
  }
};

}  // namespace

std::unique_ptr<Operator> make_quantize_group_operator() { return std::make_unique<QuantizeGroupOperator>(); }

}  // namespace kvbench
