#pragma once
// A device buffer of the runtime (Runtime::buffer, Batch::buffer): its memory, its mapping in
// the zero-copy mode, and synchronous copies from and to the host (specs/runtime.md).
#include <cstddef>
#include <cstdint>
#include <span>

#ifndef VULKAN_HPP_NO_CONSTRUCTORS
#define VULKAN_HPP_NO_CONSTRUCTORS
#endif
#include <vulkan/vulkan_raii.hpp>

namespace kvbench {

class Runtime;
class Batch;

// What Runtime::buffer allocates for `bytes` (a multiple of 16): at least that, and of one
// class for every tensor: not a power of two, bits 8-15 not all zero, at most 256 bytes more.
// llvmpipe (lavapipe) keys the code it compiles for a pipeline on each texel view's buffer:
// on whether the buffer's size is a power of two, and on bits 8-15 of the view's size, which
// it reads through a union as a mip level (Mesa's lp_sampler_static_texture_state,
// gallivm/lp_bld_sample.c). With exact sizes one pipeline compiled anew for each class of
// shapes: FIA's suite made 62 compiles of its 45 pipelines. No operator reads or writes the
// padding (in the zero-copy mode Buffer zeroes it); maxStorageBufferRange (`most`) caps it,
// as every storage binding spans the whole buffer.
size_t allocation_size(size_t bytes, size_t most);

class Buffer {
 public:
  // Made by Runtime::buffer (and the runtime's staging and parameter buffers).
  // `allocation`: the VkBuffer's size when larger than `bytes` (Runtime::buffer's padding).
  Buffer(Runtime& rt, size_t bytes, uint32_t memory_type, bool mapped, size_t allocation = 0);
  ~Buffer();
  size_t size() const { return size_; }            // the bytes it holds for its tensor
  size_t allocated() const { return allocated_; }  // size() or more: what views and bindings span
  const vk::raii::Buffer& handle() const { return buffer_; }
  // Synchronous copies from and to the host, correct in both memory modes (a staged copy
  // is a batch of its own). Inside a case, prefer Batch::upload/download.
  void upload(std::span<const uint8_t> bytes);
  void download(std::span<uint8_t> bytes) const;

 private:
  friend class Runtime;
  friend class Batch;
  Runtime* rt_;
  size_t size_, allocated_;
  // Members are destroyed in reverse order: the buffer before the memory bound to it (the
  // validation layer reports a memory freed under a live buffer).
  vk::raii::DeviceMemory memory_{nullptr};
  vk::raii::Buffer buffer_{nullptr};
  uint8_t* mapped_ = nullptr;  // null for device-local buffers in the staging mode
};

}  // namespace kvbench
