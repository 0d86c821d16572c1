#include "vk/device.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/error.hpp"
#include "vk/runtime_internal.hpp"
#include "vk/spirv_reflect.hpp"

namespace kvbench {

bool validation_requested() { return env_value("KVBENCH_VALIDATION") == "1"; }

// KVBENCH_VALIDATION=1 turns on the Khronos validation layer (CI runs a shard with it).
// `messenger` (may be null) is chained in, so instance creation and destruction report too.
vk::raii::Instance make_instance(const vk::raii::Context& context, bool validation,
                                 const vk::DebugUtilsMessengerCreateInfoEXT* messenger) {
  vk::ApplicationInfo app{.pApplicationName = "kvbench",
                          .applicationVersion = 1,
                          .pEngineName = "kvbench",
                          .engineVersion = 1,
                          .apiVersion = VK_API_VERSION_1_1};
  std::vector<const char*> layers, extensions;
  if (validation) layers.push_back("VK_LAYER_KHRONOS_validation");
  if (messenger) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  vk::InstanceCreateInfo info{.pNext = messenger,
                              .pApplicationInfo = &app,
                              .enabledLayerCount = static_cast<uint32_t>(layers.size()),
                              .ppEnabledLayerNames = layers.data(),
                              .enabledExtensionCount = static_cast<uint32_t>(extensions.size()),
                              .ppEnabledExtensionNames = extensions.data()};
  try {
    return vk::raii::Instance(context, info);
  } catch (const vk::LayerNotPresentError&) {
    throw std::runtime_error(
        "KVBENCH_VALIDATION=1 but the Khronos validation layer is not installed "
        "(vulkan-validationlayers: tools/setup.sh)");
  }
}

namespace {

std::string type_name(vk::PhysicalDeviceType t) {
  switch (t) {
    case vk::PhysicalDeviceType::eDiscreteGpu: return "discrete-gpu";
    case vk::PhysicalDeviceType::eIntegratedGpu: return "integrated-gpu";
    case vk::PhysicalDeviceType::eVirtualGpu: return "virtual-gpu";
    case vk::PhysicalDeviceType::eCpu: return "cpu";
    default: return "other";
  }
}

// DeviceInfo::compute_units: from the first extension that gives them, else the default.
void describe_compute_units(const vk::raii::PhysicalDevice& pd, const std::set<std::string>& extensions,
                            DeviceInfo& d) {
  const auto has = [&](const char* name) { return extensions.count(name) > 0; };
  uint32_t units = 0;
  if (has(VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME)) {
    units = pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceShaderCoreProperties2AMD>()
                .get<vk::PhysicalDeviceShaderCoreProperties2AMD>()
                .activeComputeUnitCount;
    d.compute_units_source = VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME;
  } else if (has(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    const auto p =
        pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceShaderCorePropertiesAMD>()
            .get<vk::PhysicalDeviceShaderCorePropertiesAMD>();
    units = p.shaderEngineCount * p.shaderArraysPerEngineCount * p.computeUnitsPerShaderArray;
    d.compute_units_source = VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME;
  } else if (has(VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME)) {
    units =
        pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceShaderCoreBuiltinsPropertiesARM>()
            .get<vk::PhysicalDeviceShaderCoreBuiltinsPropertiesARM>()
            .shaderCoreCount;
    d.compute_units_source = VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME;
  } else if (has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    units = pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV>()
                .get<vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV>()
                .shaderSMCount;
    d.compute_units_source = VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME;
  }
  if (units == 0) {
    units = d.type == "cpu" ? std::max(1u, std::thread::hardware_concurrency()) : 132u;
    d.compute_units_source = "default";
  }
  d.compute_units = units;
}

// DeviceInfo's subgroup size control: the extension with both features for compute.
void describe_subgroup_size_control(const vk::raii::PhysicalDevice& pd,
                                    const std::set<std::string>& extensions, DeviceInfo& d) {
  if (!extensions.count(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) return;
  const auto features =
      pd.getFeatures2<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceSubgroupSizeControlFeaturesEXT>()
          .get<vk::PhysicalDeviceSubgroupSizeControlFeaturesEXT>();
  const auto props =
      pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceSubgroupSizeControlPropertiesEXT>()
          .get<vk::PhysicalDeviceSubgroupSizeControlPropertiesEXT>();
  d.subgroup_size_control = features.subgroupSizeControl && features.computeFullSubgroups &&
                            (props.requiredSubgroupSizeStages & vk::ShaderStageFlagBits::eCompute);
  d.min_subgroup_size = props.minSubgroupSize;
  d.max_subgroup_size = props.maxSubgroupSize;
  d.max_workgroup_subgroups = props.maxComputeWorkgroupSubgroups;
}

}  // namespace

DeviceInfo describe(const vk::raii::PhysicalDevice& pd, int index) {
  DeviceInfo d;
  d.index = index;
  auto props = pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceSubgroupProperties,
                                 vk::PhysicalDeviceDriverProperties>();
  const auto& p = props.get<vk::PhysicalDeviceProperties2>().properties;
  d.name = p.deviceName.data();
  if (d.name.rfind("llvmpipe", 0) == 0) d.loop_iteration_limit = 65535;
  d.type = type_name(p.deviceType);
  d.vendor_id = p.vendorID;
  d.is_gpu = p.deviceType == vk::PhysicalDeviceType::eDiscreteGpu ||
             p.deviceType == vk::PhysicalDeviceType::eIntegratedGpu ||
             p.deviceType == vk::PhysicalDeviceType::eVirtualGpu;
  d.null_device = d.name.rfind("Null hardware", 0) == 0;
  d.api_version = std::to_string(VK_API_VERSION_MAJOR(p.apiVersion)) + "." +
                  std::to_string(VK_API_VERSION_MINOR(p.apiVersion)) + "." +
                  std::to_string(VK_API_VERSION_PATCH(p.apiVersion));
  const auto& drv = props.get<vk::PhysicalDeviceDriverProperties>();
  d.driver = std::string(drv.driverName.data()) + " " + drv.driverInfo.data();
  std::set<std::string> extensions;
  for (const auto& e : pd.enumerateDeviceExtensionProperties()) {
    const std::string name = e.extensionName.data();
    extensions.insert(name);
    d.calibrated_timestamps = d.calibrated_timestamps || name == VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
    if (name == VK_KHR_SHADER_CLOCK_EXTENSION_NAME)
      d.shader_clock =
          pd.getFeatures2<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceShaderClockFeaturesKHR>()
              .get<vk::PhysicalDeviceShaderClockFeaturesKHR>()
              .shaderSubgroupClock;
  }
  const auto& sg = props.get<vk::PhysicalDeviceSubgroupProperties>();
  d.subgroup_size = sg.subgroupSize;
  d.subgroup_shuffle = (sg.supportedOperations & vk::SubgroupFeatureFlagBits::eShuffle) &&
                       (sg.supportedStages & vk::ShaderStageFlagBits::eCompute);
  d.subgroup_arithmetic = (sg.supportedOperations & vk::SubgroupFeatureFlagBits::eArithmetic) &&
                          (sg.supportedStages & vk::ShaderStageFlagBits::eCompute);
  describe_subgroup_size_control(pd, extensions, d);
  d.shared_memory_bytes = p.limits.maxComputeSharedMemorySize;
  d.max_storage_buffer_range = p.limits.maxStorageBufferRange;
  for (int i = 0; i < 3; ++i) d.max_workgroup_count[i] = p.limits.maxComputeWorkGroupCount[i];
  d.max_workgroup_invocations = p.limits.maxComputeWorkGroupInvocations;
  d.max_workgroup_size_x = p.limits.maxComputeWorkGroupSize[0];
  d.max_stage_storage_buffers =
      std::min(p.limits.maxPerStageDescriptorStorageBuffers, p.limits.maxDescriptorSetStorageBuffers);
  d.max_stage_sampled_images =
      std::min(p.limits.maxPerStageDescriptorSampledImages, p.limits.maxDescriptorSetSampledImages);
  if (pd.getFormatProperties(vk::Format::eR32G32B32A32Uint).bufferFeatures &
      vk::FormatFeatureFlagBits::eUniformTexelBuffer)
    d.max_texel_buffer_elements = p.limits.maxTexelBufferElements;
  d.timestamps = p.limits.timestampComputeAndGraphics;
  auto feats =
      pd.getFeatures2<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceShaderFloat16Int8Features,
                      vk::PhysicalDevice8BitStorageFeatures, vk::PhysicalDevice16BitStorageFeatures>();
  const auto& f = feats.get<vk::PhysicalDeviceFeatures2>().features;
  d.shader_int64 = f.shaderInt64;
  d.shader_float64 = f.shaderFloat64;
  d.shader_int8 = feats.get<vk::PhysicalDeviceShaderFloat16Int8Features>().shaderInt8;
  d.shader_float16 = feats.get<vk::PhysicalDeviceShaderFloat16Int8Features>().shaderFloat16;
  d.storage_8bit = feats.get<vk::PhysicalDevice8BitStorageFeatures>().storageBuffer8BitAccess;
  d.storage_16bit = feats.get<vk::PhysicalDevice16BitStorageFeatures>().storageBuffer16BitAccess;
  if (extensions.count(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME)) {
    const auto controls =
        pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceFloatControlsProperties>()
            .get<vk::PhysicalDeviceFloatControlsProperties>();
    d.inf_nan_preserve_f32 = controls.shaderSignedZeroInfNanPreserveFloat32;
    d.rte_f32 = controls.shaderRoundingModeRTEFloat32;
    if (d.shader_float16 && extensions.count(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) {
      d.f16_rte = controls.shaderRoundingModeRTEFloat16;
    }
  }
  describe_compute_units(pd, extensions, d);
  const auto mem = pd.getMemoryProperties();
  const auto shared = vk::MemoryPropertyFlagBits::eDeviceLocal | vk::MemoryPropertyFlagBits::eHostVisible |
                      vk::MemoryPropertyFlagBits::eHostCoherent;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    d.host_shared_memory = d.host_shared_memory || (mem.memoryTypes[i].propertyFlags & shared) == shared;
  return d;
}

std::vector<DeviceInfo> list_devices() {
  vk::raii::Context context;
  auto instance = make_instance(context, validation_requested());
  std::vector<DeviceInfo> out;
  int i = 0;
  for (const auto& pd : instance.enumeratePhysicalDevices()) out.push_back(describe(pd, i++));
  return out;
}

void check_descriptor_limits(const std::string& name, const ShaderInterface& shader, const DeviceInfo& dev) {
  if (shader.buffers.size() > dev.max_stage_storage_buffers)
    throw SkipCase(name + " binds " + std::to_string(shader.buffers.size()) + " storage buffers; " +
                   dev.name + " allows " + std::to_string(dev.max_stage_storage_buffers) + " per stage");
  if (shader.texel_buffers.empty()) return;
  if (dev.max_texel_buffer_elements == 0)
    throw SkipCase(name + " reads uniform texel buffers of R32G32B32A32_UINT, which " + dev.name +
                   " does not support");
  if (shader.texel_buffers.size() > dev.max_stage_sampled_images)
    throw SkipCase(name + " binds " + std::to_string(shader.texel_buffers.size()) + " texel buffers; " +
                   dev.name + " allows " + std::to_string(dev.max_stage_sampled_images) + " per stage");
}

int default_device_index(const std::vector<DeviceInfo>& devices) {
  for (const auto& d : devices)
    if (d.is_gpu && !d.null_device) return d.index;
  for (const auto& d : devices)
    if (!d.null_device) return d.index;
  return -1;
}

}  // namespace kvbench
