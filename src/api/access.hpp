#pragma once
// The C++ library's public types (include/kvbench) over kvbench's own: how the API's
// sources reach the tensor inside an Array and the manifest inside a Golden.
#include <map>
#include <memory>

#include "core/tensor.hpp"
#include "golden/manifest.hpp"
#include "golden/safetensors.hpp"
#include "kvbench/golden.hpp"

namespace kvbench {

struct Array::Impl {
  Tensor tensor;
};

struct Golden::Impl {
  GoldenManifest manifest;
  std::unique_ptr<SafetensorsReader> data;
  std::map<std::string, Array> inputs;
};

struct ArrayAccess {
  static Array wrap(Tensor t) {
    Array a;
    a.impl_->tensor = std::move(t);
    return a;
  }
  static const Tensor& tensor(const Array& a) { return a.impl_->tensor; }
};

struct GoldenAccess {
  using Impl = Golden::Impl;
  static const Impl& of(const Golden& g) { return *g.impl_; }
};

}  // namespace kvbench
