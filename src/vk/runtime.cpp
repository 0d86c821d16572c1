// The runtime itself: the instance (with the validation layer's messages counted), the
// device and its queue, the memory types of the memory mode, the subgroup-size probe, and
// one-dispatch batches (specs/runtime.md). Buffers, pipelines, the pipeline cache and
// batches have files of their own.
#include "vk/runtime.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "vk/runtime_internal.hpp"

namespace kvbench {
uint64_t timestamp_ticks(uint64_t begin, uint64_t end, uint32_t valid_bits) {
  const uint64_t mask = valid_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << valid_bits) - 1;
  return (end - begin) & mask;
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
  // What the kernels may use: the shader clock (bench), f16 arithmetic rounding to nearest
  // even (the decode kernel's dequantization), IEEE inf and NaN, required subgroup sizes.
  std::vector<const char*> extensions;
  void* features = nullptr;
  vk::PhysicalDeviceShaderClockFeaturesKHR clock{.shaderSubgroupClock = VK_TRUE};
  if (info_.shader_clock) {
    extensions.push_back(VK_KHR_SHADER_CLOCK_EXTENSION_NAME);
    features = &clock;
  }
  vk::PhysicalDeviceShaderFloat16Int8Features float16{.pNext = features, .shaderFloat16 = VK_TRUE};
  if (info_.f16_rte) {
    extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    features = &float16;
  }
  // SPIR-V's float controls: every shader declares SignedZeroInfNanPreserve (and the f16
  // decode module rounding to nearest even).
  if (info_.f16_rte || info_.inf_nan_preserve_f32 || info_.rte_f32)
    extensions.push_back(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
  // Pipelines that require their subgroup size, with full subgroups (Kernel::subgroup_size).
  vk::PhysicalDeviceSubgroupSizeControlFeaturesEXT size_control{
      .pNext = features, .subgroupSizeControl = VK_TRUE, .computeFullSubgroups = VK_TRUE};
  if (info_.subgroup_size_control) {
    extensions.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    features = &size_control;
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
  max_scratch_ = options.max_scratch;
  if (options.max_workgroups)
    info_.max_workgroup_count[0] = std::min(info_.max_workgroup_count[0], options.max_workgroups);
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

  // A driver may offer required subgroup sizes and not keep the promise: lavapipe at
  // LP_NATIVE_VECTOR_WIDTH=1024 reports and requires 32 lanes, and runs subgroups of 16. One
  // probe at the size the kernels require (the decode kernel's 4 subgroups, the lanes
  // kernel's 64 invocations) decides, so that no kernel runs on a broken promise.
  const uint32_t sg = info_.subgroup_size, count = sg ? std::max<uint32_t>(4, 64 / sg) : 0;
  if (info_.subgroup_size_control && info_.inf_nan_preserve_f32 && info_.rte_f32 &&
      info_.can_require_subgroups(sg, count) &&
      sg * count <= std::min(info_.max_workgroup_invocations, info_.max_workgroup_size_x)) {
    info_.subgroup_size_broken = probe_required_subgroups(sg, count);
    if (!info_.subgroup_size_broken.empty()) info_.subgroup_size_control = false;
  }
}

std::string Runtime::probe_required_subgroups(uint32_t size, uint32_t count) {
  const uint32_t n = size * count;
  auto out = buffer(size_t{16} * n);
  Kernel probe("subgroup_probe", {{"local_size_x", n}});
  probe.subgroup_size = size;
  dispatch(probe, {{"words", out.get()}}, {}, 1);
  std::vector<uint32_t> w(size_t{4} * n);
  out->download(std::span(reinterpret_cast<uint8_t*>(w.data()), w.size() * 4));
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t* v = &w[size_t{4} * i];
    if (v[0] != size || v[1] != count || v[2] != i / size || v[3] != i % size)
      return "required " + std::to_string(count) + " full subgroups of " + std::to_string(size) +
             " lanes; invocation " + std::to_string(i) + " ran with gl_SubgroupSize " + std::to_string(v[0]) +
             ", gl_NumSubgroups " + std::to_string(v[1]) + ", gl_SubgroupID " + std::to_string(v[2]) +
             ", gl_SubgroupInvocationID " + std::to_string(v[3]);
  }
  return "";
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

bool Runtime::texels_cover(const KernelBuffers& buffers, std::initializer_list<const char*> tensors) const {
  for (const char* name : tensors) {
    const Buffer* b = buffers.at(name);
    if (b && !texels_cover(b->size())) return false;
  }
  return texels_ && info_.max_texel_buffer_elements > 0;
}

double Runtime::dispatch(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params,
                         uint32_t gx, uint32_t gy, uint32_t gz) {
  Batch batch(*this);
  batch.dispatch(kernel, buffers, params, gx, gy, gz);
  return batch.submit();
}

}  // namespace kvbench
