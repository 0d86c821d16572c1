// The generic phases of every case, driven by the operator's declaration.
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/operator.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

Tensor& TensorSet::at(const std::string& name) {
  for (auto& t : tensors)
    if (t.name() == name) return t;
  throw std::logic_error("no tensor named " + name);
}

const Tensor& TensorSet::at(const std::string& name) const { return const_cast<TensorSet*>(this)->at(name); }

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

Role OpCase::role(const std::string& tensor) const {
  const TensorDecl* d = args_.signature().tensor(tensor);
  if (!d) throw std::logic_error(args_.signature().id + ": tensor " + tensor + " is not declared");
  return d->role;
}

void OpCase::fill_uniform(Tensor& t, std::pair<double, double> range) const {
  const CounterRng rng(args_.seed(), t.name());
  for (size_t i = 0; i < t.numel(); ++i) t.set(i, rng.uniform(i, range.first, range.second));
}

void OpCase::fill_values(Tensor& t, const std::vector<int64_t>& values) {
  if (values.size() != t.numel()) throw std::logic_error("fill_values: " + t.name() + " has another element count");
  for (size_t i = 0; i < values.size(); ++i) t.set(i, static_cast<double>(values[i]));
}

void OpCase::fill(Tensor& t) const {
  const TensorDecl* d = args_.signature().tensor(t.name());
  if (!d || !d->range) throw std::logic_error(args_.signature().id + ": no way to fill tensor " + t.name());
  fill_uniform(t, args_.range(t.name()));
}

TensorSet OpCase::make_tensors() const {
  TensorSet ts;
  for (auto& spec : tensor_specs()) {
    Tensor t(spec.name, spec.dtype, spec.shape, role(spec.name));
    if (t.role() != Role::output) fill(t);
    ts.tensors.push_back(std::move(t));
  }
  return ts;
}

std::vector<Expected> OpCase::golden(const TensorSet& inputs) const {
  std::vector<Expected> out = reference(inputs);
  for (auto& e : out) {
    if (role(e.tensor) == Role::input) throw std::logic_error("the reference returned input " + e.tensor);
    const size_t n = inputs.at(e.tensor).numel();
    if (e.value.size() != n || e.exact.size() != n || (!e.alternate.empty() && e.alternate.size() != n) ||
        (!e.touched.empty() && e.touched.size() != n))
      throw std::logic_error("the reference's " + e.tensor + " does not have the tensor's element count");
    e.tolerance = args_.tolerance(e.tensor, default_tolerance(e.tensor));
  }
  return out;
}

std::optional<std::string> OpCase::skip_reason(const DeviceInfo& dev) const {
  for (const auto& spec : tensor_specs()) {
    const size_t numel = shape_numel(spec.shape);
    if (numel >= (size_t{1} << 32))
      return "tensor " + spec.name + " has " + std::to_string(numel) +
             " elements: kvbench's kernels index elements with 32-bit integers";
    const size_t bytes = (numel * dtype_bits(spec.dtype) + 7) / 8;
    if (bytes > dev.max_storage_buffer_range)
      return "tensor " + spec.name + " is " + std::to_string(bytes) + " bytes, over the maxStorageBufferRange (" +
             std::to_string(dev.max_storage_buffer_range) + " bytes) of " + dev.name;
  }
  try {
    check_device(dev);
  } catch (const SkipCase& skip) {
    return std::string(skip.what());
  }
  return std::nullopt;
}

nlohmann::json OpCase::resolved() const {
  nlohmann::json r = args_.resolved();
  r["dtypes"] = nlohmann::json::object();
  for (const auto& spec : tensor_specs()) r["dtypes"][spec.name] = dtype_name(spec.dtype);
  return r;
}

std::unique_ptr<OpCase> instantiate_case(const Operator& op, const CaseDef& def) {
  try {
    // A dtype, range or tolerance may name an optional tensor this expansion leaves out
    // (a sweep turns k_zero_point on and off): it is declared, so it is no typo, and the
    // resolved dtypes in the reports show which tensors the case had.
    return op.instantiate(Args(def, op.signature()));
  } catch (const CaseError&) {
    throw;
  } catch (const std::exception& e) {
    throw CaseError("", std::string("the case could not be instantiated: ") + e.what());
  }
}

}  // namespace kvbench
