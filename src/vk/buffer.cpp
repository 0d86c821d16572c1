// Storage and host buffers: Runtime::buffer and its mapped staging and parameter buffers,
// and Buffer's synchronous copies in both memory modes (specs/runtime.md).
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "vk/runtime_internal.hpp"

namespace kvbench {

size_t allocation_size(size_t bytes, size_t most) {
  size_t n = std::max<size_t>(bytes, 272);
  if (((n >> 8) & 0xff) == 0) n += 256;  // sets bit 8 and carries nowhere
  if ((n & (n - 1)) == 0) n += 16;       // keeps bits 8-15
  return n <= most ? n : bytes;
}

std::unique_ptr<Buffer> Runtime::buffer(size_t bytes) {
  // Whole 16-byte texels, so that a `_texels` view covers every byte of the tensor.
  const size_t rounded = std::max<size_t>(16, (bytes + 15) / 16 * 16);
  if (rounded > info_.max_storage_buffer_range)
    throw SkipCase("a tensor of " + std::to_string(bytes) + " bytes exceeds maxStorageBufferRange (" +
                   std::to_string(info_.max_storage_buffer_range) + " bytes) of " + info_.name);
  return std::make_unique<Buffer>(*this, rounded, device_memory_type_, !staging_,
                                  allocation_size(rounded, info_.max_storage_buffer_range));
}

std::unique_ptr<Buffer> Runtime::host_buffer(size_t bytes, bool readback) {
  return std::make_unique<Buffer>(*this, std::max<size_t>(4, (bytes + 3) / 4 * 4),
                                  readback ? readback_memory_type_ : upload_memory_type_, true);
}

Buffer::Buffer(Runtime& rt, size_t bytes, uint32_t memory_type, bool mapped, size_t allocation)
    : rt_(&rt), size_(bytes), allocated_(std::max(bytes, allocation)) {
  buffer_ = vk::raii::Buffer(
      rt.device_, vk::BufferCreateInfo{
                      .size = allocated_, .usage = kBufferUsage, .sharingMode = vk::SharingMode::eExclusive});
  const auto req = buffer_.getMemoryRequirements();
  if (!(req.memoryTypeBits & (1u << memory_type)))
    throw std::runtime_error("the chosen memory type does not suit a buffer of " + std::to_string(bytes) +
                             " bytes");
  memory_ = vk::raii::DeviceMemory(
      rt.device_, vk::MemoryAllocateInfo{.allocationSize = req.size, .memoryTypeIndex = memory_type});
  buffer_.bindMemory(*memory_, 0);
  if (mapped) {
    mapped_ = static_cast<uint8_t*>(memory_.mapMemory(0, allocated_));
    // Zero, as lavapipe reads past a binding's end: a read a little past the tensor reads
    // what it read before the padding, whatever the memory held.
    std::memset(mapped_ + size_, 0, allocated_ - size_);
  }
}

Buffer::~Buffer() {
  if (mapped_) memory_.unmapMemory();
}

void Buffer::upload(std::span<const uint8_t> bytes) {
  if (bytes.size() > size_) throw std::logic_error("upload larger than the buffer");
  if (mapped_) {
    std::memcpy(mapped_, bytes.data(), bytes.size());
    return;
  }
  Batch batch(*rt_);
  batch.upload(*this, bytes);
  batch.submit();
}

void Buffer::download(std::span<uint8_t> bytes) const {
  if (bytes.size() > size_) throw std::logic_error("download larger than the buffer");
  if (mapped_) {
    std::memcpy(bytes.data(), mapped_, bytes.size());
    return;
  }
  Batch batch(*rt_);
  batch.download(*this, bytes);
  batch.submit();
}

}  // namespace kvbench
