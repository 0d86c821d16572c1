// Compiles the attention pipelines for a real GPU without one: on RADV's compile-only null
// device (RADV_FORCE_FAMILY=vega10 makes Mesa's RADV expose "Null hardware (RADV VEGA10)"),
// with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR, and prints what the AMD compiler (ACO)
// reports per pipeline: VGPRs, SGPRs, spilled registers, scratch bytes, LDS bytes and
// waves (subgroups) per SIMD (VK_KHR_pipeline_executable_properties).
//
// Rows marked `gpu` are pipelines a GPU runs: the decode kernel's (at the null device's
// subgroup size, as kvbench would specialize it there), the tiles kernel's (MLA's 576/512
// included) and attention_merge_splits. The cpu kernel's pipelines (lanes) are printed for
// comparison: they run only on CPU devices.
// With --gate only the `gpu` rows are compiled and printed (the cpu kernel's, which spill by
// the hundred, take ACO twice as long as all the others, and gate nothing).
// Exit 0: printed (with --gate: and no `gpu` row uses scratch or spills VGPRs); 1: with
// --gate, one does (each named); 77: no null device (RADV missing, or RADV_FORCE_FAMILY
// unset), the reason on stdout; 2: a bad argument.
// Usage: RADV_FORCE_FAMILY=vega10|gfx1100 attention_isa_stats [--gate]
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <vulkan/vulkan_raii.hpp>

#include "ops/attention/attention_kernel.hpp"
#include "vk/runtime.hpp"
#include "vk/spirv_reflect.hpp"

using namespace kvbench;

namespace {

struct Variant {
  std::string shader;
  std::map<std::string, uint32_t> constants;  // by name; the rest keep the shader's defaults
  std::string label;
  bool gpu;  // a pipeline a GPU runs: gated
};

using Constants = std::map<std::string, uint32_t>;

// `base` plus the decode kernel's constants at `vectors` query vectors per item and subgroups
// of `sg` (none for the other bodies: vectors 0). V's head size is FIA's FIA_DV, else D.
Constants with_decode(Constants base, uint32_t vectors, uint32_t sg) {
  if (vectors == 0) return base;
  set_decode_constants(base, sg, vectors, base.count("FIA_DV") ? base.at("FIA_DV") : base.at("D"));
  return base;
}

std::vector<Variant> variants(uint32_t subgroup_size) {
  std::vector<Variant> v;
  for (const char* body : {"_decode", "_tiles", ""}) {
    const std::string b = body;
    const bool gpu = !b.empty(), decode = b == "_decode";
    // The decode kernel's items hold the GQA group: 16 heads (DeepSeek-V3 at TP 8; heads split
    // over the subgroups), 8 (Llama-3-70B), 4 (Llama-3-8B), 1.
    for (const uint32_t nv : decode ? std::vector<uint32_t>{16, 8, 4, 1} : std::vector<uint32_t>{0}) {
      const std::string g = decode ? ", " + std::to_string(nv) + " vectors" : "";
      auto add = [&](const char* op, const Constants& c, const std::string& label) {
        v.push_back({op + b, with_decode(c, nv, subgroup_size), label + g, gpu});
      };
      for (uint32_t d :
           {64u, 80u, 96u, 128u, 256u, 512u}) {  // 80, 96: V rows that do not divide the subgroup
        if ((!gpu || decode) && d > 256) continue;
        const std::string ds = std::to_string(d);
        add("sdpa_attention", {{"D", d}}, "SDPA D " + ds);
        add("mhca_attention", {{"D", d}, {"CACHE_BITS", 8}, {"QG", 32}}, "MHCA int8 D " + ds);
        add("fia_attention", {{"D", d}, {"FIA_DV", d}, {"KV_PATH", 1}, {"DQK", d}}, "FIA f16 plain D " + ds);
      }
      add("mhca_attention", {{"D", 128}, {"CACHE_BITS", 4}, {"QG", 32}}, "MHCA int4 D 128");
      // The benchmark's quant_group of 8 (mhca_decode_4096), int8 and int4.
      for (const uint32_t bits : {8u, 4u}) {
        const Constants c{{"D", 128}, {"CACHE_BITS", bits}, {"QG", 8}, {"PAGE_SIZE", 128}};
        const std::string label = "MHCA int" + std::to_string(bits) + " D 128 QG 8 paged";
        add("mhca_attention", c, label);
        // The decode kernel with f16 dequantization (devices with DeviceInfo::f16_rte).
        if (decode)
          v.push_back(
              {"mhca_attention_decode_f16", with_decode(c, nv, subgroup_size), label + " f16" + g, true});
      }
      // Codes element by element, every antiquant mode (the general path of codes).
      add("fia_attention", {{"D", 128}, {"FIA_DV", 128}, {"KV_PATH", 5}, {"DQK", 128}},
          "FIA antiquant/paged D 128");
      // Int8 codes with per-channel scales and offsets, by uvec4s through texel views (the
      // 8k paged decode).
      add("fia_attention",
          {{"D", 128},
           {"FIA_DV", 128},
           {"KV_PATH", 2},
           {"DQK", 128},
           {"K_PER_CHANNEL", 1},
           {"V_PER_CHANNEL", 1},
           {"HAS_OFFSET", 1},
           {"CODES_UVEC4", 1},
           {"TEXELS", 1},
           {"SCORE_LOADS", 0}},
          "FIA int8 per-channel D 128");
      // FP8 E4M3FN codes (the same word loaders, an FP8 decode per code), per-channel scales.
      add("fia_attention",
          {{"D", 128},
           {"FIA_DV", 128},
           {"KV_PATH", 4},
           {"DQK", 128},
           {"K_PER_CHANNEL", 1},
           {"V_PER_CHANNEL", 1},
           {"CODES_UVEC4", 1},
           {"TEXELS", 1},
           {"SCORE_LOADS", 0}},
          "FIA FP8 per-channel D 128");
      add("fia_attention", {{"D", 192}, {"FIA_DV", 128}, {"KV_PATH", 0}, {"DQK", 128}},
          "FIA MLA 128+64 / 128");
      // V rows of 512 split the heads, in multiples of 4 (decode_vectors).
      if (gpu && (!decode || nv >= 4))
        add("fia_attention", {{"D", 576}, {"FIA_DV", 512}, {"KV_PATH", 0}, {"DQK", 512}},
            "FIA MLA 512+64 / 512");
    }
  }
  // The merges (TEXELS, PER_WORD): the gpu kernels' (gated) and the cpu kernel's.
  for (const std::string merge : {"attention_merge_splits", "attention_merge"}) {
    const bool gpu = merge == "attention_merge_splits";
    v.push_back({merge, {{"TEXELS", 1}, {"PER_WORD", 1}}, "merge f32 out (texels)", gpu});
    v.push_back({merge, {{"TEXELS", 1}, {"PER_WORD", 2}}, "merge f16 out (texels)", gpu});
    v.push_back({merge, {{"TEXELS", 0}, {"PER_WORD", 4}}, "merge i8 out (buffers)", gpu});
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  bool gate = false;
  uint32_t decode_size = 0;  // --subgroup-size: the decode kernel's, else the device's default
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gate") {
      gate = true;
    } else if (a == "--subgroup-size" && i + 1 < argc) {
      const std::string n = argv[++i];
      decode_size = n == "32" ? 32 : n == "64" ? 64 : n == "16" ? 16 : n == "8" ? 8 : 0;
      if (!decode_size) argc = 0;
    } else {
      argc = 0;
    }
  }
  if (argc == 0) {
    std::fprintf(
        stderr,
        "usage: RADV_FORCE_FAMILY=vega10|gfx1100 attention_isa_stats [--gate] [--subgroup-size 8|16|32|64]\n"
        "  --subgroup-size: compile only the decode kernel, at that required size (RDNA runs wave32\n"
        "  and wave64; decode_subgroup_size picks one per device)\n");
    return 2;
  }
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
  // The decode kernel's pipelines require their subgroup size with full subgroups, as the
  // runtime creates them (specs/runtime.md "Required subgroup sizes"); RADV offers it.
  bool size_control = false;
  for (const auto& e : chosen->enumerateDeviceExtensionProperties())
    size_control =
        size_control || std::string(e.extensionName.data()) == VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;
  vk::PhysicalDeviceSubgroupSizeControlFeaturesEXT control{.subgroupSizeControl = VK_TRUE,
                                                           .computeFullSubgroups = VK_TRUE};
  vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec{.pNext = size_control ? &control : nullptr,
                                                                 .pipelineExecutableInfo = VK_TRUE};
  std::vector<const char*> exts{VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME,
                                VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME};
  if (size_control) exts.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  vk::raii::Device device(*chosen,
                          vk::DeviceCreateInfo{.pNext = &exec,
                                               .queueCreateInfoCount = 1,
                                               .pQueueCreateInfos = &queue,
                                               .enabledExtensionCount = static_cast<uint32_t>(exts.size()),
                                               .ppEnabledExtensionNames = exts.data()});
  const auto sg_props =
      chosen->getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceSubgroupProperties>();
  const uint32_t subgroup_size =
      decode_size ? decode_size : sg_props.get<vk::PhysicalDeviceSubgroupProperties>().subgroupSize;
  std::printf("device: %s, subgroup size %u\n", name.c_str(), subgroup_size);
  std::printf("%-44s %-22s %3s %6s %6s %8s %8s %8s %7s %6s %6s\n", "pipeline", "shader", "gpu", "VGPRs",
              "SGPRs", "spill_v", "spill_s", "scratch", "LDS", "waves", "instrs");
  int failures = 0;
  for (const auto& var : variants(subgroup_size)) {
    if (gate && !var.gpu) continue;  // the gate compiles only what a GPU runs
    if (decode_size && var.shader.find("_decode") == std::string::npos) continue;
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
    const bool required = size_control && var.shader.find("_decode") != std::string::npos;
    const vk::PipelineShaderStageRequiredSubgroupSizeCreateInfoEXT size{.requiredSubgroupSize =
                                                                            subgroup_size};
    vk::raii::Pipeline pipeline(
        device, nullptr,
        vk::ComputePipelineCreateInfo{
            .flags = vk::PipelineCreateFlagBits::eCaptureStatisticsKHR,
            .stage = {.pNext = required ? &size : nullptr,
                      .flags = required ? vk::PipelineShaderStageCreateFlagBits::eRequireFullSubgroupsEXT
                                        : vk::PipelineShaderStageCreateFlags{},
                      .stage = vk::ShaderStageFlagBits::eCompute,
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
      std::printf("%-44s %-22s %3s %6s %6s %8s %8s %8s %7s %6s %6s\n", var.label.c_str(), var.shader.c_str(),
                  var.gpu ? "gpu" : "", get("VGPRs").c_str(), get("SGPRs").c_str(),
                  get("Spilled VGPRs").c_str(), get("Spilled SGPRs").c_str(), get("Scratch size").c_str(),
                  get("LDS size").c_str(), get("Subgroups per SIMD").c_str(), get("Instructions").c_str());
      if (gate && var.gpu && (stat["Scratch size"] > 0 || stat["Spilled VGPRs"] > 0)) {
        std::printf("FAIL: %s (%s), a pipeline a GPU runs, uses scratch or spills VGPRs\n", var.label.c_str(),
                    var.shader.c_str());
        ++failures;
      }
    }
  }
  return failures ? 1 : 0;
}
