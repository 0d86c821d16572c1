#pragma once
// Device copies of a case's tensors: one storage buffer per tensor, their uploads recorded
// in the case's batch on construction; download() records the copies back of outputs and
// in-place tensors, which land in the tensors when the batch is submitted.
#include <map>
#include <memory>
#include <string>

#include "ops/operator.hpp"
#include "vk/runtime.hpp"

namespace kvbench {

class DeviceTensors {
 public:
  DeviceTensors(Batch& batch, const TensorSet& io, const Signature& sig);
  Buffer* at(const std::string& name);
  // Every tensor's buffer by its name, and nullptr (a placeholder binding) for each
  // declared tensor this case leaves out: the one place absent optional inputs are bound.
  KernelBuffers bindings() const;
  // Records the downloads of every output and in-place tensor into `io`: `io` holds them
  // once the batch is submitted (and must live until then).
  void download(TensorSet& io) const;

 private:
  Batch& batch_;
  std::map<std::string, std::unique_ptr<Buffer>> buffers_;
  std::vector<std::string> absent_;
};

}  // namespace kvbench
