// kvbench.DequantizeGroup: codes x [rows, length] with scale [rows, groups] (and a
// zero_point or offset [rows, groups]) -> y [rows, length], by one of three formulas:
//   ppl:    y = out(S(q * s))
//   onednn: y = out(f32((q - zero_point) * s))
//   ascend: y = out(f32(f32(q + offset) * s))
// FP8 and HiF8 codes take no zero point or offset: out(S(q * s)) (ppl) or out(f32(q * s)).
// MX codes (onednn): out(f32(v(q) * 2^(e - 127))) under an E8M0 scale e; NVFP4 (onednn):
// out(f32(f32(v(q) * sf) * tensor_scale)).
#include <cmath>

#include "core/rng.hpp"
#include "ops/quantize_group/group_params.hpp"
#include "ops/quantize_group/quantize_group.hpp"
#include "ops/vulkan_io.hpp"
#include "core/float_format.hpp"
#include "check/expected.hpp"
#include "ref/quant.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

enum class Formula : uint32_t { ppl = 0, onednn = 1, ascend = 2 };

class DequantizeGroupCase final : public OpCase {
 public:
  DequantizeGroupCase(Args a, GroupParams p, Formula f, DType scale, DType shift, DType y)
      : OpCase(std::move(a)), p_(p), formula_(f), scale_(scale), shift_(shift), y_(y) {}

  const char* shift_name() const { return formula_ == Formula::onednn ? "zero_point" : "offset"; }
  bool has_shift() const { return p_.zero_point; }

  std::string describe() const override {
    static const char* names[] = {"ppl", "onednn", "ascend"};
    return "x=" + shape_string({p_.rows, p_.length}) + " " + std::string(dtype_name(p_.code)) + " -> " +
           std::string(dtype_name(y_)) + " formula=" + names[static_cast<int>(formula_)] +
           " group_size=" + std::to_string(p_.group_size) + " scale=" + std::string(dtype_name(scale_)) +
           (has_shift() ? std::string(" ") + shift_name() + "=" + std::string(dtype_name(shift_)) : "");
  }

  std::vector<TensorSpec> tensor_specs() const override {
    const Shape xs{p_.rows, p_.length}, gs{p_.rows, p_.groups()};
    std::vector<TensorSpec> s{{"x", p_.code, xs}, {"scale", scale_, gs}};
    if (has_shift()) s.push_back({shift_name(), shift_, gs});
    if (p_.family == CodeFamily::nvfp4) s.push_back({"tensor_scale", DType::f32, {1}});
    s.push_back({"y", y_, xs});
    return s;
  }

  void fill(Tensor& t) const override {
    const CounterRng rng(args().seed(), t.name());
    if (t.name() == "x" && p_.family != CodeFamily::integer) {
      // Every code, NaN and infinities included, equally often (MXINT8: -128 too).
      const int64_t codes = int64_t{1} << p_.bits;
      for (size_t i = 0; i < t.numel(); ++i)
        t.set_bits(i, static_cast<uint64_t>(rng.integer(i, 0, codes - 1)));
    } else if (t.name() == "scale" && p_.family == CodeFamily::mx) {
      // 2^-10 .. 2^10, and about one group in 16 NaN (0xFF), whose elements are all NaN.
      for (size_t i = 0; i < t.numel(); ++i)
        t.set_bits(i, rng.integer(2 * i, 0, 15) == 0
                          ? 0xFFu
                          : static_cast<uint64_t>(rng.integer(2 * i + 1, 117, 137)));
    } else if (t.name() == "scale" && p_.family == CodeFamily::nvfp4) {
      // Every non-negative finite E4M3 code (the scale is unsigned in NVFP4): zero and subnormals too.
      for (size_t i = 0; i < t.numel(); ++i) t.set_bits(i, static_cast<uint64_t>(rng.integer(i, 0, 0x7E)));
    } else if (t.name() == "x") {
      // PPL codes are symmetric ([-qmax, qmax]); the others use the dtype's full range.
      const int64_t lo = formula_ == Formula::ppl ? -p_.qmax() : p_.qmin();
      for (size_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(rng.integer(i, lo, p_.qmax())));
    } else if (t.name() == "zero_point") {
      const int64_t zlo = shift_ == DType::i32 ? -300 : dtype_int_min(shift_);
      const int64_t zhi = shift_ == DType::i32 ? 300 : dtype_int_max(shift_);
      for (size_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(rng.integer(i, zlo, zhi)));
    } else {
      OpCase::fill(t);  // scale, offset: uniform over their ranges
    }
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const Tensor& x = in.at("x");
    const Tensor& scale = in.at("scale");
    std::vector<double> y;  // exact, before the rounding to y's dtype
    std::vector<Alternate> alternates;
    const double tensor_scale = p_.family == CodeFamily::nvfp4 ? in.at("tensor_scale").get(0) : 0.0;
    for (int64_t r = 0; r < p_.rows; ++r)
      for (int64_t k = 0; k < p_.length; ++k) {
        const size_t i = static_cast<size_t>(r * p_.length + k);
        const size_t g = fault_is("group_index_flat")
                             ? i / static_cast<size_t>(p_.group_size)
                             : static_cast<size_t>(r * p_.groups() + k / p_.group_size);
        const bool swap = fault_is("int4_nibble_swap") && p_.bits == 4 && (i ^ 1) < x.numel();
        const size_t src = swap ? i ^ 1 : i;
        if (p_.family == CodeFamily::integer) {
          y.push_back(
              integer_exact(x.get(src), scale.get(g), has_shift() ? in.at(shift_name()).get(g) : 0.0));
          continue;
        }
        const double v = code_value(x.bits(src));
        switch (p_.family) {
          case CodeFamily::float8: {  // exact: every rounding of the formula but the last, to y's dtype
            const double s = scale.get(g);
            y.push_back(formula_ == Formula::ppl ? round_to(scale_, v * s) : round_f32(v * s));
            break;
          }
          case CodeFamily::mx: y.push_back(round_f32(v * e8m0_scale(scale.bits(g)))); break;
          case CodeFamily::nvfp4: {
            const double sf = scale.get(g);  // v * sf is exact in f32: 2 and 4 significant bits
            if (fault_is("nvfp4_tensor_scale_dropped")) {
              y.push_back(round_f32(v * sf));
              break;
            }
            y.push_back(round_f32(round_f32(v * sf) * tensor_scale));
            // The scales multiplied first, then the code: a second rounding, also permitted.
            const double other = round_to(y_, round_f32(v * round_f32(sf * tensor_scale)));
            if (!same_bits(other, round_to(y_, y.back()))) alternates.push_back({i, other});
            break;
          }
          case CodeFamily::integer: break;
        }
      }
    Expected out = Expected::rounded(in.at("y"), std::move(y));
    for (const Alternate& a : alternates) out.set_alternate(a.index, a.value);
    return expected_list(out);
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    Batch batch(rt);
    DeviceTensors dev(batch, io, args().signature());
    KernelBuffers buffers = dev.bindings();
    buffers["shift"] = has_shift() ? dev.at(shift_name()) : nullptr;  // zero_point or offset
    buffers["tensor_scale"] = p_.family == CodeFamily::nvfp4 ? dev.at("tensor_scale") : nullptr;
    const KernelParams params{{"rows", p_.rows},
                              {"row_length", p_.length},
                              {"group_size", p_.group_size},
                              {"groups", p_.groups()},
                              {"x_dtype", static_cast<uint32_t>(p_.code)},
                              {"y_dtype", static_cast<uint32_t>(y_)},
                              {"scale_dtype", static_cast<uint32_t>(scale_)},
                              {"shift_dtype", static_cast<uint32_t>(shift_)},
                              {"formula", static_cast<uint32_t>(formula_)},
                              {"has_shift", has_shift()},
                              {"code_family", static_cast<uint32_t>(p_.family)}};
    const auto n = static_cast<uint32_t>(p_.rows * p_.length);
    batch.dispatch_invocations("dequantize_group", buffers, params, n);
    dev.download(io);
    return batch.submit();
  }

 private:
  // A float code's value (MXINT8: code * 2^-6), or the value a faulty decoder makes of it.
  double code_value(uint64_t bits) const {
    if (p_.hif8() && fault_is("hif8_read_as_e4m3"))
      return fp8_value(Fp8::e4m3fn, static_cast<unsigned>(bits));
    double v = p_.code_value(bits);
    if (p_.family == CodeFamily::mx && p_.mx.kind == MxElement::Kind::int8)
      return fault_is("mxint8_read_as_integer") ? v : v / 64;
    if (!p_.fp8) return v;
    if (fault_is("fp8_e4m3_with_infinities") && *p_.fp8 == Fp8::e4m3fn) v = e4m3fn_read_as_ieee(v);
    return fault_is("fp8_bias_off_by_one") ? v / 2 : v;  // bias + 1: every value halved
  }
  // An E8M0 scale's value, or what a faulty decoder makes of it.
  double e8m0_scale(uint64_t bits) const {
    if (bits == 0xFF && fault_is("e8m0_nan_not_propagated")) return std::ldexp(1.0, 128);
    return e8m0_value(static_cast<unsigned>(bits)) / (fault_is("e8m0_bias_off_by_one") ? 0.5 : 1.0);
  }
  // The integer formulas before the rounding to y's dtype.
  double integer_exact(double q, double s, double shift) const {
    switch (formula_) {
      case Formula::ppl: return round_to(fault_is("ppl_product_f32") ? DType::f32 : scale_, q * s);
      case Formula::onednn:
        return fault_is("zero_point_after_scale") ? round_f32(round_f32(q * s) - shift)
                                                  : round_f32((q - shift) * s);
      case Formula::ascend:
        return round_f32(round_f32(q + (fault_is("offset_subtracted") ? -shift : shift)) * s);
    }
    return 0;
  }

  GroupParams p_;
  Formula formula_;
  DType scale_, shift_, y_;
};

class DequantizeGroupOperator final : public Operator {
 public:
  const Signature& signature() const override {
    static const Signature sig = [] {
      Signature g{
          .id = "kvbench.DequantizeGroup",
          .doc =
              "codes x [rows, length] with scale (and zero_point or offset) per group -> y, by the ppl, "
              "onednn or "
              "ascend formula (specs/quantize-group.md)",
          .params = group_params_declared(),
          .tensors =
              {
                  {.name = "x",
                   .shape = "[rows, length]",
                   .dtype_rule =
                       "s4/i8/u4/u8 by bits and signed; by code_format: f8e4m3fn, f8e5m2, hifloat8, "
                       "f6e2m3, f6e3m2, f4e2m1, i8 (MXINT8: code * 2^-6)"},
                  {.name = "scale",
                   .shape = "[rows, groups]",
                   .choices = {DType::f16, DType::bf16, DType::f32, DType::f8e8m0, DType::f8e4m3fn},
                   .dtype_rule = "S: f16 (default; FP8 and HiF8 codes: f32), bf16 or f32; MX: f8e8m0; nvfp4: "
                                 "f8e4m3fn",
                   .range = {{1.0 / 64, 1.0 / 4}}},
                  {.name = "tensor_scale",
                   .shape = "[1]",
                   .choices = {DType::f32},
                   .dtype_rule = "f32: NVFP4's per-tensor decode scale (max|x| / (448 * 6), the quantizer's "
                                 "1 / global_scale)",
                   .range = {{1.0 / 2688, 1.0 / 1000}},
                   .present = "code_format nvfp4"},
                  {.name = "zero_point",
                   .shape = "[rows, groups]",
                   .choices = {DType::s4, DType::u4, DType::i8, DType::u8, DType::i32},
                   .dtype_rule = "s4/u4/i8/u8/i32, default = x",
                   .present = "formula onednn with with_zero_point"},
                  {.name = "offset",
                   .shape = "[rows, groups]",
                   .choices = {DType::f16, DType::bf16, DType::f32},
                   .dtype_rule = "f16/bf16/f32, default = scale",
                   .range = {{-4, 4}},
                   .present = "formula ascend with with_zero_point"},
                  {.name = "y",
                   .role = Role::output,
                   .shape = "[rows, length]",
                   .choices = {DType::f16, DType::bf16, DType::f32},
                   .dtype_rule = "f16 (default), bf16 or f32"},
              },
          .from_files = {"x", "scale", "zero_point", "offset", "tensor_scale"},
          .sizes = {"rows", "length", "group_size"},
          .faults =
              {
                  {"ppl_product_f32",
                   "ppl: q * s kept in f32 instead of rounded to the scale dtype S before y", ""},
                  {"zero_point_after_scale",
                   "onednn: q * s - zp instead of (q - zp) * s (zero point in the wrong order)", ""},
                  {"offset_subtracted", "ascend: (q - offset) * s instead of (q + offset) * s", ""},
                  {"fp8_e4m3_with_infinities",
                   "E4M3FN codes decoded as an IEEE-style format: exponent 1111 read as infinity (mantissa "
                   "0) or NaN, where E4M3FN has 256 to 448 there",
                   ""},
                  {"fp8_bias_off_by_one",
                   "FP8 codes decoded with the exponent bias one too large (values halved)", ""},
                  {"int4_nibble_swap",
                   "4-bit codes (int4, MXFP4, NVFP4) read with the two nibbles of each byte swapped", ""},
                  {"hif8_read_as_e4m3", "HiF8 codes decoded as FP8 E4M3FN", ""},
                  {"e8m0_nan_not_propagated", "MX: the E8M0 scale 0xFF read as 2^128, not NaN", ""},
                  {"e8m0_bias_off_by_one", "MX: the E8M0 scale read with bias 126 (every value doubled)", ""},
                  {"mxint8_read_as_integer", "MXINT8: the code taken as an integer, without its 2^-6", ""},
                  {"nvfp4_tensor_scale_dropped", "NVFP4: the per-tensor scale never applied", ""},
                  {"group_index_flat",
                   "the group of element (r, k) taken as (r * length + k) / group_size, wrong once a "
                   "row ends in a partial group",
                   ""},
              },
      };
      g.params.insert(
          g.params.begin(),
          Param{.section = "attributes",
                .name = "formula",
                .type = ParamType::string,
                .allowed = {"ppl", "onednn", "ascend"},
                .doc = "ppl: out(S(q*s)); onednn: out(f32((q-zp)*s)); ascend: out(f32(f32(q+offset)*s))"});
      return g;
    }();
    return sig;
  }

  std::unique_ptr<OpCase> instantiate(Args a) const override {
    GroupParams p = parse_group_params(a);
    const std::string name = a.string("formula");
    const Formula f = name == "ppl" ? Formula::ppl : name == "onednn" ? Formula::onednn : Formula::ascend;
    if (f == Formula::ppl && (p.zero_point || !p.is_signed))
      a.fail(p.zero_point ? "with_zero_point" : "signed",
             "the ppl formula is symmetric: signed codes, no zero point");
    if (p.family == CodeFamily::mx || p.family == CodeFamily::nvfp4) {
      if (f != Formula::onednn)
        a.fail("formula", "MX and NVFP4 codes dequantize by formula onednn: y = f32(value * scale)");
    }
    const bool float_scale = p.family == CodeFamily::integer || p.family == CodeFamily::float8;
    const DType scale = float_scale
                            ? a.dtype("scale", p.family == CodeFamily::integer ? DType::f16 : DType::f32,
                                      {DType::f16, DType::bf16, DType::f32})
                            : a.dtype("scale", p.scale, {p.scale});
    const DType y = a.dtype("y", DType::f16);
    DType shift = scale;
    if (f == Formula::onednn)
      shift = a.dtype("zero_point", p.code);
    else if (f == Formula::ascend)
      shift = a.dtype("offset", scale);
    return std::make_unique<DequantizeGroupCase>(std::move(a), p, f, scale, shift, y);
  }
};

}  // namespace

std::unique_ptr<Operator> make_dequantize_group_operator() {
  return std::make_unique<DequantizeGroupOperator>();
}

}  // namespace kvbench
