#include "vk/runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
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


// ---- options and the cache directory ----------------------------------------------

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

RuntimeOptions RuntimeOptions::from_env() {
  RuntimeOptions o;
  const std::string staging = env("KVBENCH_STAGING");
  if (staging == "1") o.staging = true;
  if (staging == "0") o.staging = false;
  o.pipeline_cache = env("KVBENCH_PIPELINE_CACHE") != "0";
  return o;
}

std::string default_cache_dir() {
  if (const std::string d = env("KVBENCH_CACHE_DIR"); !d.empty()) return d;
  if (const std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/kvbench";
  if (const std::string d = env("HOME"); !d.empty()) return d + "/.cache/kvbench";
  return "";
}

// ---- the pipeline cache file ---------------------------------------------------------
//
// The file is kvbench's 32-byte header (magic, format version, the size and FNV-1a hash of
// what follows), then the driver's vkGetPipelineCacheData bytes, whose own header
// (VkPipelineCacheHeaderVersionOne) must name this device. Truncation and corruption are
// caught by the size and hash before the driver sees the data; a file of another device or
// driver build is caught by the header (and the file name makes one unlikely).

namespace {

constexpr char kCacheMagic[8] = {'K', 'V', 'B', 'P', 'C', 'A', 'C', 'H'};
constexpr uint32_t kCacheFormat = 1;
constexpr size_t kCacheHeaderBytes = 32;
constexpr size_t kDriverHeaderBytes = 32;  // sizeof(VkPipelineCacheHeaderVersionOne)

uint64_t fnv1a(std::span<const uint8_t> bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

std::string hex(std::span<const uint8_t> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) s += {digits[b >> 4], digits[b & 15]};
  return s;
}

std::string hex32(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// The file's name: device and driver build, so that a driver update starts a new file.
std::string cache_file_name(const vk::PhysicalDeviceProperties& p) {
  return "pipelines-" + hex32(p.vendorID) + "-" + hex32(p.deviceID) + "-" + hex32(p.driverVersion) + "-" +
         hex(std::span(p.pipelineCacheUUID.data(), VK_UUID_SIZE)) + ".bin";
}

std::optional<std::vector<uint8_t>> read_file(const std::string& path, std::string& error) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  if (!std::filesystem::is_regular_file(path, ec)) {
    error = "not a regular file";
    return std::nullopt;
  }
  try {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes;
    if (in) bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) throw std::runtime_error("read error");
    return bytes;
  } catch (const std::exception& e) {
    error = std::string("cannot read it (") + e.what() + ")";
    return std::nullopt;
  }
}

uint32_t word(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The driver data of a cache file, or why it cannot be used.
std::optional<std::vector<uint8_t>> cache_payload(const std::vector<uint8_t>& file, const vk::PhysicalDeviceProperties& p,
                                                  std::string& why) {
  if (file.size() < kCacheHeaderBytes || std::memcmp(file.data(), kCacheMagic, 8) != 0) {
    why = "not a kvbench pipeline cache file";
    return std::nullopt;
  }
  uint64_t size, hash;
  std::memcpy(&size, file.data() + 16, 8);
  std::memcpy(&hash, file.data() + 24, 8);
  if (word(file.data() + 8) != kCacheFormat) {
    why = "format version " + std::to_string(word(file.data() + 8)) + ", not " + std::to_string(kCacheFormat);
    return std::nullopt;
  }
  const std::span payload(file.data() + kCacheHeaderBytes, file.size() - kCacheHeaderBytes);
  if (size != payload.size()) {
    why = "truncated or extended: " + std::to_string(payload.size()) + " bytes of data where the header says " +
          std::to_string(size);
    return std::nullopt;
  }
  if (fnv1a(payload) != hash) {
    why = "corrupt: the data's checksum does not match";
    return std::nullopt;
  }
  // VkPipelineCacheHeaderVersionOne: headerSize, headerVersion, vendorID, deviceID, pipelineCacheUUID.
  if (payload.size() < kDriverHeaderBytes || word(payload.data()) < kDriverHeaderBytes || word(payload.data()) > payload.size() ||
      word(payload.data() + 4) != static_cast<uint32_t>(vk::PipelineCacheHeaderVersion::eOne)) {
    why = "the driver data has no valid VkPipelineCacheHeaderVersionOne";
    return std::nullopt;
  }
  if (word(payload.data() + 8) != p.vendorID || word(payload.data() + 12) != p.deviceID ||
      std::memcmp(payload.data() + 16, p.pipelineCacheUUID.data(), VK_UUID_SIZE) != 0) {
    why = "made by another device or driver (vendor " + hex32(word(payload.data() + 8)) + ", device " +
          hex32(word(payload.data() + 12)) + ", pipelineCacheUUID " + hex(payload.subspan(16, VK_UUID_SIZE)) + ")";
    return std::nullopt;
  }
  return std::vector<uint8_t>(payload.begin(), payload.end());
}

// A problem with the cache is reported once per process and never fails the run.
void report_cache_problem(const std::string& message) {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) std::cerr << "kvbench: pipeline cache: " << message << "\n";
}

// Temp file + rename: a reader sees the old file or the new one, never a part.
void write_cache_file(const std::string& path, const std::vector<uint8_t>& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::vector<uint8_t> file(kCacheHeaderBytes, 0);
  std::memcpy(file.data(), kCacheMagic, 8);
  std::memcpy(file.data() + 8, &kCacheFormat, 4);
  const uint64_t size = data.size(), hash = fnv1a(data);
  std::memcpy(file.data() + 16, &size, 8);
  std::memcpy(file.data() + 24, &hash, 8);
  file.insert(file.end(), data.begin(), data.end());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw std::runtime_error("cannot write " + tmp);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
}

}  // namespace

void Runtime::open_pipeline_cache(const RuntimeOptions& options) {
  const std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  if (!options.pipeline_cache || dir.empty()) return;  // pipelines are built without a cache
  const auto props = physical_.getProperties();
  cache_status_.enabled = true;
  cache_status_.path = dir + "/" + cache_file_name(props);
  std::string why;
  std::vector<uint8_t> initial;
  if (auto file = read_file(cache_status_.path, why)) {
    if (auto payload = cache_payload(*file, props, why)) initial = std::move(*payload);
  }
  if (!initial.empty()) {
    try {
      pipeline_cache_ = vk::raii::PipelineCache(
          device_, vk::PipelineCacheCreateInfo{.initialDataSize = initial.size(), .pInitialData = initial.data()});
      cache_status_.loaded_bytes = initial.size();
      cache_on_disk_ = std::move(initial);
    } catch (const vk::SystemError& e) {
      why = std::string("the driver rejected it (") + e.what() + ")";
    }
  }
  if (!why.empty()) {
    cache_status_.ignored = why;
    report_cache_problem("ignoring " + cache_status_.path + ": " + why + "; it will be replaced");
  }
  if (!*pipeline_cache_) pipeline_cache_ = vk::raii::PipelineCache(device_, vk::PipelineCacheCreateInfo{});
}

void Runtime::save_pipeline_cache() noexcept {
  if (!*pipeline_cache_) return;
  try {
    const auto props = physical_.getProperties();
    // Another process may have written the file since it was read: merge its pipelines in.
    std::string why;
    if (auto file = read_file(cache_status_.path, why))
      if (auto theirs = cache_payload(*file, props, why); theirs && *theirs != cache_on_disk_) {
        vk::raii::PipelineCache other(device_,
                                      vk::PipelineCacheCreateInfo{.initialDataSize = theirs->size(), .pInitialData = theirs->data()});
        pipeline_cache_.merge(*other);
        cache_on_disk_ = std::move(*theirs);
      }
    const std::vector<uint8_t> data = pipeline_cache_.getData();
    if (data == cache_on_disk_ && cache_status_.ignored.empty()) return;  // unchanged
    write_cache_file(cache_status_.path, data);
  } catch (const std::exception& e) {
    report_cache_problem(std::string("not saved: ") + e.what());
  }
}

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

constexpr vk::BufferUsageFlags kBufferUsage = vk::BufferUsageFlagBits::eStorageBuffer | vk::BufferUsageFlagBits::eUniformBuffer |
                                              vk::BufferUsageFlagBits::eTransferSrc | vk::BufferUsageFlagBits::eTransferDst;

}  // namespace

Runtime::Runtime(std::optional<int> index, RuntimeOptions options) {
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
  vk::raii::Buffer probe(device_, vk::BufferCreateInfo{.size = 256, .usage = kBufferUsage, .sharingMode = vk::SharingMode::eExclusive});
  const uint32_t bits = probe.getMemoryRequirements().memoryTypeBits;
  upload_memory_type_ = pick_memory_type(mem, bits, mapped, staging_ ? vk::MemoryPropertyFlags{} : local,
                                         staging_ ? local : vk::MemoryPropertyFlags{}, "a host-visible coherent buffer");
  readback_memory_type_ = pick_memory_type(mem, bits, mapped, staging_ ? M::eHostCached : (local | M::eHostCached),
                                           staging_ ? local : vk::MemoryPropertyFlags{}, "a host-visible coherent buffer");
  device_memory_type_ = staging_ ? pick_memory_type(mem, bits, {}, local, mapped, "a device-local storage buffer")
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
  const size_t rounded = std::max<size_t>(4, (bytes + 3) / 4 * 4);
  if (rounded > info_.max_storage_buffer_range)
    throw SkipCase("a tensor of " + std::to_string(bytes) + " bytes exceeds maxStorageBufferRange (" +
                   std::to_string(info_.max_storage_buffer_range) + " bytes) of " + info_.name);
  return std::make_unique<Buffer>(*this, rounded, device_memory_type_, !staging_);
}

std::unique_ptr<Buffer> Runtime::host_buffer(size_t bytes, bool readback) {
  return std::make_unique<Buffer>(*this, std::max<size_t>(4, (bytes + 3) / 4 * 4),
                                  readback ? readback_memory_type_ : upload_memory_type_, true);
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
  p->pipeline = *pipeline_cache_ ? vk::raii::Pipeline(device_, pipeline_cache_, info) : vk::raii::Pipeline(device_, nullptr, info);
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
  Batch batch(*this);
  batch.dispatch(kernel, buffers, params, gx, gy, gz);
  return batch.submit();
}

// ---- buffers ---------------------------------------------------------------------

Buffer::Buffer(Runtime& rt, size_t bytes, uint32_t memory_type, bool mapped) : rt_(&rt), size_(bytes) {
  buffer_ = vk::raii::Buffer(rt.device_, vk::BufferCreateInfo{.size = bytes, .usage = kBufferUsage, .sharingMode = vk::SharingMode::eExclusive});
  const auto req = buffer_.getMemoryRequirements();
  if (!(req.memoryTypeBits & (1u << memory_type)))
    throw std::runtime_error("the chosen memory type does not suit a buffer of " + std::to_string(bytes) + " bytes");
  memory_ = vk::raii::DeviceMemory(rt.device_, vk::MemoryAllocateInfo{.allocationSize = req.size, .memoryTypeIndex = memory_type});
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

// ---- batches ---------------------------------------------------------------------
//
// Commands are recorded as they come. Before each one a global memory barrier covers what
// ran since the previous barrier (`src_stages`, `src_writes`) when the new command may
// depend on it: every dispatch; an upload after anything but uploads to other buffers; a
// download after anything but downloads. The command buffer starts with such a barrier
// from all earlier work on the queue and ends with one to the host.
//
// A download from a mapped buffer is read on the host after the wait, unless a later
// command might change the buffer: then it becomes a copy into a staging buffer at its
// place in the batch.

namespace {

constexpr uint32_t kSetsPerPool = 16, kQueriesPerPool = 64;

}  // namespace

struct Batch::State {
  Runtime& rt;
  vk::raii::CommandBuffer cmd{nullptr};
  bool recording = false;
  enum class Last { none, upload, dispatch, download } last = Last::none;
  vk::PipelineStageFlags src_stages;
  vk::AccessFlags src_writes;
  std::set<VkBuffer> uploaded;  // copied into since the last barrier
  std::set<VkBuffer> touched;   // used by a recorded command or a pending readback

  std::vector<std::unique_ptr<Buffer>> owned;      // Batch::buffer's: live as long as the batch
  std::vector<std::unique_ptr<Buffer>> transient;  // staging and parameters: until submit() returns
  Buffer* params = nullptr;                        // the parameter chunk being filled
  size_t params_used = 0;
  std::vector<vk::raii::DescriptorPool> pools;
  std::vector<vk::raii::DescriptorSet> sets;  // destroyed before their pools
  std::vector<vk::raii::QueryPool> queries;
  uint32_t timed = 0;  // dispatches with timestamps recorded

  struct Readback {
    const Buffer* source;
    Buffer* staging;  // null: read the mapped source after the wait
    std::span<uint8_t> dst;
  };
  std::vector<Readback> readbacks;
  std::vector<double> ms;

  explicit State(Runtime& r) : rt(r) {}

  void begin() {
    if (recording) return;
    vk::raii::CommandBuffers cmds(rt.device_, vk::CommandBufferAllocateInfo{.commandPool = *rt.command_pool_,
                                                                            .level = vk::CommandBufferLevel::ePrimary,
                                                                            .commandBufferCount = 1});
    cmd = std::move(cmds[0]);
    cmd.begin(vk::CommandBufferBeginInfo{.flags = vk::CommandBufferUsageFlagBits::eOneTimeSubmit});
    recording = true;
    // Whatever earlier submissions wrote is visible to this batch.
    src_stages = vk::PipelineStageFlagBits::eAllCommands;
    src_writes = vk::AccessFlagBits::eMemoryWrite;
  }

  void barrier(vk::PipelineStageFlags dst_stages, vk::AccessFlags dst_access) {
    if (!src_stages) return;
    const vk::MemoryBarrier b{.srcAccessMask = src_writes, .dstAccessMask = dst_access};
    cmd.pipelineBarrier(src_stages, dst_stages, {}, b, nullptr, nullptr);
    src_stages = {};
    src_writes = {};
    uploaded.clear();
  }

  void executed(Last kind, vk::PipelineStageFlags stage, vk::AccessFlags writes) {
    last = kind;
    src_stages |= stage;
    src_writes |= writes;
  }

  // A command that may write `written` comes next: pending host reads of those buffers
  // become copies here, at their place in the batch.
  void stage_mapped_readbacks(const std::set<VkBuffer>& written) {
    for (auto& r : readbacks)
      if (!r.staging && written.count(*r.source->handle())) record_readback(r);
  }

  void record_readback(Readback& r) {
    auto staging = rt.host_buffer(r.dst.size(), true);
    begin();
    if (last != Last::download) barrier(vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferRead);
    cmd.copyBuffer(*r.source->handle(), *staging->handle(), vk::BufferCopy{.srcOffset = 0, .dstOffset = 0, .size = r.dst.size()});
    executed(Last::download, vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
    r.staging = staging.get();
    transient.push_back(std::move(staging));
  }

  // A slice of a mapped uniform buffer for one dispatch's parameters.
  std::pair<Buffer*, size_t> params_slice(size_t bytes) {
    const size_t align = rt.uniform_alignment_;
    size_t offset = (params_used + align - 1) / align * align;
    if (!params || offset + bytes > params->size()) {
      auto chunk = rt.host_buffer(std::max<size_t>(bytes, 16384), false);
      params = chunk.get();
      transient.push_back(std::move(chunk));
      offset = 0;
    }
    params_used = offset + bytes;
    return {params, offset};
  }

  vk::DescriptorSet allocate_set(vk::DescriptorSetLayout layout) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!pools.empty()) {
        try {
          vk::raii::DescriptorSets got(rt.device_, vk::DescriptorSetAllocateInfo{.descriptorPool = *pools.back(),
                                                                                 .descriptorSetCount = 1, .pSetLayouts = &layout});
          sets.push_back(std::move(got[0]));
          return *sets.back();
        } catch (const vk::OutOfPoolMemoryError&) {
        } catch (const vk::FragmentedPoolError&) {
        }
      }
      // Room for kSetsPerPool sets of up to 32 storage buffers and one uniform buffer.
      const std::array<vk::DescriptorPoolSize, 2> sizes{
          vk::DescriptorPoolSize{.type = vk::DescriptorType::eStorageBuffer, .descriptorCount = kSetsPerPool * 32},
          vk::DescriptorPoolSize{.type = vk::DescriptorType::eUniformBuffer, .descriptorCount = kSetsPerPool}};
      pools.emplace_back(rt.device_, vk::DescriptorPoolCreateInfo{.flags = vk::DescriptorPoolCreateFlagBits::eFreeDescriptorSet,
                                                                  .maxSets = kSetsPerPool,
                                                                  .poolSizeCount = static_cast<uint32_t>(sizes.size()),
                                                                  .pPoolSizes = sizes.data()});
    }
    throw std::runtime_error("cannot allocate a descriptor set");
  }

  void reset() {
    cmd = vk::raii::CommandBuffer(nullptr);
    recording = false;
    last = Last::none;
    src_stages = {};
    src_writes = {};
    uploaded.clear();
    touched.clear();
    readbacks.clear();
    sets.clear();
    pools.clear();
    transient.clear();
    params = nullptr;
    params_used = 0;
    timed = 0;
  }
};

Batch::Batch(Runtime& rt) : s_(std::make_unique<State>(rt)) {}
Batch::~Batch() = default;
Batch::Batch(Batch&&) noexcept = default;
Runtime& Batch::runtime() const { return s_->rt; }
const std::vector<double>& Batch::dispatch_ms() const { return s_->ms; }

Buffer* Batch::buffer(size_t bytes) {
  s_->owned.push_back(s_->rt.buffer(bytes));
  return s_->owned.back().get();
}

void Batch::upload(Buffer& dst, std::span<const uint8_t> bytes) {
  if (bytes.size() > dst.size()) throw std::logic_error("upload larger than the buffer");
  if (bytes.empty()) return;
  State& s = *s_;
  if (dst.mapped_ && !s.touched.count(*dst.handle())) {  // nothing recorded uses it yet
    std::memcpy(dst.mapped_, bytes.data(), bytes.size());
    return;
  }
  s.stage_mapped_readbacks({*dst.handle()});
  auto staging = s.rt.host_buffer(bytes.size(), false);
  std::memcpy(staging->mapped_, bytes.data(), bytes.size());
  s.begin();
  if (s.last != State::Last::upload || s.uploaded.count(*dst.handle()))
    s.barrier(vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
  s.cmd.copyBuffer(*staging->handle(), *dst.handle(), vk::BufferCopy{.srcOffset = 0, .dstOffset = 0, .size = bytes.size()});
  s.executed(State::Last::upload, vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
  s.uploaded.insert(*dst.handle());
  s.touched.insert(*dst.handle());
  s.transient.push_back(std::move(staging));
}

void Batch::download(const Buffer& src, std::span<uint8_t> dst) {
  if (dst.size() > src.size()) throw std::logic_error("download larger than the buffer");
  if (dst.empty()) return;
  State& s = *s_;
  s.readbacks.push_back({&src, nullptr, dst});
  s.touched.insert(*src.handle());
  if (!src.mapped_) s.record_readback(s.readbacks.back());
}

void Batch::dispatch(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params, uint32_t gx,
                     uint32_t gy, uint32_t gz) {
  State& s = *s_;
  Runtime& rt = s.rt;
  const std::string& name = kernel.shader;
  const auto& info = rt.info_;
  const auto& most = info.max_workgroup_count;
  if (gx > most[0] || gy > most[1] || gz > most[2])
    throw std::logic_error(name + ": " + std::to_string(gx) + " x " + std::to_string(gy) + " x " + std::to_string(gz) +
                           " workgroups exceed maxComputeWorkGroupCount (" + std::to_string(most[0]) + ", " +
                           std::to_string(most[1]) + ", " + std::to_string(most[2]) + ") of " + info.name);
  Runtime::Pipeline& p = rt.pipeline(kernel);
  if (!rt.placeholder_) rt.placeholder_ = rt.buffer(16);
  std::vector<vk::DescriptorBufferInfo> infos;
  std::vector<uint32_t> slots;
  for (const auto& [binding, names] : p.interface.buffers) {
    Buffer* b = nullptr;
    bool given = false;
    for (const auto& n : names) {
      auto it = buffers.find(n);
      if (it == buffers.end()) continue;
      given = true;
      b = it->second ? it->second : rt.placeholder_.get();
    }
    if (!given) throw std::logic_error(name + ": no buffer given for binding " + std::to_string(binding) + " (" + names[0] + ")");
    infos.push_back({.buffer = *b->handle(), .offset = 0, .range = VK_WHOLE_SIZE});
    slots.push_back(binding);
  }
  if (p.interface.params_binding) {
    const std::vector<uint8_t> bytes = pack_params(name, p.interface, params);
    const auto [chunk, offset] = s.params_slice(bytes.size());
    std::memcpy(chunk->mapped_ + offset, bytes.data(), bytes.size());
    infos.push_back({.buffer = *chunk->handle(), .offset = offset, .range = bytes.size()});
    slots.push_back(*p.interface.params_binding);
  } else if (!params.empty()) {
    throw std::logic_error(name + ": the shader takes no parameters");
  }
  const vk::DescriptorSet set = s.allocate_set(*p.set_layout);
  std::vector<vk::WriteDescriptorSet> writes;
  for (size_t i = 0; i < infos.size(); ++i) {
    const bool uniform = p.interface.params_binding && slots[i] == *p.interface.params_binding;
    writes.push_back({.dstSet = set, .dstBinding = slots[i], .descriptorCount = 1,
                      .descriptorType = uniform ? vk::DescriptorType::eUniformBuffer : vk::DescriptorType::eStorageBuffer,
                      .pBufferInfo = &infos[i]});
  }
  rt.device_.updateDescriptorSets(writes, nullptr);

  std::set<VkBuffer> bound;
  for (const auto& i : infos) bound.insert(i.buffer);
  s.stage_mapped_readbacks(bound);
  s.touched.insert(bound.begin(), bound.end());
  s.begin();
  s.barrier(vk::PipelineStageFlagBits::eComputeShader, vk::AccessFlagBits::eShaderRead | vk::AccessFlagBits::eShaderWrite);
  const vk::QueryPool* pool = nullptr;
  uint32_t query = 0;
  if (info.timestamps) {
    if (s.timed % (kQueriesPerPool / 2) == 0 && s.timed / (kQueriesPerPool / 2) >= s.queries.size())
      s.queries.emplace_back(rt.device_, vk::QueryPoolCreateInfo{.queryType = vk::QueryType::eTimestamp, .queryCount = kQueriesPerPool});
    pool = &*s.queries[s.timed / (kQueriesPerPool / 2)];
    query = s.timed % (kQueriesPerPool / 2) * 2;
    ++s.timed;
    s.cmd.resetQueryPool(*pool, query, 2);
    // Latched once everything before has finished: the dispatch alone lies between the two.
    s.cmd.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, *pool, query);
  }
  s.cmd.bindPipeline(vk::PipelineBindPoint::eCompute, *p.pipeline);
  s.cmd.bindDescriptorSets(vk::PipelineBindPoint::eCompute, *p.layout, 0, set, nullptr);
  s.cmd.dispatch(gx, gy, gz);
  if (pool) s.cmd.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, *pool, query + 1);
  s.executed(State::Last::dispatch, vk::PipelineStageFlagBits::eComputeShader, vk::AccessFlagBits::eShaderWrite);
}

double Batch::submit() {
  State& s = *s_;
  s.ms.clear();
  if (s.recording) {
    // Everything the batch wrote is visible to the host reads that follow.
    s.barrier(vk::PipelineStageFlagBits::eHost, vk::AccessFlagBits::eHostRead);
    s.cmd.end();
    Runtime& rt = s.rt;
    const vk::CommandBuffer raw = *s.cmd;
    rt.queue_.submit(vk::SubmitInfo{.commandBufferCount = 1, .pCommandBuffers = &raw}, *rt.fence_);
    // Block in the driver rather than spin: a spinning host thread steals a core from lavapipe.
    const vk::Result waited = rt.device_.waitForFences({*rt.fence_}, VK_TRUE, UINT64_MAX);
    rt.device_.resetFences({*rt.fence_});
    if (waited != vk::Result::eSuccess) {
      s.reset();
      throw std::runtime_error("waiting for a batch of work on " + rt.info_.name + " failed");
    }
    for (uint32_t i = 0; i < s.timed; ++i) {
      const uint32_t q = i % (kQueriesPerPool / 2) * 2;
      auto [result, stamps] = s.queries[i / (kQueriesPerPool / 2)].getResults<uint64_t>(
          q, 2, 2 * sizeof(uint64_t), sizeof(uint64_t), vk::QueryResultFlagBits::e64 | vk::QueryResultFlagBits::eWait);
      s.ms.push_back(static_cast<double>(stamps[1] - stamps[0]) * rt.timestamp_period_ns_ * 1e-6);
    }
  }
  for (const auto& r : s.readbacks) std::memcpy(r.dst.data(), (r.staging ? r.staging : r.source)->mapped_, r.dst.size());
  s.reset();
  double total = 0;
  for (double m : s.ms) total += m;
  return total;
}

}  // namespace kvbench
