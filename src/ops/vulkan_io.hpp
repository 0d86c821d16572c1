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
  DeviceTensors(Runtime& rt, const TensorSet& io);
  Buffer* at(const std::string& name);
  // A tiny buffer for a binding the current variant of a shader does not use.
  Buffer* placeholder();
  void download(TensorSet& io) const;

 private:
  Runtime& rt_;
  std::map<std::string, std::unique_ptr<Buffer>> buffers_;
  std::unique_ptr<Buffer> placeholder_;
};

}  // namespace kvbench
