#pragma once
// The Vulkan runtime: device choice and feature report, host-visible storage buffers,
// compute pipelines built once per run from the embedded SPIR-V, and synchronous
// dispatches timed with timestamp queries.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#ifndef VULKAN_HPP_NO_CONSTRUCTORS
#define VULKAN_HPP_NO_CONSTRUCTORS
#endif
#include <vulkan/vulkan_raii.hpp>

namespace kvbench {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string type;  // discrete-gpu, integrated-gpu, virtual-gpu, cpu, other
  std::string driver;
  std::string api_version;
  bool is_gpu = false;
  bool shader_int8 = false, shader_float16 = false, shader_int64 = false, shader_float64 = false;
  bool storage_8bit = false, storage_16bit = false;
  uint32_t subgroup_size = 0;
  bool subgroup_shuffle = false;  // compute-stage subgroup shuffles
  uint32_t shared_memory_bytes = 0;
  uint64_t max_storage_buffer_range = 0;
  std::array<uint32_t, 3> max_workgroup_count{};  // maxComputeWorkGroupCount
  bool timestamps = false;
};

// Every Vulkan physical device, in the loader's order.
std::vector<DeviceInfo> list_devices();
// The first GPU; otherwise the first device (lavapipe on a machine without a GPU).
int default_device_index(const std::vector<DeviceInfo>& devices);

class Buffer;

// What the validation layer reported (KVBENCH_VALIDATION=1): errors and warnings count,
// info/verbose messages and performance (best-practices) warnings do not.
struct ValidationMessages {
  size_t errors = 0, warnings = 0;
  std::string first;  // the first counted message: its severity, id and text
  size_t count() const { return errors + warnings; }
};

// A shader and the values of its specialization constants (constant_id 0, 1, ...).
// Each distinct pair is one pipeline, JIT-compiled once per run: keep the variants few.
struct Kernel {
  std::string shader;
  std::vector<uint32_t> constants;
  Kernel(const char* name) : shader(name) {}
  Kernel(std::string name, std::vector<uint32_t> values = {}) : shader(std::move(name)), constants(std::move(values)) {}
  std::string key() const;
};

// The buffers of one dispatch by name: the name of each binding's block's first member
// (`buffer Query { uint query[]; }` binds "query"). nullptr marks an absent optional
// tensor: the binding gets a placeholder. Names a shader does not use are ignored.
using KernelBuffers = std::map<std::string, Buffer*>;

// One kernel parameter: an integer or a float, converted to the type the shader's Params
// member has (an integer out of that type's range is an error).
struct ParamValue {
  double value;
  template <typename T>
  ParamValue(T v) : value(static_cast<double>(v)) {}
};
// The kernel parameters by the names of the shader's `uniform Params` block members:
// every member must be given, and nothing else (checked at dispatch, from the SPIR-V).
using KernelParams = std::map<std::string, ParamValue>;

class Runtime {
 public:
  // Opens device `index`, or the default device. Throws std::runtime_error with a clear
  // message when there is no Vulkan device or the index is out of range.
  explicit Runtime(std::optional<int> index = std::nullopt);
  ~Runtime();
  const DeviceInfo& info() const { return info_; }

  // A host-visible, coherent storage buffer of at least `bytes` (rounded up to 4 bytes).
  // Throws SkipCase when it exceeds maxStorageBufferRange.
  std::unique_ptr<Buffer> buffer(size_t bytes);
  // A buffer holding `values` (plans, tables and other host-built side inputs).
  template <typename T>
  std::unique_ptr<Buffer> buffer_with(const std::vector<T>& values);

  // Binds `buffers` and `params` by the names the shader's SPIR-V declares (see above),
  // dispatches `groups` workgroups and waits. Returns the device time in ms (0 when the
  // queue has no timestamps). A binding left unsupplied, a parameter missing, unknown or
  // out of range, or a group count over maxComputeWorkGroupCount is a std::logic_error
  // naming it.
  double dispatch(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params, uint32_t groups_x,
                  uint32_t groups_y = 1, uint32_t groups_z = 1);

  // With KVBENCH_VALIDATION=1, the validation messages counted since the previous call
  // (or since the runtime was made); always empty without it.
  ValidationMessages take_validation_messages();
  // For tests that submit their own debug-utils messages.
  const vk::raii::Instance& instance() const { return instance_; }

 private:
  struct Pipeline;
  Pipeline& pipeline(const Kernel& kernel);

  DeviceInfo info_;
  vk::raii::Context context_;
  // The messengers' user data: outlives the instance, whose creation and destruction
  // report to it too.
  struct ValidationLog;
  std::unique_ptr<ValidationLog> validation_;
  vk::raii::Instance instance_{nullptr};
  vk::raii::DebugUtilsMessengerEXT messenger_{nullptr};  // destroyed after the device
  vk::raii::PhysicalDevice physical_{nullptr};
  vk::raii::Device device_{nullptr};
  vk::raii::Queue queue_{nullptr};
  uint32_t queue_family_ = 0;
  vk::raii::CommandPool command_pool_{nullptr};
  vk::raii::QueryPool query_pool_{nullptr};
  vk::raii::Fence fence_{nullptr};
  double timestamp_period_ns_ = 0;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::unique_ptr<Buffer> placeholder_, params_;
  friend class Buffer;
};

class Buffer {
 public:
  Buffer(const vk::raii::Device& device, const vk::raii::PhysicalDevice& physical, size_t bytes);
  ~Buffer();
  size_t size() const { return size_; }
  uint8_t* data() { return mapped_; }
  const vk::raii::Buffer& handle() const { return buffer_; }
  void upload(std::span<const uint8_t> bytes);
  void download(std::span<uint8_t> bytes) const;

 private:
  size_t size_;
  vk::raii::Buffer buffer_{nullptr};
  vk::raii::DeviceMemory memory_{nullptr};
  uint8_t* mapped_ = nullptr;
};

template <typename T>
std::unique_ptr<Buffer> Runtime::buffer_with(const std::vector<T>& values) {
  auto b = buffer(values.size() * sizeof(T));
  b->upload(std::span(reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(T)));
  return b;
}

// The SPIR-V of every shader, compiled at build time (generated file).
const std::map<std::string, std::span<const uint32_t>>& embedded_shaders();

}  // namespace kvbench
