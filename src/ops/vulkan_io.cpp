#include "ops/vulkan_io.hpp"

#include <stdexcept>

namespace kvbench {

DeviceTensors::DeviceTensors(Batch& batch, const TensorSet& io, const Signature& sig) : batch_(batch) {
  for (const auto& t : io.tensors) {
    auto b = batch.runtime().buffer(t.bytes().size());
    batch.upload(*b, t.bytes());
    buffers_[t.name()] = std::move(b);
  }
  for (const auto& d : sig.tensors)
    if (!io.has(d.name)) absent_.push_back(d.name);
}

Buffer* DeviceTensors::at(const std::string& name) {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw std::logic_error("no device buffer for tensor " + name);
  return it->second.get();
}

KernelBuffers DeviceTensors::bindings() const {
  KernelBuffers b;
  for (const auto& [name, buffer] : buffers_) b[name] = buffer.get();
  for (const auto& name : absent_) b[name] = nullptr;
  return b;
}

void DeviceTensors::download(TensorSet& io) const {
  for (auto& t : io.tensors)
    if (t.role() != Role::input) batch_.download(*buffers_.at(t.name()), t.bytes());
}

}  // namespace kvbench
