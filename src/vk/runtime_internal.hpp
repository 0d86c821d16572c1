// Pieces of the runtime shared by its source files (runtime.cpp, pipeline_cache.cpp,
// batch.cpp); not part of the interface.
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

// The value of environment variable `name`, or "" when it is unset.
std::string env_value(const char* name);

}  // namespace kvbench
