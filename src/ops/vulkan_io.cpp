#include "ops/vulkan_io.hpp"

#include <stdexcept>

namespace kvbench {

DeviceTensors::DeviceTensors(Runtime& rt, const TensorSet& io) : rt_(rt) {
  for (const auto& t : io.tensors) {
    auto b = rt.buffer(t.bytes().size());
    b->upload(t.bytes());
    buffers_[t.name()] = std::move(b);
  }
}

Buffer* DeviceTensors::at(const std::string& name) {
  auto it = buffers_.find(name);
  if (it == buffers_.end()) throw std::logic_error("no device buffer for tensor " + name);
  return it->second.get();
}

Buffer* DeviceTensors::placeholder() {
  if (!placeholder_) placeholder_ = rt_.buffer(4);
  return placeholder_.get();
}

void DeviceTensors::download(TensorSet& io) const {
  for (auto& t : io.tensors)
    if (t.role() != Role::input) buffers_.at(t.name())->download(t.bytes());
}

}  // namespace kvbench
