#pragma once
// A stub case for tests that need an OpCase of their own: it copies input x (f32 [4],
// 0, 1.5, 3, 4.5) to output y; a test gives it the run_vulkan it needs.
#include <string>

#include "ops/operator.hpp"

class CopyStub : public kvbench::OpCase {
 public:
  explicit CopyStub(const std::string& name)
      : OpCase(kvbench::Args(kvbench::CaseDef{.file = "stub.json", .name = name, .op = "stub"}, signature(),
                             {})) {}
  std::string describe() const override { return "stub copy"; }
  std::vector<kvbench::TensorSpec> tensor_specs() const override {
    return {{"x", kvbench::DType::f32, {4}}, {"y", kvbench::DType::f32, {4}}};
  }
  void fill(kvbench::Tensor& x) const override {
    for (size_t i = 0; i < 4; ++i) x.set(i, 1.5 * static_cast<double>(i));
  }
  std::vector<kvbench::Expected> reference(const kvbench::TensorSet& in) const override {
    const std::vector<double> x = in.at("x").values();
    return kvbench::expected_list(kvbench::Expected::output(in.at("y"), x, x));
  }

 private:
  static const kvbench::Signature& signature() {
    static const kvbench::Signature sig{
        .id = "stub",
        .tensors = {{.name = "x", .dtype_rule = "f32"},
                    {.name = "y", .role = kvbench::Role::output, .dtype_rule = "f32"}}};
    return sig;
  }
};
