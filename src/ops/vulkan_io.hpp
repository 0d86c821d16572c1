#pragma once
// Device copies of a case's tensors: one storage buffer per tensor, uploaded on
// construction; download() brings outputs and in-place tensors back.
#include <map>
#include <memory>
#include <string>

#include "ops/operator.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

class DeviceTensors {
 public:
  DeviceTensors(Runtime& rt, const TensorSet& io, const Signature& sig);
  Buffer* at(const std::string& name);
  // Every tensor's buffer by its name, and nullptr (a placeholder binding) for each
  // declared tensor this case leaves out: the one place absent optional inputs are bound.
  KernelBuffers bindings() const;
  void download(TensorSet& io) const;

 private:
  std::map<std::string, std::unique_ptr<Buffer>> buffers_;
  std::vector<std::string> absent_;
};

}  // namespace kvbench
