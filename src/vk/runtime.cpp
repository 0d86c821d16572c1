#include "vk/runtime.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "core/error.hpp"
#include "vk/spirv_reflect.hpp"

namespace kvbench {
namespace {

bool validation_requested() {
  const char* v = std::getenv("KVBENCH_VALIDATION");
  return v && std::string(v) == "1";
}

// KVBENCH_VALIDATION=1 turns on the Khronos validation layer (CI runs a shard with it).
// `messenger` (may be null) is chained in, so instance creation and destruction report too.
vk::raii::Instance make_instance(const vk::raii::Context& context,
                                 const vk::DebugUtilsMessengerCreateInfoEXT* messenger = nullptr) {
  vk::ApplicationInfo app{.pApplicationName = "kvbench", .applicationVersion = 1,
                          .pEngineName = "kvbench", .engineVersion = 1, .apiVersion = VK_API_VERSION_1_1};
  std::vector<const char*> layers, extensions;
  if (validation_requested()) layers.push_back("VK_LAYER_KHRONOS_validation");
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
    throw std::runtime_error("KVBENCH_VALIDATION=1 but the Khronos validation layer is not installed "
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
  d.api_version = std::to_string(VK_API_VERSION_MAJOR(p.apiVersion)) + "." +
                  std::to_string(VK_API_VERSION_MINOR(p.apiVersion)) + "." +
                  std::to_string(VK_API_VERSION_PATCH(p.apiVersion));
  const auto& drv = props.get<vk::PhysicalDeviceDriverProperties>();
  d.driver = std::string(drv.driverName.data()) + " " + drv.driverInfo.data();
  const auto& sg = props.get<vk::PhysicalDeviceSubgroupProperties>();
  d.subgroup_size = sg.subgroupSize;
  d.subgroup_shuffle = (sg.supportedOperations & vk::SubgroupFeatureFlagBits::eShuffle) &&
                       (sg.supportedStages & vk::ShaderStageFlagBits::eCompute);
  d.shared_memory_bytes = p.limits.maxComputeSharedMemorySize;
  d.max_storage_buffer_range = p.limits.maxStorageBufferRange;
  for (int i = 0; i < 3; ++i) d.max_workgroup_count[i] = p.limits.maxComputeWorkGroupCount[i];
  d.timestamps = p.limits.timestampComputeAndGraphics;
  auto feats = pd.getFeatures2<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceShaderFloat16Int8Features,
                               vk::PhysicalDevice8BitStorageFeatures, vk::PhysicalDevice16BitStorageFeatures>();
  const auto& f = feats.get<vk::PhysicalDeviceFeatures2>().features;
  d.shader_int64 = f.shaderInt64;
  d.shader_float64 = f.shaderFloat64;
  d.shader_int8 = feats.get<vk::PhysicalDeviceShaderFloat16Int8Features>().shaderInt8;
  d.shader_float16 = feats.get<vk::PhysicalDeviceShaderFloat16Int8Features>().shaderFloat16;
  d.storage_8bit = feats.get<vk::PhysicalDevice8BitStorageFeatures>().storageBuffer8BitAccess;
  d.storage_16bit = feats.get<vk::PhysicalDevice16BitStorageFeatures>().storageBuffer16BitAccess;
  return d;
}

uint32_t find_memory_type(const vk::raii::PhysicalDevice& pd, uint32_t type_bits) {
  const auto mem = pd.getMemoryProperties();
  const auto want = vk::MemoryPropertyFlagBits::eHostVisible | vk::MemoryPropertyFlagBits::eHostCoherent;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    if ((type_bits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) return i;
  throw std::runtime_error("no host-visible coherent memory type for a storage buffer");
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  vk::raii::Context context;
  auto instance = make_instance(context);
  std::vector<DeviceInfo> out;
  int i = 0;
  for (const auto& pd : instance.enumeratePhysicalDevices()) out.push_back(describe(pd, i++));
  return out;
}

int default_device_index(const std::vector<DeviceInfo>& devices) {
  for (const auto& d : devices)
    if (d.is_gpu) return d.index;
  return devices.empty() ? -1 : 0;
}

struct Runtime::Pipeline {
  ShaderInterface interface;
  vk::raii::DescriptorSetLayout set_layout{nullptr};
  vk::raii::DescriptorPool pool{nullptr};  // one set, sized to this shader's bindings
  vk::raii::PipelineLayout layout{nullptr};
  vk::raii::ShaderModule module{nullptr};
  vk::raii::Pipeline pipeline{nullptr};
};

struct Runtime::ValidationLog {
  std::mutex mutex;
  ValidationMessages messages;

  // Counts errors and warnings; performance warnings (the best-practices checks) do not count.
  static VKAPI_ATTR VkBool32 VKAPI_CALL callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
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

Runtime::Runtime(std::optional<int> index) {
  if (validation_requested()) {
    validation_ = std::make_unique<ValidationLog>();
    const vk::DebugUtilsMessengerCreateInfoEXT messenger{
        .messageSeverity = vk::DebugUtilsMessageSeverityFlagBitsEXT::eWarning | vk::DebugUtilsMessageSeverityFlagBitsEXT::eError,
        .messageType = vk::DebugUtilsMessageTypeFlagBitsEXT::eGeneral | vk::DebugUtilsMessageTypeFlagBitsEXT::eValidation |
                       vk::DebugUtilsMessageTypeFlagBitsEXT::ePerformance,
        .pfnUserCallback = &ValidationLog::callback,
        .pUserData = validation_.get()};
    instance_ = make_instance(context_, &messenger);
    messenger_ = vk::raii::DebugUtilsMessengerEXT(instance_, messenger);
  } else {
    instance_ = make_instance(context_);
  }
  auto physicals = instance_.enumeratePhysicalDevices();
  if (physicals.empty())
    throw std::runtime_error("no Vulkan device found (install mesa-vulkan-drivers for lavapipe: tools/setup.sh)");
  std::vector<DeviceInfo> infos;
  for (size_t i = 0; i < physicals.size(); ++i) infos.push_back(describe(physicals[i], static_cast<int>(i)));
  const int chosen = index.value_or(default_device_index(infos));
  if (chosen < 0 || chosen >= static_cast<int>(physicals.size()))
    throw std::runtime_error("--device " + std::to_string(chosen) + " is out of range: there are " +
                             std::to_string(physicals.size()) + " Vulkan devices (see `kvbench devices`)");
  physical_ = std::move(physicals[chosen]);
  info_ = infos[chosen];

  const auto families = physical_.getQueueFamilyProperties();
  bool found = false;
  for (uint32_t i = 0; i < families.size() && !found; ++i)
    if (families[i].queueFlags & vk::QueueFlagBits::eCompute) {
      queue_family_ = i;
      found = true;
      info_.timestamps = info_.timestamps || families[i].timestampValidBits > 0;
      if (families[i].timestampValidBits == 0) info_.timestamps = false;
    }
  if (!found) throw std::runtime_error("device " + info_.name + " has no compute queue");

  const float priority = 1.0f;
  vk::DeviceQueueCreateInfo queue_info{.queueFamilyIndex = queue_family_, .queueCount = 1, .pQueuePriorities = &priority};
  vk::DeviceCreateInfo device_info{.queueCreateInfoCount = 1, .pQueueCreateInfos = &queue_info};
  device_ = vk::raii::Device(physical_, device_info);
  queue_ = vk::raii::Queue(device_, queue_family_, 0);
  command_pool_ = vk::raii::CommandPool(
      device_, vk::CommandPoolCreateInfo{.flags = vk::CommandPoolCreateFlagBits::eResetCommandBuffer,
                                         .queueFamilyIndex = queue_family_});
  if (info_.timestamps) {
    query_pool_ = vk::raii::QueryPool(device_, vk::QueryPoolCreateInfo{.queryType = vk::QueryType::eTimestamp, .queryCount = 2});
    timestamp_period_ns_ = physical_.getProperties().limits.timestampPeriod;
  }
  fence_ = vk::raii::Fence(device_, vk::FenceCreateInfo{});
}

Runtime::~Runtime() = default;

ValidationMessages Runtime::take_validation_messages() {
  if (!validation_) return {};
  std::lock_guard lock(validation_->mutex);
  return std::exchange(validation_->messages, {});
}

std::unique_ptr<Buffer> Runtime::buffer(size_t bytes) {
  const size_t rounded = std::max<size_t>(4, (bytes + 3) / 4 * 4);
  if (rounded > info_.max_storage_buffer_range)
    throw SkipCase("a tensor of " + std::to_string(bytes) + " bytes exceeds maxStorageBufferRange (" +
                   std::to_string(info_.max_storage_buffer_range) + " bytes) of " + info_.name);
  return std::make_unique<Buffer>(device_, physical_, rounded);
}

std::string Kernel::key() const {
  std::string k = shader;
  for (uint32_t c : constants) k += ":" + std::to_string(c);
  return k;
}

Runtime::Pipeline& Runtime::pipeline(const Kernel& kernel) {
  auto it = pipelines_.find(kernel.key());
  if (it != pipelines_.end()) return *it->second;
  const auto& shaders = embedded_shaders();
  auto code = shaders.find(kernel.shader);
  if (code == shaders.end()) throw std::logic_error("no embedded shader named " + kernel.shader);
  auto p = std::make_unique<Pipeline>();
  p->interface = reflect_shader(code->second);
  std::vector<vk::DescriptorSetLayoutBinding> slots;
  for (const auto& [binding, names] : p->interface.buffers)
    slots.push_back({.binding = binding, .descriptorType = vk::DescriptorType::eStorageBuffer, .descriptorCount = 1,
                     .stageFlags = vk::ShaderStageFlagBits::eCompute});
  if (p->interface.params_binding)
    slots.push_back({.binding = *p->interface.params_binding, .descriptorType = vk::DescriptorType::eUniformBuffer,
                     .descriptorCount = 1, .stageFlags = vk::ShaderStageFlagBits::eCompute});
  p->set_layout = vk::raii::DescriptorSetLayout(
      device_, vk::DescriptorSetLayoutCreateInfo{.bindingCount = static_cast<uint32_t>(slots.size()), .pBindings = slots.data()});
  std::vector<vk::DescriptorPoolSize> sizes{{.type = vk::DescriptorType::eStorageBuffer,
                                             .descriptorCount = std::max<uint32_t>(1, static_cast<uint32_t>(p->interface.buffers.size()))},
                                            {.type = vk::DescriptorType::eUniformBuffer, .descriptorCount = 1}};
  p->pool = vk::raii::DescriptorPool(
      device_, vk::DescriptorPoolCreateInfo{.flags = vk::DescriptorPoolCreateFlagBits::eFreeDescriptorSet, .maxSets = 1,
                                            .poolSizeCount = static_cast<uint32_t>(sizes.size()), .pPoolSizes = sizes.data()});
  vk::DescriptorSetLayout set_layout = *p->set_layout;
  p->layout = vk::raii::PipelineLayout(device_, vk::PipelineLayoutCreateInfo{.setLayoutCount = 1, .pSetLayouts = &set_layout});
  p->module = vk::raii::ShaderModule(
      device_, vk::ShaderModuleCreateInfo{.codeSize = code->second.size() * 4, .pCode = code->second.data()});
  std::vector<vk::SpecializationMapEntry> entries;
  for (uint32_t i = 0; i < kernel.constants.size(); ++i)
    entries.push_back({.constantID = i, .offset = i * 4, .size = 4});
  vk::SpecializationInfo spec{.mapEntryCount = static_cast<uint32_t>(entries.size()), .pMapEntries = entries.data(),
                              .dataSize = kernel.constants.size() * 4, .pData = kernel.constants.data()};
  vk::ComputePipelineCreateInfo info{
      .stage = {.stage = vk::ShaderStageFlagBits::eCompute, .module = *p->module, .pName = "main",
                .pSpecializationInfo = entries.empty() ? nullptr : &spec},
      .layout = *p->layout};
  p->pipeline = vk::raii::Pipeline(device_, nullptr, info);
  return *pipelines_.emplace(kernel.key(), std::move(p)).first->second;
}

namespace {

// The Params block's bytes: every member given, in its type's range, nothing unknown.
std::vector<uint8_t> pack_params(const std::string& shader, const ShaderInterface& iface, const KernelParams& params) {
  std::vector<uint8_t> bytes(std::max<uint32_t>(iface.params_bytes, 4), 0);
  for (const auto& f : iface.params) {
    auto it = params.find(f.name);
    if (it == params.end()) throw std::logic_error(shader + ": parameter " + f.name + " is not given");
    const double v = it->second.value;
    uint32_t word = 0;
    if (f.type == ShaderInterface::Scalar::f32) {
      const float x = static_cast<float>(v);
      std::memcpy(&word, &x, 4);
    } else {
      const bool is_signed = f.type == ShaderInterface::Scalar::i32;
      const double lo = is_signed ? -2147483648.0 : 0.0, hi = is_signed ? 2147483647.0 : 4294967295.0;
      if (v != std::floor(v) || v < lo || v > hi)
        throw std::logic_error(shader + ": parameter " + f.name + " = " + std::to_string(v) + " does not fit its " +
                               (is_signed ? "int" : "uint"));
      word = is_signed ? static_cast<uint32_t>(static_cast<int32_t>(v)) : static_cast<uint32_t>(v);
    }
    std::memcpy(bytes.data() + f.offset, &word, 4);
  }
  for (const auto& [name, value] : params) {
    bool known = false;
    for (const auto& f : iface.params) known = known || f.name == name;
    if (!known) throw std::logic_error(shader + ": the shader has no parameter " + name);
  }
  return bytes;
}

}  // namespace

double Runtime::dispatch(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params, uint32_t gx,
                         uint32_t gy, uint32_t gz) {
  const std::string& name = kernel.shader;
  const auto& most = info_.max_workgroup_count;
  if (gx > most[0] || gy > most[1] || gz > most[2])
    throw std::logic_error(name + ": " + std::to_string(gx) + " x " + std::to_string(gy) + " x " + std::to_string(gz) +
                           " workgroups exceed maxComputeWorkGroupCount (" + std::to_string(most[0]) + ", " +
                           std::to_string(most[1]) + ", " + std::to_string(most[2]) + ") of " + info_.name);
  Pipeline& p = pipeline(kernel);
  if (!placeholder_) placeholder_ = buffer(16);
  std::vector<vk::DescriptorBufferInfo> infos;
  std::vector<uint32_t> slots;
  for (const auto& [binding, names] : p.interface.buffers) {
    Buffer* b = nullptr;
    bool given = false;
    for (const auto& n : names) {
      auto it = buffers.find(n);
      if (it == buffers.end()) continue;
      given = true;
      b = it->second ? it->second : placeholder_.get();
    }
    if (!given) throw std::logic_error(name + ": no buffer given for binding " + std::to_string(binding) + " (" + names[0] + ")");
    infos.push_back({.buffer = *b->handle(), .offset = 0, .range = VK_WHOLE_SIZE});
    slots.push_back(binding);
  }
  if (p.interface.params_binding) {
    const std::vector<uint8_t> bytes = pack_params(name, p.interface, params);
    if (!params_ || params_->size() < bytes.size()) params_ = buffer(std::max<size_t>(bytes.size(), 256));
    params_->upload(bytes);
    infos.push_back({.buffer = *params_->handle(), .offset = 0, .range = bytes.size()});
    slots.push_back(*p.interface.params_binding);
  } else if (!params.empty()) {
    throw std::logic_error(name + ": the shader takes no parameters");
  }
  vk::DescriptorSetLayout set_layout = *p.set_layout;
  vk::raii::DescriptorSets sets(device_, vk::DescriptorSetAllocateInfo{.descriptorPool = *p.pool,
                                                                       .descriptorSetCount = 1, .pSetLayouts = &set_layout});
  std::vector<vk::WriteDescriptorSet> writes;
  for (size_t i = 0; i < infos.size(); ++i) {
    const bool uniform = p.interface.params_binding && slots[i] == *p.interface.params_binding;
    writes.push_back({.dstSet = *sets[0], .dstBinding = slots[i], .descriptorCount = 1,
                      .descriptorType = uniform ? vk::DescriptorType::eUniformBuffer : vk::DescriptorType::eStorageBuffer,
                      .pBufferInfo = &infos[i]});
  }
  device_.updateDescriptorSets(writes, nullptr);

  vk::raii::CommandBuffers cmds(device_, vk::CommandBufferAllocateInfo{.commandPool = *command_pool_,
                                                                       .level = vk::CommandBufferLevel::ePrimary,
                                                                       .commandBufferCount = 1});
  auto& cmd = cmds[0];
  cmd.begin(vk::CommandBufferBeginInfo{.flags = vk::CommandBufferUsageFlagBits::eOneTimeSubmit});
  if (info_.timestamps) {
    cmd.resetQueryPool(*query_pool_, 0, 2);
    cmd.writeTimestamp(vk::PipelineStageFlagBits::eTopOfPipe, *query_pool_, 0);
  }
  cmd.bindPipeline(vk::PipelineBindPoint::eCompute, *p.pipeline);
  cmd.bindDescriptorSets(vk::PipelineBindPoint::eCompute, *p.layout, 0, {*sets[0]}, nullptr);
  cmd.dispatch(gx, gy, gz);
  if (info_.timestamps) cmd.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, *query_pool_, 1);
  // Make the shader's writes visible to the host reads that follow.
  vk::MemoryBarrier barrier{.srcAccessMask = vk::AccessFlagBits::eShaderWrite, .dstAccessMask = vk::AccessFlagBits::eHostRead};
  cmd.pipelineBarrier(vk::PipelineStageFlagBits::eComputeShader, vk::PipelineStageFlagBits::eHost, {}, barrier, nullptr, nullptr);
  cmd.end();

  vk::CommandBuffer raw = *cmd;
  queue_.submit(vk::SubmitInfo{.commandBufferCount = 1, .pCommandBuffers = &raw}, *fence_);
  // Block in the driver rather than spin: a spinning host thread steals a core from lavapipe.
  if (device_.waitForFences({*fence_}, VK_TRUE, UINT64_MAX) != vk::Result::eSuccess)
    throw std::runtime_error("waiting for the dispatch of " + name + " failed");
  device_.resetFences({*fence_});
  if (!info_.timestamps) return 0;
  auto [result, stamps] = query_pool_.getResults<uint64_t>(0, 2, 2 * sizeof(uint64_t), sizeof(uint64_t),
                                                           vk::QueryResultFlagBits::e64 | vk::QueryResultFlagBits::eWait);
  return static_cast<double>(stamps[1] - stamps[0]) * timestamp_period_ns_ * 1e-6;
}

Buffer::Buffer(const vk::raii::Device& device, const vk::raii::PhysicalDevice& physical, size_t bytes) : size_(bytes) {
  buffer_ = vk::raii::Buffer(device, vk::BufferCreateInfo{.size = bytes,
                                                          .usage = vk::BufferUsageFlagBits::eStorageBuffer |
                                                                   vk::BufferUsageFlagBits::eUniformBuffer,
                                                          .sharingMode = vk::SharingMode::eExclusive});
  const auto req = buffer_.getMemoryRequirements();
  memory_ = vk::raii::DeviceMemory(device, vk::MemoryAllocateInfo{.allocationSize = req.size,
                                                                  .memoryTypeIndex = find_memory_type(physical, req.memoryTypeBits)});
  buffer_.bindMemory(*memory_, 0);
  mapped_ = static_cast<uint8_t*>(memory_.mapMemory(0, bytes));
}

Buffer::~Buffer() {
  if (mapped_) memory_.unmapMemory();
}

void Buffer::upload(std::span<const uint8_t> bytes) {
  if (bytes.size() > size_) throw std::logic_error("upload larger than the buffer");
  std::memcpy(mapped_, bytes.data(), bytes.size());
}

void Buffer::download(std::span<uint8_t> bytes) const {
  if (bytes.size() > size_) throw std::logic_error("download larger than the buffer");
  std::memcpy(bytes.data(), mapped_, bytes.size());
}

}  // namespace kvbench
