// kvbench::Array (include/kvbench/golden.hpp): a Tensor behind the public header.
#include <stdexcept>

#include "api/access.hpp"

namespace kvbench {

Array::Array() : impl_(std::make_unique<Impl>()) {}
Array::~Array() = default;
Array::Array(const Array& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
Array& Array::operator=(const Array& o) {
  if (this != &o) *impl_ = *o.impl_;
  return *this;
}
Array::Array(Array&&) noexcept = default;
Array& Array::operator=(Array&&) noexcept = default;

const std::string& Array::name() const { return impl_->tensor.name(); }
std::string Array::dtype() const { return std::string(dtype_name(impl_->tensor.dtype())); }
const std::vector<int64_t>& Array::shape() const { return impl_->tensor.shape(); }
size_t Array::size() const { return impl_->tensor.numel(); }

double Array::get(size_t flat) const {
  if (flat >= size())
    throw std::out_of_range(name() + ": element " + std::to_string(flat) + " of " + std::to_string(size()));
  return impl_->tensor.get(flat);
}

void Array::set(size_t flat, double value) {
  if (flat >= size())
    throw std::out_of_range(name() + ": element " + std::to_string(flat) + " of " + std::to_string(size()));
  impl_->tensor.set(flat, value);
}

std::vector<double> Array::values() const { return impl_->tensor.values(); }

void Array::set_values(std::span<const double> values) {
  if (values.size() != size())
    throw std::invalid_argument(name() + " has " + std::to_string(size()) + " elements, not " +
                                std::to_string(values.size()));
  impl_->tensor.set_range(0, values.size(), values.data());
}

std::span<const uint8_t> Array::bytes() const { return impl_->tensor.bytes(); }
std::span<uint8_t> Array::bytes() { return impl_->tensor.bytes(); }

double round_to(const std::string& dtype, double value) {
  const auto t = parse_dtype(dtype);
  if (!t) throw std::invalid_argument("unknown dtype '" + dtype + "'");
  Tensor one("round_to", *t, {}, Role::output);
  one.set(0, value);
  return one.get(0);
}

}  // namespace kvbench
