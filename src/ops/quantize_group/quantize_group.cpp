// kvbench.QuantizeGroup: x [rows, length] -> codes y, scale [rows, groups] and, when
// asymmetric, zero_point [rows, groups]. Groups run along the last axis; the last group
// of a row is shorter when group_size does not divide length.
#include "ops/quantize_group/quantize_group.hpp"

#include <cmath>

#include "core/rng.hpp"
#include "ops/quantize_group/group_params.hpp"
#include "ops/vulkan_io.hpp"
#include "ref/quant.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

struct QuantizePush {
  uint32_t rows, length, group_size, groups;
  uint32_t x_dtype, y_dtype, scale_dtype, has_zero_point;
  int32_t qmin, qmax;
};

class QuantizeGroupCase final : public OpCase {
 public:
  QuantizeGroupCase(const CaseDef& c, GroupParams p, DType x, DType scale)
      : def_(c), p_(p), x_(x), scale_(scale), range_(c.range("x", {-1, 1})) {}

  std::string describe() const override {
    return "x=" + shape_string({p_.rows, p_.length}) + " " + std::string(dtype_name(x_)) + " -> " +
           std::string(dtype_name(p_.code)) + " group_size=" + std::to_string(p_.group_size) +
           (p_.zero_point ? " asymmetric" : " symmetric") + " scale=" + std::string(dtype_name(scale_));
  }

  TensorSet make_tensors() const override {
    TensorSet ts;
    Tensor x("x", x_, {p_.rows, p_.length}, Role::input);
    CounterRng rng(def_.seed, "x");
    for (size_t i = 0; i < x.numel(); ++i) x.set(i, rng.uniform(i, range_.first, range_.second));
    ts.tensors.push_back(std::move(x));
    ts.tensors.emplace_back("y", p_.code, Shape{p_.rows, p_.length}, Role::output);
    ts.tensors.emplace_back("scale", scale_, Shape{p_.rows, p_.groups()}, Role::output);
    if (p_.zero_point) ts.tensors.emplace_back("zero_point", p_.code, Shape{p_.rows, p_.groups()}, Role::output);
    return ts;
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    const Tensor& x = in.at("x");
    Expected y{.tensor = "y"}, scale{.tensor = "scale"}, zp{.tensor = "zero_point"};
    y.tolerance = def_.tolerance("y", {});
    scale.tolerance = def_.tolerance("scale", {});
    zp.tolerance = def_.tolerance("zero_point", {});
    std::vector<double> row(static_cast<size_t>(p_.length));
    for (int64_t r = 0; r < p_.rows; ++r) {
      for (int64_t k = 0; k < p_.length; ++k) row[k] = x.get(static_cast<size_t>(r * p_.length + k));
      for (int64_t g = 0; g < p_.groups(); ++g) {
        const int64_t begin = g * p_.group_size, n = std::min(p_.group_size, p_.length - begin);
        GroupCodes q = p_.zero_point ? quantize_asymmetric(&row[begin], n, p_.qmin(), p_.qmax(), x_)
                                     : quantize_symmetric(&row[begin], n, p_.qmax(), x_);
        scale.value.push_back(round_to(scale_, q.scale));
        scale.exact.push_back(q.scale);
        zp.value.push_back(static_cast<double>(q.zero_point));
        for (int64_t k = 0; k < n; ++k) {
          y.value.push_back(q.code[k]);
          y.exact.push_back(row[begin + k] / q.scale + static_cast<double>(q.zero_point));
          y.alternate.push_back(q.alternate[k]);
        }
      }
    }
    zp.exact = zp.value;
    std::vector<Expected> out{std::move(y), std::move(scale)};
    if (p_.zero_point) out.push_back(std::move(zp));
    return out;
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    DeviceTensors dev(rt, io);
    QuantizePush push{static_cast<uint32_t>(p_.rows), static_cast<uint32_t>(p_.length),
                      static_cast<uint32_t>(p_.group_size), static_cast<uint32_t>(p_.groups()),
                      static_cast<uint32_t>(x_), static_cast<uint32_t>(p_.code), static_cast<uint32_t>(scale_),
                      p_.zero_point ? 1u : 0u, static_cast<int32_t>(p_.qmin()), static_cast<int32_t>(p_.qmax())};
    if (!p_.zero_point) push.qmin = -push.qmax;
    const auto invocations = static_cast<uint32_t>(p_.rows * p_.groups());
    const double ms = rt.dispatch("quantize_group",
                                  {dev.at("x"), dev.at("y"), dev.at("scale"),
                                   p_.zero_point ? dev.at("zero_point") : dev.placeholder()},
                                  push, (invocations + 63) / 64);
    dev.download(io);
    return ms;
  }

 private:
  CaseDef def_;
  GroupParams p_;
  DType x_, scale_;
  std::pair<double, double> range_;
};

class QuantizeGroupOperator final : public Operator {
 public:
  std::string id() const override { return "kvbench.QuantizeGroup"; }
  std::unique_ptr<OpCase> instantiate(const CaseDef& c) const override {
    GroupParams p = parse_group_params(c);
    if (!p.is_signed && !p.zero_point)
      c.fail("attributes", "signed", "unsigned codes need a zero point (set with_zero_point: true)");
    const DType x = c.dtype("x", DType::f16, {DType::f16, DType::bf16, DType::f32});
    const DType scale = c.dtype("scale", DType::f16, {DType::f16, DType::bf16, DType::f32});
    return std::make_unique<QuantizeGroupCase>(c, p, x, scale);
  }
};

}  // namespace

std::unique_ptr<Operator> make_quantize_group_operator() { return std::make_unique<QuantizeGroupOperator>(); }

}  // namespace kvbench
