#include <stdexcept>

#include "ops/operator.hpp"

namespace kvbench {

Tensor& TensorSet::at(const std::string& name) {
  for (auto& t : tensors)
    if (t.name() == name) return t;
  throw std::logic_error("no tensor named " + name);
}

const Tensor& TensorSet::at(const std::string& name) const {
  return const_cast<TensorSet*>(this)->at(name);
}

bool TensorSet::has(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name() == name) return true;
  return false;
}

}  // namespace kvbench
