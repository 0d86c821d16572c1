#pragma once
// The Vulkan runtime: device choice and feature report, storage buffers (mapped on
// integrated/CPU devices, device-local with staging copies on discrete GPUs), compute
// pipelines built once per run from the embedded SPIR-V through a VkPipelineCache kept on
// disk, and batches: the uploads, dispatches and downloads of one case in one command
// buffer, one submit, device times from timestamp queries. specs/runtime.md has the design.
#include <array>
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

#include "vk/device.hpp"
#include "vk/spirv_reflect.hpp"

namespace kvbench {

// The ticks between two timestamps of a queue with `valid_bits` meaningful bits (36-64):
// the difference modulo 2^valid_bits, so a counter that wrapped between them still gives
// the elapsed ticks, and bits above the valid ones never count.
uint64_t timestamp_ticks(uint64_t begin, uint64_t end, uint32_t valid_bits);

class Buffer;

// What the validation layer reported (KVBENCH_VALIDATION=1): errors and warnings count,
// info/verbose messages and performance (best-practices) warnings do not.
struct ValidationMessages {
  size_t errors = 0, warnings = 0;
  std::string first;  // the first counted message: its severity, id and text
  size_t count() const { return errors + warnings; }
};

// A shader and the values of its specialization constants by the names the shader gives
// them (`layout(constant_id = 2) const uint KV_PATH`: the runtime reads the constant_id from
// the SPIR-V, as it binds buffers and Params members by name). Every constant the module
// declares must be given (glslang leaves out those the code never reads), and no other.
// Each distinct pair is one pipeline, built once per run (from the on-disk pipeline cache
// where the driver stores one): keep the variants few.
struct Kernel {
  std::string shader;
  std::map<std::string, uint32_t> constants;  // NAME -> value (bools 0 or 1)
  // 0: the driver chooses the subgroup size. Else the pipeline requires subgroups of this
  // many lanes, all full (VK_EXT_subgroup_size_control; only where
  // DeviceInfo::can_require_subgroups allows it). Part of the pipeline's key (":sg=N").
  uint32_t subgroup_size = 0;
  Kernel(const char* name) : shader(name) {}
  Kernel(std::string name, std::map<std::string, uint32_t> values = {})
      : shader(std::move(name)), constants(std::move(values)) {}
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

// How the runtime is set up; from_env() reads the environment (see specs/runtime.md).
struct RuntimeOptions {
  // Memory mode: unset chooses by device (zero-copy on an integrated GPU or CPU device with
  // device-local host-visible memory, else staging); true forces staging (KVBENCH_STAGING=1,
  // the discrete-GPU path on any device); false forces zero-copy (KVBENCH_STAGING=0).
  std::optional<bool> staging;
  // The VkPipelineCache stored on disk (KVBENCH_PIPELINE_CACHE=0 turns it off).
  bool pipeline_cache = true;
  // Where it is stored; empty: default_cache_dir().
  std::string cache_dir;
  // Whether operators may read through `_texels` views (KVBENCH_TEXELS=0: never, so that
  // their storage-buffer paths, which views too small for a tensor fall back to, are tested).
  bool texels = true;
  // The Khronos validation layer, its messages counted (KVBENCH_VALIDATION=1).
  bool validation = false;
  static RuntimeOptions from_env();
};

// $KVBENCH_CACHE_DIR, else $XDG_CACHE_HOME/kvbench, else $HOME/.cache/kvbench ("" when none
// of these is set). Clearing the cache is `rm -r` of this directory.
std::string default_cache_dir();

// What became of the on-disk pipeline cache when the runtime was made.
struct PipelineCacheStatus {
  bool enabled = false;
  std::string path;         // the device's file (empty when disabled)
  size_t loaded_bytes = 0;  // the driver data taken from the file (0: none, or ignored)
  std::string ignored;      // why an existing file was not used ("" when it was, or there was none)
};

class Batch;

// `groups` workgroups as a 2-D grid within Vulkan's guaranteed 65535 per dimension: rows of
// at most 65535 groups. Shaders linearize (shaders/grid.glsl) and ignore the surplus of the
// last row.
inline std::pair<uint32_t, uint32_t> dispatch_grid(uint64_t groups) {
  const uint64_t width = groups < 65535 ? groups : 65535;
  return {static_cast<uint32_t>(width), static_cast<uint32_t>(width ? (groups + width - 1) / width : 1)};
}

// A timed dispatch: the shader it ran and its device time.
struct DispatchTime {
  std::string shader;
  double ms = 0;
};

// How `kvbench bench` repeats a batch's dispatches (Runtime::repeat_dispatches): in one
// submission, an untimed warm-up of at least `warmup_ms` device time and `min_warmup`
// repetitions, then `reps` timed ones back to back, with the `flush` buffers filled between
// them outside the timed intervals; then, where the device has a shader clock, a probe of it.
struct RepeatPlan {
  int64_t min_warmup = 0;
  double warmup_ms = 200;
  double rep_ms_hint = 0;  // one repetition's expected device time: sizes the first warm-up
  int reps = 1;
  std::vector<Buffer*> flush;  // each within maxStorageBufferRange, together the size wanted
};

// What the repeated batches measured (summed over the batches of a run).
struct RepeatOutcome {
  int64_t warmup_count = 0;                     // untimed repetitions
  double warmup_ms = 0;                         // their device time, from a pair of timestamps around them
  std::vector<std::vector<DispatchTime>> reps;  // each timed repetition's dispatches, in order
  std::optional<double> clock_mhz;              // shader clock cycles / device time of the probe
};

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
  uint64_t uploaded_bytes_ = 0;
  std::vector<DispatchTime> dispatch_log_;
  std::optional<RepeatPlan> repeat_;
  RepeatOutcome repeat_outcome_;
  double timestamp_period_ns_ = 0;
  uint32_t timestamp_valid_bits_ = 64;
  uint64_t uniform_alignment_ = 256;
  bool staging_ = false;
  bool texels_ = true;
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

class Buffer {
 public:
  // Made by Runtime::buffer (and the runtime's staging and parameter buffers).
  Buffer(Runtime& rt, size_t bytes, uint32_t memory_type, bool mapped);
  ~Buffer();
  size_t size() const { return size_; }
  const vk::raii::Buffer& handle() const { return buffer_; }
  // Synchronous copies from and to the host, correct in both memory modes (a staged copy
  // is a batch of its own). Inside a case, prefer Batch::upload/download.
  void upload(std::span<const uint8_t> bytes);
  void download(std::span<uint8_t> bytes) const;

 private:
  friend class Runtime;
  friend class Batch;
  Runtime* rt_;
  size_t size_;
  // Members are destroyed in reverse order: the buffer before the memory bound to it (the
  // validation layer reports a memory freed under a live buffer).
  vk::raii::DeviceMemory memory_{nullptr};
  vk::raii::Buffer buffer_{nullptr};
  uint8_t* mapped_ = nullptr;  // null for device-local buffers in the staging mode
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

// The SPIR-V of every shader, compiled at build time (generated file).
const std::map<std::string, std::span<const uint32_t>>& embedded_shaders();

}  // namespace kvbench
