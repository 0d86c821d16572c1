// Pieces of the runtime shared by its source files (runtime.cpp, buffer.cpp, pipelines.cpp,
// pipeline_cache.cpp, batch.cpp); not part of the interface.
#pragma once

#include <string>

#include "vk/runtime.hpp"
#include "vk/spirv_reflect.hpp"

namespace kvbench {

struct Runtime::Pipeline {
  ShaderInterface interface;
  vk::raii::DescriptorSetLayout set_layout{nullptr};
  vk::raii::PipelineLayout layout{nullptr};
  vk::raii::ShaderModule module{nullptr};
  vk::raii::Pipeline pipeline{nullptr};
};

// The usages every buffer is made with (Buffer, and the runtime's probe of memory types).
inline constexpr vk::BufferUsageFlags kBufferUsage =
    vk::BufferUsageFlagBits::eStorageBuffer | vk::BufferUsageFlagBits::eUniformBuffer |
    vk::BufferUsageFlagBits::eUniformTexelBuffer | vk::BufferUsageFlagBits::eTransferSrc |
    vk::BufferUsageFlagBits::eTransferDst;

// The value of environment variable `name`, or "" when it is unset.
std::string env_value(const char* name);

// Whether KVBENCH_VALIDATION=1 asks for the Khronos validation layer.
bool validation_requested();
// What kvbench knows of physical device `pd` (its index in the loader's order).
DeviceInfo describe(const vk::raii::PhysicalDevice& pd, int index);
// The instance kvbench uses (Vulkan 1.1), with the validation layer when `validation`;
// `messenger` (may be null) is chained in, so instance creation and destruction report too.
vk::raii::Instance make_instance(const vk::raii::Context& context, bool validation,
                                 const vk::DebugUtilsMessengerCreateInfoEXT* messenger = nullptr);

}  // namespace kvbench
