// kvbench.DequantizeGroup: codes x [rows, length] with scale [rows, groups] (and a
// zero_point or offset [rows, groups]) -> y [rows, length], by one of three formulas:
//   ppl:    y = out(S(q * s))
//   onednn: y = out(f32((q - zero_point) * s))
//   ascend: y = out(f32(f32(q + offset) * s))
#include <cmath>

#include "core/rng.hpp"
#include "ops/quantize_group/group_params.hpp"
#include "ops/quantize_group/quantize_group.hpp"
#include "ops/vulkan_io.hpp"
#include "ref/quant.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

enum class Formula : uint32_t { ppl = 0, onednn = 1, ascend = 2 };

struct DequantizePush {
  uint32_t rows, length, group_size, groups;
  uint32_t x_dtype, y_dtype, scale_dtype, shift_dtype;
  uint32_t formula, has_shift;
};

class DequantizeGroupCase final : public OpCase {
 public:
  DequantizeGroupCase(const CaseDef& c, GroupParams p, Formula f, DType scale, DType shift, DType y)
      : def_(c), p_(p), formula_(f), scale_(scale), shift_(shift), y_(y) {}

  const char* shift_name() const { return formula_ == Formula::onednn ? "zero_point" : "offset"; }
  bool has_shift() const { return p_.zero_point; }

  std::string describe() const override {
    static const char* names[] = {"ppl", "onednn", "ascend"};
    return "x=" + shape_string({p_.rows, p_.length}) + " " + std::string(dtype_name(p_.code)) + " -> " +
           std::string(dtype_name(y_)) + " formula=" + names[static_cast<int>(formula_)] +
           " group_size=" + std::to_string(p_.group_size) + " scale=" + std::string(dtype_name(scale_)) +
           (has_shift() ? std::string(" ") + shift_name() + "=" + std::string(dtype_name(shift_)) : "");
  }

  TensorSet make_tensors() const override {
    TensorSet ts;
    const Shape xs{p_.rows, p_.length}, gs{p_.rows, p_.groups()};
    Tensor x("x", p_.code, xs, Role::input);
    CounterRng xr(def_.seed, "x");
    // PPL codes are symmetric ([-qmax, qmax]); the others use the dtype's full range.
    const int64_t lo = formula_ == Formula::ppl ? -p_.qmax() : p_.qmin();
    for (size_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(xr.integer(i, lo, p_.qmax())));
    Tensor scale("scale", scale_, gs, Role::input);
    const auto sr = def_.range("scale", {1.0 / 64, 1.0 / 4});
    CounterRng srng(def_.seed, "scale");
    for (size_t i = 0; i < scale.numel(); ++i) scale.set(i, srng.uniform(i, sr.first, sr.second));
    ts.tensors = {std::move(x), std::move(scale)};
    if (has_shift()) {
      Tensor shift(shift_name(), shift_, gs, Role::input);
      CounterRng rr(def_.seed, shift_name());
      for (size_t i = 0; i < shift.numel(); ++i) {
        if (formula_ == Formula::ascend) {
          const auto r = def_.range("offset", {-4, 4});
          shift.set(i, rr.uniform(i, r.first, r.second));
        } else {
          const int64_t zlo = shift_ == DType::i32 ? -300 : dtype_int_min(shift_);
          const int64_t zhi = shift_ == DType::i32 ? 300 : dtype_int_max(shift_);
          shift.set(i, static_cast<double>(rr.integer(i, zlo, zhi)));
        }
      }
      ts.tensors.push_back(std::move(shift));
    }
    ts.tensors.emplace_back("y", y_, xs, Role::output);
    return ts;
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const Tensor& x = in.at("x");
    const Tensor& scale = in.at("scale");
    Expected y{.tensor = "y"};
    y.tolerance = def_.tolerance("y", {});
    for (int64_t r = 0; r < p_.rows; ++r)
      for (int64_t k = 0; k < p_.length; ++k) {
        const size_t i = static_cast<size_t>(r * p_.length + k);
        const size_t g = static_cast<size_t>(r * p_.groups() + k / p_.group_size);
        const double q = x.get(i), s = scale.get(g);
        const double shift = has_shift() ? in.at(shift_name()).get(g) : 0.0;
        double v = 0, exact = 0;
        switch (formula_) {
          case Formula::ppl: v = dequant_ppl(q, s, scale_, y_); exact = q * s; break;
          case Formula::onednn: v = dequant_zero_point(q, shift, s, y_); exact = (q - shift) * s; break;
          case Formula::ascend: v = dequant_offset(q, shift, s, y_); exact = (q + shift) * s; break;
        }
        y.value.push_back(v);
        y.exact.push_back(exact);
      }
    return {std::move(y)};
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    DeviceTensors dev(rt, io);
    DequantizePush push{static_cast<uint32_t>(p_.rows), static_cast<uint32_t>(p_.length),
                        static_cast<uint32_t>(p_.group_size), static_cast<uint32_t>(p_.groups()),
                        static_cast<uint32_t>(p_.code), static_cast<uint32_t>(y_), static_cast<uint32_t>(scale_),
                        static_cast<uint32_t>(shift_), static_cast<uint32_t>(formula_), has_shift() ? 1u : 0u};
    const auto n = static_cast<uint32_t>(p_.rows * p_.length);
    const double ms = rt.dispatch("dequantize_group",
                                  {dev.at("x"), dev.at("scale"), has_shift() ? dev.at(shift_name()) : dev.placeholder(), dev.at("y")},
                                  push, (n + 63) / 64);
    dev.download(io);
    return ms;
  }

 private:
  CaseDef def_;
  GroupParams p_;
  Formula formula_;
  DType scale_, shift_, y_;
};

class DequantizeGroupOperator final : public Operator {
 public:
  std::string id() const override { return "kvbench.DequantizeGroup"; }
  std::unique_ptr<OpCase> instantiate(const CaseDef& c) const override {
    GroupParams p = parse_group_params(c);
    const std::string name = c.string("attributes", "formula");
    Formula f;
    if (name == "ppl") f = Formula::ppl;
    else if (name == "onednn") f = Formula::onednn;
    else if (name == "ascend") f = Formula::ascend;
    else c.fail("attributes", "formula", "formula must be ppl, onednn or ascend");
    if (f == Formula::ppl && (p.zero_point || !p.is_signed))
      c.fail("attributes", p.zero_point ? "with_zero_point" : "signed", "the ppl formula is symmetric: signed codes, no zero point");
    const DType scale = c.dtype("scale", DType::f16, {DType::f16, DType::bf16, DType::f32});
    const DType y = c.dtype("y", DType::f16, {DType::f16, DType::bf16, DType::f32});
    DType shift = scale;
    if (f == Formula::onednn) {
      shift = c.dtype("zero_point", p.code, {DType::s4, DType::u4, DType::i8, DType::u8, DType::i32});
    } else if (f == Formula::ascend) {
      shift = c.dtype("offset", scale, {DType::f16, DType::bf16, DType::f32});
    }
    return std::make_unique<DequantizeGroupCase>(c, p, f, scale, shift, y);
  }
};

}  // namespace

std::unique_ptr<Operator> make_dequantize_group_operator() { return std::make_unique<DequantizeGroupOperator>(); }

}  // namespace kvbench
