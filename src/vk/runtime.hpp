#pragma once
// The Vulkan runtime: device choice and feature report, storage buffers (mapped on
// integrated/CPU devices, device-local with staging copies on discrete GPUs), compute
// pipelines built once per run from the embedded SPIR-V through a VkPipelineCache kept on
// disk, and batches: the uploads, dispatches and downloads of one case in one command
// buffer, one submit, device times from timestamp queries. specs/runtime.md has the design.
// Runtime and Batch are declared here; what a dispatch names (kernel.hpp), Buffer
// (buffer.hpp), device times (dispatch_timing.hpp) and the options (runtime_options.hpp)
// have headers of their own.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#ifndef VULKAN_HPP_NO_CONSTRUCTORS
#define VULKAN_HPP_NO_CONSTRUCTORS
#endif
#include <vulkan/vulkan_raii.hpp>

#include "vk/buffer.hpp"
#include "vk/device.hpp"
#include "vk/dispatch_timing.hpp"
#include "vk/kernel.hpp"
#include "vk/runtime_options.hpp"
#include "vk/spirv_reflect.hpp"

namespace kvbench {

class Batch;

class Runtime {
 public:
  // Opens device `index`, or the default device. Throws std::runtime_error with a clear
  // message when there is no Vulkan device or the index is out of range.
  explicit Runtime(std::optional<int> index = std::nullopt,
                   RuntimeOptions options = RuntimeOptions::from_env());
  // Writes the pipeline cache back when it changed (never throws; a failure is reported once on stderr).
  ~Runtime();
  const DeviceInfo& info() const { return info_; }
  // Runs shaders/subgroup_probe.comp once in a workgroup of `count` subgroups that it
  // requires of `size` lanes, full: "" when every invocation saw exactly those subgroups
  // (gl_SubgroupSize, gl_NumSubgroups, its subgroup and lane by its index), else what one
  // saw. The constructor probes the device's subgroup size when it offers the control and
  // turns DeviceInfo::subgroup_size_control off where the answer is not "".
  std::string probe_required_subgroups(uint32_t size, uint32_t count);
  // true: storage buffers are device-local and data moves through host-visible staging
  // buffers with copy commands; false: storage buffers are mapped (zero-copy).
  bool staging() const { return staging_; }
  const PipelineCacheStatus& pipeline_cache_status() const { return cache_status_; }
  // Whether a shader may read a tensor of `bytes` through its `_texels` view: the view
  // holds all of it (maxTexelBufferElements uvec4s) and KVBENCH_TEXELS is not 0.
  bool texels_cover(size_t bytes) const {
    return texels_ && info_.max_texel_buffer_elements > 0 &&
           (bytes + 15) / 16 <= info_.max_texel_buffer_elements;
  }
  // The most bytes of kernel scratch a batch may bind at once: maxStorageBufferRange, or less
  // under KVBENCH_MAX_SCRATCH (RuntimeOptions::max_scratch).
  uint64_t scratch_limit() const {
    return max_scratch_ ? std::min<uint64_t>(max_scratch_, info_.max_storage_buffer_range)
                        : info_.max_storage_buffer_range;
  }
  // The same for each of `tensors` bound in `buffers` (one bound to null is covered).
  bool texels_cover(const KernelBuffers& buffers, std::initializer_list<const char*> tensors) const;

  // A storage buffer of at least `bytes` (rounded up to 16 bytes, a whole uvec4 texel): device-local in the
  // staging mode, mapped in the zero-copy mode. Throws SkipCase when it exceeds maxStorageBufferRange.
  std::unique_ptr<Buffer> buffer(size_t bytes);
  // A buffer holding `values` (uploaded at once).
  template <typename T>
  std::unique_ptr<Buffer> buffer_with(const std::vector<T>& values);

  // While on, every timed dispatch submitted is logged, in order: its shader and device time
  // (`kvbench bench` reports each kernel of a case this way). take_ returns and clears it.
  void log_dispatches(bool on) { log_dispatches_ = on; }
  std::vector<DispatchTime> take_dispatch_log() { return std::exchange(dispatch_log_, {}); }

  // While on (`kvbench list --pipelines`, the warmer's look at a case), Batch::dispatch
  // creates each dispatch's pipeline and logs its key but records no dispatch, and batches
  // upload and download nothing: nothing is computed, and on lavapipe, which compiles a
  // pipeline with LLVM at its first dispatch, nothing is compiled either.
  // take_pipeline_log returns and clears the keys.
  void plan_only(bool on) { plan_only_ = on; }
  // While on (runner/pipeline_warmer.hpp), every dispatch is recorded with no workgroup:
  // lavapipe compiles its pipeline, as at a first dispatch, and computes nothing.
  void compile_only(bool on) { compile_only_ = on; }
  // Bytes batches have uploaded into device buffers so far (what a plan costs: none).
  uint64_t uploaded_bytes() const { return uploaded_bytes_; }
  std::vector<std::string> take_pipeline_log() { return std::exchange(pipeline_log_, {}); }
  // Bytes of kernel scratch (Batch::scratch) allocated since the last take: `kvbench list
  // --pipelines` prints each case's, so that what a shape needs beside its tensors is seen
  // before anything runs.
  uint64_t take_scratch_bytes() { return std::exchange(scratch_bytes_, 0); }
  // The key the runtime keeps kernel's pipeline by (and logs): the shader, then its
  // constants' values in constant_id order (":V" while the ids run 0, 1, ..., ":ID=V" after
  // a gap). Throws std::logic_error for a name the shader does not declare, or a constant it
  // declares that `kernel` leaves unset.
  std::string pipeline_key(const Kernel& kernel);

  // While set, every batch that dispatches is submitted as `plan` says (RepeatPlan) and what
  // it measured accumulates until take_repeat_outcome(). Needs timestamps (else ignored).
  void repeat_dispatches(std::optional<RepeatPlan> plan) { repeat_ = plan; }
  RepeatOutcome take_repeat_outcome() { return std::exchange(repeat_outcome_, {}); }

  // One dispatch in a batch of its own (Batch::dispatch), submitted at once; returns its
  // device time in ms (0 when the queue has no timestamps).
  double dispatch(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params,
                  uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);

  // With KVBENCH_VALIDATION=1, the validation messages counted since the previous call
  // (or since the runtime was made); always empty without it.
  ValidationMessages take_validation_messages();
  // For tests that submit their own debug-utils messages.
  const vk::raii::Instance& instance() const { return instance_; }

 private:
  struct Pipeline;
  struct PipelineCache;
  Pipeline& pipeline(const Kernel& kernel);
  // What pipeline() checks before it builds (the device's features, its descriptor limits
  // for the shader's interface): throws SkipCase, or logic_error for a kernel the device
  // cannot be asked for. A plan (plan_only) checks and builds nothing more.
  void check_pipeline(const Kernel& kernel);
  // A mapped host-visible buffer (staging, parameters); `readback` prefers cached memory.
  std::unique_ptr<Buffer> host_buffer(size_t bytes, bool readback);
  void open_pipeline_cache(const RuntimeOptions& options);
  void save_pipeline_cache() noexcept;

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
  vk::raii::Fence fence_{nullptr};
  bool log_dispatches_ = false;
  bool plan_only_ = false;
  bool compile_only_ = false;
  std::vector<std::string> pipeline_log_;
  uint64_t scratch_bytes_ = 0;
  uint64_t uploaded_bytes_ = 0;
  std::vector<DispatchTime> dispatch_log_;
  std::optional<RepeatPlan> repeat_;
  RepeatOutcome repeat_outcome_;
  double timestamp_period_ns_ = 0;
  uint32_t timestamp_valid_bits_ = 64;
  uint64_t uniform_alignment_ = 256;
  bool staging_ = false;
  bool texels_ = true;
  uint64_t max_scratch_ = 0;           // RuntimeOptions::max_scratch
  uint32_t device_memory_type_ = 0;    // storage buffers
  uint32_t upload_memory_type_ = 0;    // mapped: zero-copy buffers, uploads, parameters
  uint32_t readback_memory_type_ = 0;  // mapped, cached where the device has it: downloads
  PipelineCacheStatus cache_status_;
  std::vector<uint8_t> cache_on_disk_;  // the driver data as read (unchanged: not written back)
  vk::raii::PipelineCache pipeline_cache_{nullptr};
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  // Per shader, its specialization constants: name -> constant_id (read once from the SPIR-V).
  std::map<std::string, std::map<std::string, uint32_t>> spec_ids_;
  std::map<std::string, ShaderInterface> interfaces_;  // reflected once per shader (check_pipeline)
  // kernel's constants as (constant_id, value), ascending, checked against the shader's.
  std::vector<std::pair<uint32_t, uint32_t>> specialization(const Kernel& kernel);
  std::unique_ptr<Buffer> placeholder_;
  friend class Buffer;
  friend class Batch;
};

// The work of one case in one command buffer: uploads, dispatches and downloads are recorded
// in call order with the barriers between them (transfer -> compute, compute -> compute,
// compute -> transfer, then -> host), and submit() runs them with one submit and one fence
// wait. Each dispatch has its own descriptor set, parameter slice and timestamp pair, so
// recording never overwrites what an earlier dispatch of the batch reads.
//
// Buffers bound or copied must live until submit() returns (Batch::buffer's do). A batch
// destroyed without submit() discards its work. One batch at a time per runtime is not
// required, but a buffer must not be used by two open batches.
class Batch {
 public:
  explicit Batch(Runtime& rt);
  ~Batch();
  Batch(Batch&&) noexcept;
  Batch& operator=(Batch&&) = delete;
  Runtime& runtime() const;

  // A storage buffer that lives as long as the batch (plan tables, scratch space).
  Buffer* buffer(size_t bytes);
  // A batch buffer for a kernel's own working state (not a case tensor), counted in
  // Runtime::take_scratch_bytes.
  Buffer* scratch(size_t bytes);
  // A batch buffer holding `values` (the upload is recorded in the batch).
  template <typename T>
  Buffer* buffer_with(const std::vector<T>& values);

  // `bytes` are copied at once (into the buffer when nothing is recorded yet and it is
  // mapped, else into a staging buffer copied on the device in order).
  void upload(Buffer& dst, std::span<const uint8_t> bytes);
  // Every 32-bit word of `dst` set to `word` on the device (vkCmdFillBuffer), in order.
  void fill(Buffer& dst, uint32_t word);
  // See Runtime: buffers and parameters by name, checked against the SPIR-V, group counts
  // against the device's limits (std::logic_error naming what is wrong).
  void dispatch(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params,
                uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);
  // `groups` workgroups on the 2-D grid of grid_layout (within the device's limits, whatever
  // the count): for shaders that index with grid_workgroup() (shaders/grid.glsl).
  void dispatch_groups(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params,
                       uint64_t groups);
  // One invocation per index 0 .. invocations - 1, for shaders of 64-invocation workgroups
  // that index with grid_invocation() and return past the end. More than 2^32 invocations
  // (past a 32-bit index) is std::logic_error.
  void dispatch_invocations(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params,
                            uint64_t invocations);
  // `dst` is filled by submit(), with the buffer's contents at this point of the batch.
  void download(const Buffer& src, std::span<uint8_t> dst);

  // Runs what was recorded, waits, fills the downloads. Returns the device time of the
  // dispatches in ms, summed (dispatch_ms() has each; under Runtime::repeat_dispatches, the
  // last timed repetition's). The batch is empty again afterwards.
  double submit();
  const std::vector<double>& dispatch_ms() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

template <typename T>
std::unique_ptr<Buffer> Runtime::buffer_with(const std::vector<T>& values) {
  auto b = buffer(values.size() * sizeof(T));
  b->upload(std::span(reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(T)));
  return b;
}

template <typename T>
Buffer* Batch::buffer_with(const std::vector<T>& values) {
  Buffer* b = buffer(values.size() * sizeof(T));
  upload(*b, std::span(reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(T)));
  return b;
}

}  // namespace kvbench
