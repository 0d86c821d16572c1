// Compiles the attention pipelines for a real GPU without one: on RADV's compile-only null
// device (RADV_FORCE_FAMILY=vega10 makes Mesa's RADV expose "Null hardware (RADV VEGA10)"),
// with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR, and prints what the AMD compiler (ACO)
// reports per pipeline: VGPRs, SGPRs, spilled registers, scratch bytes, LDS bytes and
// waves (subgroups) per SIMD (VK_KHR_pipeline_executable_properties).
//
// Exit 0: printed, and no gpu-kernel (tiles) pipeline with head sizes <= 256 and no
// attention_merge_splits pipeline uses scratch or spills VGPRs; 1: one does (each named); 77: no null device
// (RADV missing, or RADV_FORCE_FAMILY unset), the reason on stdout. The cpu kernel's pipelines (lanes) are
// printed for comparison and not gated: it runs only on CPU devices.
// Usage: RADV_FORCE_FAMILY=vega10 attention_isa_stats
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <vulkan/vulkan_raii.hpp>

#include "vk/runtime.hpp"
#include "vk/spirv_reflect.hpp"

using namespace kvbench;

namespace {

struct Variant {
  std::string shader;
  std::map<std::string, uint32_t> constants;  // by name; the rest keep the shader's defaults
  int64_t key_dim, value_dim;
  std::string label;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  for (const char* body : {"_tiles", ""}) {
    const std::string b = body;
    const bool tiles = !b.empty();
    for (uint32_t d : {64u, 128u, 256u, 512u}) {
      if (!tiles && d > 256) continue;
      v.push_back({"sdpa_attention" + b, {{"D", d}}, d, d, "SDPA D " + std::to_string(d)});
      v.push_back({"mhca_attention" + b,
                   {{"D", d}, {"CACHE_BITS", 8}, {"QG", 32}},
                   d,
                   d,
                   "MHCA int8 D " + std::to_string(d)});
      v.push_back({"fia_attention" + b,
                   {{"D", d}, {"FIA_DV", d}, {"KV_PATH", 1}, {"DQK", d}},
                   d,
                   d,
                   "FIA f16 plain D " + std::to_string(d)});
    }
    v.push_back(
        {"mhca_attention" + b, {{"D", 128}, {"CACHE_BITS", 4}, {"QG", 32}}, 128, 128, "MHCA int4 D 128"});
    v.push_back({"fia_attention" + b,
                 {{"D", 128}, {"FIA_DV", 128}, {"KV_PATH", 0}, {"DQK", 128}},
                 128,
                 128,
                 "FIA antiquant/paged D 128"});
    v.push_back({"fia_attention" + b,
                 {{"D", 192}, {"FIA_DV", 128}, {"KV_PATH", 0}, {"DQK", 128}},
                 192,
                 128,
                 "FIA MLA 128+64 / 128"});
    if (tiles)
      v.push_back({"fia_attention" + b,
                   {{"D", 576}, {"FIA_DV", 512}, {"KV_PATH", 0}, {"DQK", 512}},
                   576,
                   512,
                   "FIA MLA 512+64 / 512"});
  }
  // The merges (TEXELS, PER_WORD): the gpu kernel's (gated) and the cpu kernel's.
  for (const std::string merge : {"attention_merge_splits", "attention_merge"}) {
    v.push_back({merge, {{"TEXELS", 1}, {"PER_WORD", 1}}, 0, 0, "merge f32 out (texels)"});
    v.push_back({merge, {{"TEXELS", 1}, {"PER_WORD", 2}}, 0, 0, "merge f16 out (texels)"});
    v.push_back({merge, {{"TEXELS", 0}, {"PER_WORD", 4}}, 0, 0, "merge i8 out (buffers)"});
  }
  return v;
}

}  // namespace

int main() {
  vk::raii::Context context;
  vk::ApplicationInfo app{.pApplicationName = "attention_isa_stats", .apiVersion = VK_API_VERSION_1_1};
  vk::raii::Instance instance(context, vk::InstanceCreateInfo{.pApplicationInfo = &app});
  std::optional<vk::raii::PhysicalDevice> chosen;
  std::string name;
  for (auto& pd : instance.enumeratePhysicalDevices()) {
    const std::string n = pd.getProperties().deviceName.data();
    if (n.rfind("Null hardware", 0) == 0) {
      chosen = pd;
      name = n;
      break;
    }
  }
  if (!chosen) {
    std::printf(
        "SKIP: no RADV null device (needs Mesa's RADV, mesa-vulkan-drivers, and RADV_FORCE_FAMILY=vega10)\n");
    return 77;
  }
  bool has_ext = false;
  for (const auto& e : chosen->enumerateDeviceExtensionProperties())
    has_ext = has_ext ||
              std::string(e.extensionName.data()) == VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  if (!has_ext) {
    std::printf("SKIP: %s lacks VK_KHR_pipeline_executable_properties\n", name.c_str());
    return 77;
  }
  const float priority = 1.0f;
  uint32_t family = 0;
  const auto families = chosen->getQueueFamilyProperties();
  for (uint32_t i = 0; i < families.size(); ++i)
    if (families[i].queueFlags & vk::QueueFlagBits::eCompute) {
      family = i;
      break;
    }
  vk::DeviceQueueCreateInfo queue{.queueFamilyIndex = family, .queueCount = 1, .pQueuePriorities = &priority};
  vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec{.pipelineExecutableInfo = VK_TRUE};
  const char* ext = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
  vk::raii::Device device(*chosen, vk::DeviceCreateInfo{.pNext = &exec,
                                                        .queueCreateInfoCount = 1,
                                                        .pQueueCreateInfos = &queue,
                                                        .enabledExtensionCount = 1,
                                                        .ppEnabledExtensionNames = &ext});
  std::printf("device: %s\n", name.c_str());
  std::printf("%-34s %-22s %6s %6s %8s %8s %8s %7s %6s\n", "pipeline", "shader", "VGPRs", "SGPRs", "spill_v",
              "spill_s", "scratch", "LDS", "waves");
  int failures = 0;
  for (const auto& var : variants()) {
    const auto code = embedded_shaders().at(var.shader);
    const ShaderInterface iface = reflect_shader(code);
    std::vector<vk::DescriptorSetLayoutBinding> slots;
    for (const auto& [binding, names] : iface.buffers)
      slots.push_back({.binding = binding,
                       .descriptorType = vk::DescriptorType::eStorageBuffer,
                       .descriptorCount = 1,
                       .stageFlags = vk::ShaderStageFlagBits::eCompute});
    for (const auto& [binding, tensor] : iface.texel_buffers)
      slots.push_back({.binding = binding,
                       .descriptorType = vk::DescriptorType::eUniformTexelBuffer,
                       .descriptorCount = 1,
                       .stageFlags = vk::ShaderStageFlagBits::eCompute});
    if (iface.params_binding)
      slots.push_back({.binding = *iface.params_binding,
                       .descriptorType = vk::DescriptorType::eUniformBuffer,
                       .descriptorCount = 1,
                       .stageFlags = vk::ShaderStageFlagBits::eCompute});
    vk::raii::DescriptorSetLayout set_layout(
        device, vk::DescriptorSetLayoutCreateInfo{.bindingCount = static_cast<uint32_t>(slots.size()),
                                                  .pBindings = slots.data()});
    vk::DescriptorSetLayout sl = *set_layout;
    vk::raii::PipelineLayout layout(device,
                                    vk::PipelineLayoutCreateInfo{.setLayoutCount = 1, .pSetLayouts = &sl});
    vk::raii::ShaderModule module(
        device, vk::ShaderModuleCreateInfo{.codeSize = code.size() * 4, .pCode = code.data()});
    // Each constant's constant_id from the module, as the runtime finds it.
    std::vector<vk::SpecializationMapEntry> entries;
    std::vector<uint32_t> values;
    for (const auto& [name, value] : var.constants) {
      entries.push_back({.constantID = iface.spec_constants.at(name),
                         .offset = static_cast<uint32_t>(values.size() * 4),
                         .size = 4});
      values.push_back(value);
    }
    vk::SpecializationInfo spec{.mapEntryCount = static_cast<uint32_t>(entries.size()),
                                .pMapEntries = entries.data(),
                                .dataSize = values.size() * 4,
                                .pData = values.data()};
    vk::raii::Pipeline pipeline(
        device, nullptr,
        vk::ComputePipelineCreateInfo{.flags = vk::PipelineCreateFlagBits::eCaptureStatisticsKHR,
                                      .stage = {.stage = vk::ShaderStageFlagBits::eCompute,
                                                .module = *module,
                                                .pName = "main",
                                                .pSpecializationInfo = &spec},
                                      .layout = *layout});
    const auto executables =
        device.getPipelineExecutablePropertiesKHR(vk::PipelineInfoKHR{.pipeline = *pipeline});
    for (uint32_t e = 0; e < executables.size(); ++e) {
      std::map<std::string, uint64_t> stat;
      for (const auto& s : device.getPipelineExecutableStatisticsKHR(
               vk::PipelineExecutableInfoKHR{.pipeline = *pipeline, .executableIndex = e})) {
        uint64_t value = 0;
        if (s.format == vk::PipelineExecutableStatisticFormatKHR::eUint64)
          value = s.value.u64;
        else if (s.format == vk::PipelineExecutableStatisticFormatKHR::eInt64)
          value = static_cast<uint64_t>(s.value.i64);
        else if (s.format == vk::PipelineExecutableStatisticFormatKHR::eBool32)
          value = s.value.b32;
        else
          value = static_cast<uint64_t>(s.value.f64);
        stat[s.name.data()] = value;
      }
      auto get = [&stat](const char* k) {
        return stat.count(k) ? std::to_string(stat[k]) : std::string("-");
      };
      std::printf("%-34s %-22s %6s %6s %8s %8s %8s %7s %6s\n", var.label.c_str(), var.shader.c_str(),
                  get("VGPRs").c_str(), get("SGPRs").c_str(), get("Spilled VGPRs").c_str(),
                  get("Spilled SGPRs").c_str(), get("Scratch size").c_str(), get("LDS size").c_str(),
                  get("Subgroups per SIMD").c_str());
      const bool gated =
          (var.shader.find("_tiles") != std::string::npos || var.shader == "attention_merge_splits") &&
          var.key_dim <= 256 && var.value_dim <= 256;
      if (gated && (stat["Scratch size"] > 0 || stat["Spilled VGPRs"] > 0)) {
        std::printf("FAIL: %s (%s) uses scratch or spills VGPRs at head sizes <= 256\n", var.label.c_str(),
                    var.shader.c_str());
        ++failures;
      }
    }
  }
  return failures ? 1 : 0;
}
