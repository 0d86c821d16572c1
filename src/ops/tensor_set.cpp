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

double OpCase::traffic_bytes(const TensorSet& io) const {
  double bytes = 0;
  for (const auto& t : io.tensors) bytes += static_cast<double>(t.bytes().size()) * (t.role() == Role::inplace ? 2 : 1);
  return bytes;
}

}  // namespace kvbench
