#include "vk/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <stdexcept>
#include <utility>

#include "core/error.hpp"
#include "vk/runtime_internal.hpp"
#include "vk/spirv_reflect.hpp"

namespace kvbench {
namespace {

bool validation_requested() { return env_value("KVBENCH_VALIDATION") == "1"; }

// KVBENCH_VALIDATION=1 turns on the Khronos validation layer (CI runs a shard with it).
// `messenger` (may be null) is chained in, so instance creation and destruction report too.
vk::raii::Instance make_instance(const vk::raii::Context& context, bool validation,
                                 const vk::DebugUtilsMessengerCreateInfoEXT* messenger = nullptr) {
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

DeviceInfo describe(const vk::raii::PhysicalDevice& pd, int index) {
  DeviceInfo d;
  d.index = index;
  auto props = pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceSubgroupProperties,
                                 vk::PhysicalDeviceDriverProperties>();
  const auto& p = props.get<vk::PhysicalDeviceProperties2>().properties;
  d.name = p.deviceName.data();
  d.type = type_name(p.deviceType);
  d.is_gpu = p.deviceType == vk::PhysicalDeviceType::eDiscreteGpu ||
             p.deviceType == vk::PhysicalDeviceType::eIntegratedGpu ||
             p.deviceType == vk::PhysicalDeviceType::eVirtualGpu;
  d.null_device = d.name.rfind("Null hardware", 0) == 0;
  d.api_version = std::to_string(VK_API_VERSION_MAJOR(p.apiVersion)) + "." +
                  std::to_string(VK_API_VERSION_MINOR(p.apiVersion)) + "." +
                  std::to_string(VK_API_VERSION_PATCH(p.apiVersion));
  const auto& drv = props.get<vk::PhysicalDeviceDriverProperties>();
  d.driver = std::string(drv.driverName.data()) + " " + drv.driverInfo.data();
  const auto& sg = props.get<vk::PhysicalDeviceSubgroupProperties>();
  d.subgroup_size = sg.subgroupSize;
  d.subgroup_shuffle = (sg.supportedOperations & vk::SubgroupFeatureFlagBits::eShuffle) &&
                       (sg.supportedStages & vk::ShaderStageFlagBits::eCompute);
  d.subgroup_arithmetic = (sg.supportedOperations & vk::SubgroupFeatureFlagBits::eArithmetic) &&
                          (sg.supportedStages & vk::ShaderStageFlagBits::eCompute);
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
  if (d.shader_float16 && extensions.count(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME) &&
      extensions.count(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME))
    d.f16_rte = pd.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceFloatControlsProperties>()
                    .get<vk::PhysicalDeviceFloatControlsProperties>()
                    .shaderRoundingModeRTEFloat16;
  describe_compute_units(pd, extensions, d);
  const auto mem = pd.getMemoryProperties();
  const auto shared = vk::MemoryPropertyFlagBits::eDeviceLocal | vk::MemoryPropertyFlagBits::eHostVisible |
                      vk::MemoryPropertyFlagBits::eHostCoherent;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    d.host_shared_memory = d.host_shared_memory || (mem.memoryTypes[i].propertyFlags & shared) == shared;
  return d;
}

}  // namespace

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

uint64_t timestamp_ticks(uint64_t begin, uint64_t end, uint32_t valid_bits) {
  const uint64_t mask = valid_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << valid_bits) - 1;
  return (end - begin) & mask;
}

int default_device_index(const std::vector<DeviceInfo>& devices) {
  for (const auto& d : devices)
    if (d.is_gpu && !d.null_device) return d.index;
  for (const auto& d : devices)
    if (!d.null_device) return d.index;
  return -1;
}

struct Runtime::ValidationLog {
  std::mutex mutex;
  ValidationMessages messages;

  // Counts errors and warnings; performance warnings (the best-practices checks) do not count.
  static VKAPI_ATTR VkBool32 VKAPI_CALL callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                 void* user) {
    const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    const std::string id = data && data->pMessageIdName ? data->pMessageIdName : "";
    const bool warning = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) &&
                         !(types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT) &&
                         id.find("BestPractices") == std::string::npos;
    if (!error && !warning) return VK_FALSE;
    auto* log = static_cast<ValidationLog*>(user);
    std::lock_guard lock(log->mutex);
    ++(error ? log->messages.errors : log->messages.warnings);
    if (log->messages.first.empty())
      log->messages.first = std::string(error ? "error " : "warning ") + (id.empty() ? "" : id + ": ") +
                            (data && data->pMessage ? data->pMessage : "");
    return VK_FALSE;  // the call goes on, as without the layer
  }
};

// ---- the runtime -------------------------------------------------------------------

namespace {

// The memory type for a buffer of `type_bits`: every `required` flag; then, best first,
// the `preferred` flags, and none of the `avoided`. Throws when none qualifies.
uint32_t pick_memory_type(const vk::PhysicalDeviceMemoryProperties& mem, uint32_t type_bits,
                          vk::MemoryPropertyFlags required, vk::MemoryPropertyFlags preferred,
                          vk::MemoryPropertyFlags avoided, const char* what) {
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    const auto flags = mem.memoryTypes[i].propertyFlags;
    if (!(type_bits & (1u << i)) || (flags & required) != required) continue;
    const int score = ((flags & preferred) == preferred ? 2 : 0) + (!(flags & avoided) ? 1 : 0);
    if (score > best_score) best = static_cast<int>(i), best_score = score;
  }
  if (best < 0) throw std::runtime_error(std::string("no memory type for ") + what);
  return static_cast<uint32_t>(best);
}

constexpr vk::BufferUsageFlags kBufferUsage =
    vk::BufferUsageFlagBits::eStorageBuffer | vk::BufferUsageFlagBits::eUniformBuffer |
    vk::BufferUsageFlagBits::eUniformTexelBuffer | vk::BufferUsageFlagBits::eTransferSrc |
    vk::BufferUsageFlagBits::eTransferDst;

}  // namespace

Runtime::Runtime(std::optional<int> index, RuntimeOptions options) {
  if (options.validation) {
    validation_ = std::make_unique<ValidationLog>();
    const vk::DebugUtilsMessengerCreateInfoEXT messenger{
        .messageSeverity = vk::DebugUtilsMessageSeverityFlagBitsEXT::eWarning |
                           vk::DebugUtilsMessageSeverityFlagBitsEXT::eError,
        .messageType = vk::DebugUtilsMessageTypeFlagBitsEXT::eGeneral |
                       vk::DebugUtilsMessageTypeFlagBitsEXT::eValidation |
                       vk::DebugUtilsMessageTypeFlagBitsEXT::ePerformance,
        .pfnUserCallback = &ValidationLog::callback,
        .pUserData = validation_.get()};
    instance_ = make_instance(context_, true, &messenger);
    messenger_ = vk::raii::DebugUtilsMessengerEXT(instance_, messenger);
  } else {
    instance_ = make_instance(context_, false);
  }
  auto physicals = instance_.enumeratePhysicalDevices();
  if (physicals.empty())
    throw std::runtime_error(
        "no Vulkan device found (install mesa-vulkan-drivers for lavapipe: tools/setup.sh)");
  std::vector<DeviceInfo> infos;
  for (size_t i = 0; i < physicals.size(); ++i) infos.push_back(describe(physicals[i], static_cast<int>(i)));
  const int chosen = index.value_or(default_device_index(infos));
  if (!index && chosen < 0)
    throw std::runtime_error("no Vulkan device that can run cases (only RADV's null device)");
  if (chosen < 0 || chosen >= static_cast<int>(physicals.size()))
    throw std::runtime_error("--device " + std::to_string(chosen) + " is out of range: there are " +
                             std::to_string(physicals.size()) + " Vulkan devices (see `kvbench devices`)");
  if (infos[chosen].null_device)
    throw std::runtime_error(
        "device " + std::to_string(chosen) + " (" + infos[chosen].name +
        ") is RADV's compile-only null device (RADV_FORCE_FAMILY is set): it cannot run cases");
  physical_ = std::move(physicals[chosen]);
  info_ = infos[chosen];

  const auto families = physical_.getQueueFamilyProperties();
  bool found = false;
  for (uint32_t i = 0; i < families.size() && !found; ++i)
    if (families[i].queueFlags & vk::QueueFlagBits::eCompute) {
      queue_family_ = i;
      found = true;
      info_.timestamps = info_.timestamps || families[i].timestampValidBits > 0;
      timestamp_valid_bits_ = families[i].timestampValidBits;
      if (families[i].timestampValidBits == 0) info_.timestamps = false;
    }
  if (!found) throw std::runtime_error("device " + info_.name + " has no compute queue");

  const float priority = 1.0f;
  vk::DeviceQueueCreateInfo queue_info{
      .queueFamilyIndex = queue_family_, .queueCount = 1, .pQueuePriorities = &priority};
  // What the kernels may use: the shader clock (bench) and f16 arithmetic rounding to
  // nearest even (the decode kernel's dequantization).
  std::vector<const char*> extensions;
  void* features = nullptr;
  vk::PhysicalDeviceShaderClockFeaturesKHR clock{.shaderSubgroupClock = VK_TRUE};
  if (info_.shader_clock) {
    extensions.push_back(VK_KHR_SHADER_CLOCK_EXTENSION_NAME);
    features = &clock;
  }
  vk::PhysicalDeviceShaderFloat16Int8Features float16{.pNext = features, .shaderFloat16 = VK_TRUE};
  if (info_.f16_rte) {
    extensions.push_back(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
    extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    features = &float16;
  }
  vk::DeviceCreateInfo device_info{.pNext = features,
                                   .queueCreateInfoCount = 1,
                                   .pQueueCreateInfos = &queue_info,
                                   .enabledExtensionCount = static_cast<uint32_t>(extensions.size()),
                                   .ppEnabledExtensionNames = extensions.data()};
  device_ = vk::raii::Device(physical_, device_info);
  queue_ = vk::raii::Queue(device_, queue_family_, 0);
  command_pool_ = vk::raii::CommandPool(
      device_, vk::CommandPoolCreateInfo{.flags = vk::CommandPoolCreateFlagBits::eResetCommandBuffer,
                                         .queueFamilyIndex = queue_family_});
  const auto limits = physical_.getProperties().limits;
  if (info_.timestamps) timestamp_period_ns_ = limits.timestampPeriod;
  uniform_alignment_ = std::max<uint64_t>(limits.minUniformBufferOffsetAlignment, 4);
  fence_ = vk::raii::Fence(device_, vk::FenceCreateInfo{});

  // The memory mode. Zero-copy where the device's own memory is mapped and shared with the
  // host (lavapipe, integrated GPUs); staging on a discrete GPU, whose kernels would
  // otherwise read host memory over PCIe.
  const auto mem = physical_.getMemoryProperties();
  using M = vk::MemoryPropertyFlagBits;
  const vk::MemoryPropertyFlags mapped = M::eHostVisible | M::eHostCoherent, local = M::eDeviceLocal;
  staging_ = options.staging.value_or(info_.default_memory_mode() == "staging");
  texels_ = options.texels;
  vk::raii::Buffer probe(
      device_,
      vk::BufferCreateInfo{.size = 256, .usage = kBufferUsage, .sharingMode = vk::SharingMode::eExclusive});
  const uint32_t bits = probe.getMemoryRequirements().memoryTypeBits;
  upload_memory_type_ =
      pick_memory_type(mem, bits, mapped, staging_ ? vk::MemoryPropertyFlags{} : local,
                       staging_ ? local : vk::MemoryPropertyFlags{}, "a host-visible coherent buffer");
  readback_memory_type_ =
      pick_memory_type(mem, bits, mapped, staging_ ? M::eHostCached : (local | M::eHostCached),
                       staging_ ? local : vk::MemoryPropertyFlags{}, "a host-visible coherent buffer");
  device_memory_type_ =
      staging_ ? pick_memory_type(mem, bits, {}, local, mapped, "a device-local storage buffer")
               : pick_memory_type(mem, bits, mapped, local, {}, "a host-visible coherent storage buffer");

  open_pipeline_cache(options);
}

Runtime::~Runtime() {
  pipelines_.clear();
  save_pipeline_cache();
}

ValidationMessages Runtime::take_validation_messages() {
  if (!validation_) return {};
  std::lock_guard lock(validation_->mutex);
  return std::exchange(validation_->messages, {});
}

std::unique_ptr<Buffer> Runtime::buffer(size_t bytes) {
  // Whole 16-byte texels, so that a `_texels` view covers every byte of the tensor.
  const size_t rounded = std::max<size_t>(16, (bytes + 15) / 16 * 16);
  if (rounded > info_.max_storage_buffer_range)
    throw SkipCase("a tensor of " + std::to_string(bytes) + " bytes exceeds maxStorageBufferRange (" +
                   std::to_string(info_.max_storage_buffer_range) + " bytes) of " + info_.name);
  return std::make_unique<Buffer>(*this, rounded, device_memory_type_, !staging_);
}

bool Runtime::texels_cover(const KernelBuffers& buffers, std::initializer_list<const char*> tensors) const {
  for (const char* name : tensors) {
    const Buffer* b = buffers.at(name);
    if (b && !texels_cover(b->size())) return false;
  }
  return texels_ && info_.max_texel_buffer_elements > 0;
}

std::unique_ptr<Buffer> Runtime::host_buffer(size_t bytes, bool readback) {
  return std::make_unique<Buffer>(*this, std::max<size_t>(4, (bytes + 3) / 4 * 4),
                                  readback ? readback_memory_type_ : upload_memory_type_, true);
}

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
  return key;
}

Runtime::Pipeline& Runtime::pipeline(const Kernel& kernel) {
  const std::string key = pipeline_key(kernel);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;
  const auto& shaders = embedded_shaders();
  auto code = shaders.find(kernel.shader);
  auto p = std::make_unique<Pipeline>();
  p->interface = reflect_shader(code->second);
  check_descriptor_limits(kernel.shader, p->interface, info_);
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
  vk::ComputePipelineCreateInfo info{.stage = {.stage = vk::ShaderStageFlagBits::eCompute,
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

double Runtime::dispatch(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params,
                         uint32_t gx, uint32_t gy, uint32_t gz) {
  Batch batch(*this);
  batch.dispatch(kernel, buffers, params, gx, gy, gz);
  return batch.submit();
}

// ---- buffers ---------------------------------------------------------------------

Buffer::Buffer(Runtime& rt, size_t bytes, uint32_t memory_type, bool mapped) : rt_(&rt), size_(bytes) {
  buffer_ = vk::raii::Buffer(
      rt.device_,
      vk::BufferCreateInfo{.size = bytes, .usage = kBufferUsage, .sharingMode = vk::SharingMode::eExclusive});
  const auto req = buffer_.getMemoryRequirements();
  if (!(req.memoryTypeBits & (1u << memory_type)))
    throw std::runtime_error("the chosen memory type does not suit a buffer of " + std::to_string(bytes) +
                             " bytes");
  memory_ = vk::raii::DeviceMemory(
      rt.device_, vk::MemoryAllocateInfo{.allocationSize = req.size, .memoryTypeIndex = memory_type});
  buffer_.bindMemory(*memory_, 0);
  if (mapped) mapped_ = static_cast<uint8_t*>(memory_.mapMemory(0, bytes));
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
