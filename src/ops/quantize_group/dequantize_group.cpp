// kvbench.DequantizeGroup: codes x [rows, length] with scale [rows, groups] (and a
// zero_point or offset [rows, groups]) -> y [rows, length], by one of three formulas:
//   ppl:    y = out(S(q * s))
//   onednn: y = out(f32((q - zero_point) * s))
//   ascend: y = out(f32(f32(q + offset) * s))
// FP8 codes take no zero point or offset: out(S(q * s)) (ppl) or out(f32(q * s)).
#include <cmath>

#include "core/rng.hpp"
#include "ops/quantize_group/group_params.hpp"
#include "ops/quantize_group/quantize_group.hpp"
#include "ops/vulkan_io.hpp"
#include "core/float_format.hpp"
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
    s.push_back({"y", y_, xs});
    return s;
  }

  void fill(Tensor& t) const override {
    const CounterRng rng(args().seed(), t.name());
    if (t.name() == "x" && p_.fp8) {  // every code, NaN and infinities included, equally often
      for (size_t i = 0; i < t.numel(); ++i) t.set_bits(i, static_cast<uint64_t>(rng.integer(i, 0, 255)));
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
    for (int64_t r = 0; r < p_.rows; ++r)
      for (int64_t k = 0; k < p_.length; ++k) {
        const size_t i = static_cast<size_t>(r * p_.length + k);
        const size_t g = fault_is("group_index_flat")
                             ? i / static_cast<size_t>(p_.group_size)
                             : static_cast<size_t>(r * p_.groups() + k / p_.group_size);
        const bool swap = fault_is("int4_nibble_swap") && p_.bits == 4 && (i ^ 1) < x.numel();
        const double q = p_.fp8 ? fp8_code_value(x.bits(i)) : x.get(swap ? i ^ 1 : i), s = scale.get(g);
        const double shift = has_shift() ? in.at(shift_name()).get(g) : 0.0;
        // exact: every rounding of the formula but the last, to y's dtype.
        double exact = 0;
        if (p_.fp8) {
          exact = formula_ == Formula::ppl ? round_to(scale_, q * s) : round_f32(q * s);
          y.push_back(exact);
          continue;
        }
        switch (formula_) {
          case Formula::ppl:
            exact = round_to(fault_is("ppl_product_f32") ? DType::f32 : scale_, q * s);
            break;
          case Formula::onednn:
            exact = fault_is("zero_point_after_scale") ? round_f32(round_f32(q * s) - shift)
                                                       : round_f32((q - shift) * s);
            break;
          case Formula::ascend:
            exact = round_f32(round_f32(q + (fault_is("offset_subtracted") ? -shift : shift)) * s);
            break;
        }
        y.push_back(exact);
      }
    return expected_list(Expected::rounded(in.at("y"), std::move(y)));
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    Batch batch(rt);
    DeviceTensors dev(batch, io, args().signature());
    KernelBuffers buffers = dev.bindings();
    buffers["shift"] = has_shift() ? dev.at(shift_name()) : nullptr;  // zero_point or offset
    const KernelParams params{{"rows", p_.rows},
                              {"row_length", p_.length},
                              {"group_size", p_.group_size},
                              {"groups", p_.groups()},
                              {"x_dtype", static_cast<uint32_t>(p_.code)},
                              {"y_dtype", static_cast<uint32_t>(y_)},
                              {"scale_dtype", static_cast<uint32_t>(scale_)},
                              {"shift_dtype", static_cast<uint32_t>(shift_)},
                              {"formula", static_cast<uint32_t>(formula_)},
                              {"has_shift", has_shift()}};
    const auto n = static_cast<uint32_t>(p_.rows * p_.length);
    batch.dispatch_invocations("dequantize_group", buffers, params, n);
    dev.download(io);
    return batch.submit();
  }

 private:
  // An FP8 code's value, or the value a faulty decoder makes of it.
  double fp8_code_value(uint64_t bits) const {
    const double v = fp8_value(*p_.fp8, static_cast<unsigned>(bits));
    if (fault_is("fp8_e4m3_with_infinities") && *p_.fp8 == Fp8::e4m3fn) return e4m3fn_read_as_ieee(v);
    return fault_is("fp8_bias_off_by_one") ? v / 2 : v;  // bias + 1: every value halved
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
                   .dtype_rule = "s4/i8/u4/u8 by bits and signed; f8e4m3fn/f8e5m2 by code_format"},
                  {.name = "scale",
                   .shape = "[rows, groups]",
                   .choices = {DType::f16, DType::bf16, DType::f32},
                   .dtype_rule = "S: f16 (default; FP8 codes: f32), bf16 or f32",
                   .range = {{1.0 / 64, 1.0 / 4}}},
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
          .from_files = {"x", "scale", "zero_point", "offset"},
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
                  {"int4_nibble_swap", "int4 codes read with the two nibbles of each byte swapped", ""},
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
    const DType scale = a.dtype("scale", p.fp8 ? DType::f32 : DType::f16);
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
