// The compute pipelines of the runtime: a kernel's specialization constants and key, the
// checks before a pipeline is built, and its creation from the embedded SPIR-V through the
// pipeline cache (specs/runtime.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "vk/runtime_internal.hpp"
#include "vk/spirv_reflect.hpp"

namespace kvbench {

std::vector<std::pair<uint32_t, uint32_t>> Runtime::specialization(const Kernel& kernel) {
  auto ids = spec_ids_.find(kernel.shader);
  if (ids == spec_ids_.end()) {
    const auto& shaders = embedded_shaders();
    const auto code = shaders.find(kernel.shader);
    if (code == shaders.end()) throw std::logic_error("no embedded shader named " + kernel.shader);
    ids = spec_ids_.emplace(kernel.shader, reflect_shader(code->second).spec_constants).first;
  }
  std::string declared;
  for (const auto& [name, id] : ids->second) declared += (declared.empty() ? "" : ", ") + name;
  std::vector<std::pair<uint32_t, uint32_t>> values;
  for (const auto& [name, value] : kernel.constants) {
    const auto id = ids->second.find(name);
    if (id == ids->second.end())
      throw std::logic_error(kernel.shader + " has no specialization constant " + name +
                             " (it has: " + (declared.empty() ? "none" : declared) + ")");
    values.emplace_back(id->second, value);
  }
  for (const auto& [name, id] : ids->second)
    if (!kernel.constants.count(name))
      throw std::logic_error(kernel.shader + ": specialization constant " + name + " (constant_id " +
                             std::to_string(id) + ") is not given");
  std::sort(values.begin(), values.end());
  return values;
}

std::string Runtime::pipeline_key(const Kernel& kernel) {
  std::string key = kernel.shader;
  uint32_t next = 0;  // the id that continues the run from 0
  for (const auto& [id, value] : specialization(kernel)) {
    key += ":" + (id == next ? "" : std::to_string(id) + "=") + std::to_string(value);
    if (id == next) ++next;
  }
  if (kernel.subgroup_size) key += ":sg=" + std::to_string(kernel.subgroup_size);
  return key;
}

void Runtime::check_pipeline(const Kernel& kernel) {
  // Every shader declares SignedZeroInfNanPreserve and RoundingModeRTE for f32
  // (shaders/float_controls.glsl).
  if (!info_.inf_nan_preserve_f32)
    throw SkipCase(info_.name +
                   " does not preserve inf, NaN and signed zeros in f32 arithmetic "
                   "(shaderSignedZeroInfNanPreserveFloat32), which kvbench's kernels declare they rely on");
  if (!info_.rte_f32)
    throw SkipCase(info_.name +
                   " cannot round f32 arithmetic to nearest even where a shader asks "
                   "(shaderRoundingModeRTEFloat32), which kvbench's exact kernels (quantizer codes, "
                   "FP8 encoding, f16 roundings) declare they rely on");
  if (kernel.subgroup_size && !info_.can_require_subgroups(kernel.subgroup_size, 1))
    throw std::logic_error(kernel.shader + ": " + info_.name + " cannot require subgroups of " +
                           std::to_string(kernel.subgroup_size) + " lanes");
  auto interface = interfaces_.find(kernel.shader);
  if (interface == interfaces_.end()) {
    const auto code = embedded_shaders().find(kernel.shader);
    if (code == embedded_shaders().end()) throw std::logic_error("no embedded shader named " + kernel.shader);
    interface = interfaces_.emplace(kernel.shader, reflect_shader(code->second)).first;
  }
  check_descriptor_limits(kernel.shader, interface->second, info_);
}

Runtime::Pipeline& Runtime::pipeline(const Kernel& kernel) {
  const std::string key = pipeline_key(kernel);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;
  const auto& shaders = embedded_shaders();
  auto code = shaders.find(kernel.shader);
  check_pipeline(kernel);
  auto p = std::make_unique<Pipeline>();
  p->interface = reflect_shader(code->second);
  std::vector<vk::DescriptorSetLayoutBinding> slots;
  for (const auto& [binding, names] : p->interface.buffers)
    slots.push_back({.binding = binding,
                     .descriptorType = vk::DescriptorType::eStorageBuffer,
                     .descriptorCount = 1,
                     .stageFlags = vk::ShaderStageFlagBits::eCompute});
  for (const auto& [binding, name] : p->interface.texel_buffers)
    slots.push_back({.binding = binding,
                     .descriptorType = vk::DescriptorType::eUniformTexelBuffer,
                     .descriptorCount = 1,
                     .stageFlags = vk::ShaderStageFlagBits::eCompute});
  if (p->interface.params_binding)
    slots.push_back({.binding = *p->interface.params_binding,
                     .descriptorType = vk::DescriptorType::eUniformBuffer,
                     .descriptorCount = 1,
                     .stageFlags = vk::ShaderStageFlagBits::eCompute});
  p->set_layout = vk::raii::DescriptorSetLayout(
      device_, vk::DescriptorSetLayoutCreateInfo{.bindingCount = static_cast<uint32_t>(slots.size()),
                                                 .pBindings = slots.data()});
  vk::DescriptorSetLayout set_layout = *p->set_layout;
  p->layout = vk::raii::PipelineLayout(
      device_, vk::PipelineLayoutCreateInfo{.setLayoutCount = 1, .pSetLayouts = &set_layout});
  p->module = vk::raii::ShaderModule(
      device_, vk::ShaderModuleCreateInfo{.codeSize = code->second.size() * 4, .pCode = code->second.data()});
  std::vector<vk::SpecializationMapEntry> entries;
  std::vector<uint32_t> values;
  for (const auto& [id, value] : specialization(kernel)) {
    entries.push_back({.constantID = id, .offset = static_cast<uint32_t>(values.size() * 4), .size = 4});
    values.push_back(value);
  }
  vk::SpecializationInfo spec{.mapEntryCount = static_cast<uint32_t>(entries.size()),
                              .pMapEntries = entries.data(),
                              .dataSize = values.size() * 4,
                              .pData = values.data()};
  // A required subgroup size comes with full subgroups: every subgroup of the workgroup has
  // exactly that many active lanes (the decode kernel's NSG subgroups of SG lanes).
  const vk::PipelineShaderStageRequiredSubgroupSizeCreateInfoEXT required{.requiredSubgroupSize =
                                                                              kernel.subgroup_size};
  vk::ComputePipelineCreateInfo info{
      .stage = {.pNext = kernel.subgroup_size ? &required : nullptr,
                .flags = kernel.subgroup_size
                             ? vk::PipelineShaderStageCreateFlagBits::eRequireFullSubgroupsEXT
                             : vk::PipelineShaderStageCreateFlags{},
                .stage = vk::ShaderStageFlagBits::eCompute,
                .module = *p->module,
                .pName = "main",
                .pSpecializationInfo = entries.empty() ? nullptr : &spec},
      .layout = *p->layout};
  const auto start = std::chrono::steady_clock::now();
  p->pipeline = *pipeline_cache_ ? vk::raii::Pipeline(device_, pipeline_cache_, info)
                                 : vk::raii::Pipeline(device_, nullptr, info);
  // Pipeline creation is where the driver compiles (on lavapipe, LLVM: seconds per
  // attention pipeline); KVBENCH_PIPELINE_TIMES=1 shows where a cold process spends it.
  static const bool trace = env_value("KVBENCH_PIPELINE_TIMES") == "1";
  if (trace)
    std::fprintf(stderr, "kvbench: pipeline %s created in %.2f s\n", key.c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return *pipelines_.emplace(key, std::move(p)).first->second;
}

}  // namespace kvbench
