// Batch: a case's uploads, dispatches and downloads recorded in one command buffer with
// barriers and submitted once (specs/runtime.md).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/error.hpp"
#include "vk/runtime_internal.hpp"

namespace kvbench {

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

// The Params block's bytes: every member given, in its type's range, nothing unknown.
std::vector<uint8_t> pack_params(const std::string& shader, const ShaderInterface& iface,
                                 const KernelParams& params) {
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
        throw std::logic_error(shader + ": parameter " + f.name + " = " + std::to_string(v) +
                               " does not fit its " + (is_signed ? "int" : "uint"));
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

namespace {

constexpr uint32_t kSetsPerPool = 16;
constexpr uint32_t kStorageBuffersPerSet = 32, kTexelBuffersPerSet = 4;  // room in the pools for each set

}  // namespace

struct Batch::State {
  Runtime& rt;
  // The commands, recorded when submit() knows how often to repeat the dispatches.
  struct Entry {
    std::function<void(vk::CommandBuffer)> record;
    std::string shader;  // a dispatch's shader; "" for other commands
  };
  std::vector<Entry> entries;
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
  std::vector<vk::raii::BufferView> views;    // the `_texels` bindings' views

  struct Readback {
    const Buffer* source;
    Buffer* staging;  // null: read the mapped source after the wait
    std::span<uint8_t> dst;
  };
  std::vector<Readback> readbacks;
  std::vector<double> ms;

  explicit State(Runtime& r) : rt(r) {}
  // Records the commands `body` gives into a command buffer with `queries` timestamps, runs
  // it and waits: the interval of each pair of timestamps, in ms.
  std::vector<double> execute(uint32_t queries,
                              const std::function<void(vk::CommandBuffer, vk::QueryPool)>& body);
  void run_once();
  static void emit(vk::CommandBuffer c, const Entry& e, vk::QueryPool pool, uint32_t& q);
  void run_repeated(const RepeatPlan& plan);
  // A dispatch's descriptor set and parameters, made now; `bound` gets the buffers it uses.
  Entry prepare(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params, uint32_t gx,
                uint32_t gy, uint32_t gz, std::set<VkBuffer>& bound);

  void begin() {
    if (recording) return;
    recording = true;
    // Whatever earlier submissions wrote is visible to this batch. They ran only copies and
    // compute dispatches, so those stages are named (not ALL_COMMANDS, which best practices
    // flags as a needless full stall).
    src_stages = vk::PipelineStageFlagBits::eComputeShader | vk::PipelineStageFlagBits::eTransfer;
    src_writes = vk::AccessFlagBits::eShaderWrite | vk::AccessFlagBits::eTransferWrite;
  }

  void barrier(vk::PipelineStageFlags dst_stages, vk::AccessFlags dst_access) {
    if (!src_stages) return;
    const vk::MemoryBarrier b{.srcAccessMask = src_writes, .dstAccessMask = dst_access};
    const vk::PipelineStageFlags src = src_stages;
    entries.push_back(
        {[=](vk::CommandBuffer c) { c.pipelineBarrier(src, dst_stages, {}, b, nullptr, nullptr); }, ""});
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
    if (last != Last::download)
      barrier(vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferRead);
    copy(*r.source->handle(), *staging->handle(), r.dst.size());
    executed(Last::download, vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
    r.staging = staging.get();
    transient.push_back(std::move(staging));
  }

  void copy(vk::Buffer from, vk::Buffer to, size_t bytes) {
    entries.push_back({[=](vk::CommandBuffer c) {
                         c.copyBuffer(from, to,
                                      vk::BufferCopy{.srcOffset = 0, .dstOffset = 0, .size = bytes});
                       },
                       ""});
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
          vk::raii::DescriptorSets got(
              rt.device_,
              vk::DescriptorSetAllocateInfo{
                  .descriptorPool = *pools.back(), .descriptorSetCount = 1, .pSetLayouts = &layout});
          sets.push_back(std::move(got[0]));
          return *sets.back();
        } catch (const vk::OutOfPoolMemoryError&) {
        } catch (const vk::FragmentedPoolError&) {}
      }
      // Room for kSetsPerPool sets of the most storage and texel buffers and one uniform buffer.
      const std::array<vk::DescriptorPoolSize, 3> sizes{
          vk::DescriptorPoolSize{.type = vk::DescriptorType::eStorageBuffer,
                                 .descriptorCount = kSetsPerPool * kStorageBuffersPerSet},
          vk::DescriptorPoolSize{.type = vk::DescriptorType::eUniformTexelBuffer,
                                 .descriptorCount = kSetsPerPool * kTexelBuffersPerSet},
          vk::DescriptorPoolSize{.type = vk::DescriptorType::eUniformBuffer,
                                 .descriptorCount = kSetsPerPool}};
      pools.emplace_back(rt.device_, vk::DescriptorPoolCreateInfo{
                                         .flags = vk::DescriptorPoolCreateFlagBits::eFreeDescriptorSet,
                                         .maxSets = kSetsPerPool,
                                         .poolSizeCount = static_cast<uint32_t>(sizes.size()),
                                         .pPoolSizes = sizes.data()});
    }
    throw std::runtime_error("cannot allocate a descriptor set");
  }

  void reset() {
    entries.clear();
    recording = false;
    last = Last::none;
    src_stages = {};
    src_writes = {};
    uploaded.clear();
    touched.clear();
    readbacks.clear();
    sets.clear();
    pools.clear();
    views.clear();
    transient.clear();
    params = nullptr;
    params_used = 0;
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

Buffer* Batch::scratch(size_t bytes) {
  s_->rt.scratch_bytes_ += bytes;
  return buffer(bytes);
}

void Batch::upload(Buffer& dst, std::span<const uint8_t> bytes) {
  if (bytes.size() > dst.size()) throw std::logic_error("upload larger than the buffer");
  State& s = *s_;
  if (bytes.empty() || s.rt.plan_only_) return;  // a plan computes nothing: it needs no data
  s.rt.uploaded_bytes_ += bytes.size();
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
  s.copy(*staging->handle(), *dst.handle(), bytes.size());
  s.executed(State::Last::upload, vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
  s.uploaded.insert(*dst.handle());
  s.touched.insert(*dst.handle());
  s.transient.push_back(std::move(staging));
}

void Batch::fill(Buffer& dst, uint32_t word) {
  State& s = *s_;
  s.stage_mapped_readbacks({*dst.handle()});
  s.begin();
  if (s.last != State::Last::upload || s.uploaded.count(*dst.handle()))
    s.barrier(vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
  const vk::Buffer target = *dst.handle();
  s.entries.push_back({[=](vk::CommandBuffer c) { c.fillBuffer(target, 0, VK_WHOLE_SIZE, word); }, ""});
  s.executed(State::Last::upload, vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
  s.uploaded.insert(*dst.handle());
  s.touched.insert(*dst.handle());
}

void Batch::download(const Buffer& src, std::span<uint8_t> dst) {
  if (dst.size() > src.size()) throw std::logic_error("download larger than the buffer");
  State& s = *s_;
  if (dst.empty() || s.rt.plan_only_) return;
  s.readbacks.push_back({&src, nullptr, dst});
  s.touched.insert(*src.handle());
  if (!src.mapped_) s.record_readback(s.readbacks.back());
}

Batch::State::Entry Batch::State::prepare(const Kernel& kernel, const KernelBuffers& buffers,
                                          const KernelParams& params, uint32_t gx, uint32_t gy, uint32_t gz,
                                          std::set<VkBuffer>& bound) {
  State& s = *this;
  const std::string& name = kernel.shader;
  Runtime::Pipeline& p = rt.pipeline(kernel);
  if (p.interface.buffers.size() > kStorageBuffersPerSet ||
      p.interface.texel_buffers.size() > kTexelBuffersPerSet)
    throw std::logic_error(name +
                           ": more storage or texel buffers than a batch's descriptor pools hold a set");
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
    if (!given)
      throw std::logic_error(name + ": no buffer given for binding " + std::to_string(binding) + " (" +
                             names[0] + ")");
    infos.push_back({.buffer = *b->handle(), .offset = 0, .range = VK_WHOLE_SIZE});
    slots.push_back(binding);
  }
  // Each `_texels` binding views its tensor's whole buffer (padding included: Runtime::buffer)
  // as uvec4 texels, as many as fit maxTexelBufferElements (an operator reads through it only
  // when its data lies within).
  std::vector<vk::BufferView> texel_views;
  for (const auto& [binding, tensor] : p.interface.texel_buffers) {
    auto it = buffers.find(tensor);
    if (it == buffers.end())
      throw std::logic_error(name + ": no buffer given for texel binding " + std::to_string(binding) + " (" +
                             tensor + ")");
    const Buffer* b = it->second ? it->second : rt.placeholder_.get();
    const uint64_t texels = std::min<uint64_t>(b->allocated() / 16, rt.info_.max_texel_buffer_elements);
    s.views.emplace_back(rt.device_, vk::BufferViewCreateInfo{.buffer = *b->handle(),
                                                              .format = vk::Format::eR32G32B32A32Uint,
                                                              .offset = 0,
                                                              .range = texels * 16});
    texel_views.push_back(*s.views.back());
    bound.insert(*b->handle());
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
    writes.push_back(
        {.dstSet = set,
         .dstBinding = slots[i],
         .descriptorCount = 1,
         .descriptorType = uniform ? vk::DescriptorType::eUniformBuffer : vk::DescriptorType::eStorageBuffer,
         .pBufferInfo = &infos[i]});
  }
  size_t texel = 0;
  for (const auto& [binding, tensor] : p.interface.texel_buffers)
    writes.push_back({.dstSet = set,
                      .dstBinding = binding,
                      .descriptorCount = 1,
                      .descriptorType = vk::DescriptorType::eUniformTexelBuffer,
                      .pTexelBufferView = &texel_views[texel++]});
  rt.device_.updateDescriptorSets(writes, nullptr);

  for (const auto& i : infos) bound.insert(i.buffer);
  const vk::Pipeline pipeline = *p.pipeline;
  const vk::PipelineLayout layout = *p.layout;
  return {[=](vk::CommandBuffer c) {
            c.bindPipeline(vk::PipelineBindPoint::eCompute, pipeline);
            c.bindDescriptorSets(vk::PipelineBindPoint::eCompute, layout, 0, set, nullptr);
            c.dispatch(gx, gy, gz);
          },
          name};
}

void Batch::dispatch(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params,
                     uint32_t gx, uint32_t gy, uint32_t gz) {
  State& s = *s_;
  // Checked in `kvbench list --pipelines` too, so that a launch past the limits shows there.
  const auto& info = s.rt.info_;
  const auto& most = info.max_workgroup_count;
  if (gx > most[0] || gy > most[1] || gz > most[2])
    throw std::logic_error(kernel.shader + ": " + std::to_string(gx) + " x " + std::to_string(gy) + " x " +
                           std::to_string(gz) + " workgroups exceed maxComputeWorkGroupCount (" +
                           std::to_string(most[0]) + ", " + std::to_string(most[1]) + ", " +
                           std::to_string(most[2]) + ") of " + info.name);
  // kvbench list --pipelines: the pipeline is checked, not built (a compile), and nothing recorded.
  if (s.rt.plan_only_) {
    s.rt.check_pipeline(kernel);
    s.rt.pipeline_log_.push_back(s.rt.pipeline_key(kernel));
    return;
  }
  std::set<VkBuffer> bound;                  // every buffer the dispatch reads or writes
  if (s.rt.compile_only_) gx = gy = gz = 0;  // a valid empty dispatch (vkCmdDispatch allows 0)
  State::Entry entry = s.prepare(kernel, buffers, params, gx, gy, gz, bound);
  s.stage_mapped_readbacks(bound);
  s.touched.insert(bound.begin(), bound.end());
  s.begin();
  s.barrier(vk::PipelineStageFlagBits::eComputeShader,
            vk::AccessFlagBits::eShaderRead | vk::AccessFlagBits::eShaderWrite);
  s.entries.push_back(std::move(entry));
  s.executed(State::Last::dispatch, vk::PipelineStageFlagBits::eComputeShader,
             vk::AccessFlagBits::eShaderWrite);
}

std::pair<uint32_t, uint32_t> grid_layout(uint64_t groups, const std::array<uint32_t, 3>& most) {
  const uint64_t width = std::min<uint64_t>(groups, most[0]);
  const uint64_t rows = width ? (groups + width - 1) / width : 1;
  if (rows > most[1] || (width == 0 && groups > 0))
    throw std::logic_error(std::to_string(groups) +
                           " workgroups exceed a grid of maxComputeWorkGroupCount (" +
                           std::to_string(most[0]) + " x " + std::to_string(most[1]) + ")");
  return {static_cast<uint32_t>(width), static_cast<uint32_t>(rows)};
}

void Batch::dispatch_groups(const Kernel& kernel, const KernelBuffers& buffers, const KernelParams& params,
                            uint64_t groups) {
  const auto [x, y] = grid_layout(groups, s_->rt.info().max_workgroup_count);
  dispatch(kernel, buffers, params, x, y);
}

void Batch::dispatch_invocations(const Kernel& kernel, const KernelBuffers& buffers,
                                 const KernelParams& params, uint64_t invocations) {
  if (invocations > (uint64_t{1} << 32))
    throw std::logic_error(kernel.shader + ": " + std::to_string(invocations) +
                           " invocations are past its 32-bit index");
  dispatch_groups(kernel, buffers, params, (invocations + 63) / 64);
}

namespace {

// A repeated submission's warm-up records at most this many dispatches (a command buffer of
// a few hundred thousand commands), whatever its device time.
constexpr uint64_t kMostWarmupDispatches = 200000;
// shaders/shader_clock.comp spins this many shader clock cycles: milliseconds at any clock,
// so the launch's microseconds are below a percent of the interval timed.
constexpr uint32_t kClockSpinCycles = 1u << 23;
// A warm-up that measured short is resubmitted, at least twice as long each time: on a busy
// CPU device a dispatch's time varies, and 4 tries sized by the last one's rate once ended at
// 186 ms of the 200 asked (the bench test caught it).
constexpr int kWarmupAttempts = 10;

// Each memory write before it reaches every later compute or transfer command: between
// repetitions, which read what the previous one wrote (and a flush that overwrites a buffer).
void full_barrier(vk::CommandBuffer c) {
  using S = vk::PipelineStageFlagBits;
  using A = vk::AccessFlagBits;
  const vk::MemoryBarrier b{
      .srcAccessMask = A::eShaderWrite | A::eTransferWrite,
      .dstAccessMask = A::eShaderRead | A::eShaderWrite | A::eTransferRead | A::eTransferWrite};
  c.pipelineBarrier(S::eComputeShader | S::eTransfer, S::eComputeShader | S::eTransfer, {}, b, nullptr,
                    nullptr);
}

}  // namespace

// Records `e`; a dispatch between timestamps q and q + 1 when `pool` is given.
void Batch::State::emit(vk::CommandBuffer c, const Entry& e, vk::QueryPool pool, uint32_t& q) {
  if (!pool || e.shader.empty()) return e.record(c);
  // Latched once everything before has finished: the dispatch alone lies between the two.
  c.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, pool, q++);
  e.record(c);
  c.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, pool, q++);
}

std::vector<double> Batch::State::execute(uint32_t queries,
                                          const std::function<void(vk::CommandBuffer, vk::QueryPool)>& body) {
  vk::raii::CommandBuffers cmds(rt.device_,
                                vk::CommandBufferAllocateInfo{.commandPool = *rt.command_pool_,
                                                              .level = vk::CommandBufferLevel::ePrimary,
                                                              .commandBufferCount = 1});
  vk::raii::CommandBuffer& cmd = cmds[0];
  cmd.begin(vk::CommandBufferBeginInfo{.flags = vk::CommandBufferUsageFlagBits::eOneTimeSubmit});
  vk::raii::QueryPool pool{nullptr};
  if (queries) {
    pool = vk::raii::QueryPool(
        rt.device_, vk::QueryPoolCreateInfo{.queryType = vk::QueryType::eTimestamp, .queryCount = queries});
    cmd.resetQueryPool(*pool, 0, queries);
  }
  body(*cmd, queries ? *pool : vk::QueryPool{});
  cmd.end();
  const vk::CommandBuffer raw = *cmd;
  rt.queue_.submit(vk::SubmitInfo{.commandBufferCount = 1, .pCommandBuffers = &raw}, *rt.fence_);
  // Block in the driver rather than spin: a spinning host thread steals a core from lavapipe.
  const vk::Result waited = rt.device_.waitForFences({*rt.fence_}, VK_TRUE, UINT64_MAX);
  rt.device_.resetFences({*rt.fence_});
  if (waited != vk::Result::eSuccess)
    throw std::runtime_error("waiting for a batch of work on " + rt.info_.name + " failed");
  std::vector<double> ms;  // each pair of timestamps' interval
  if (!queries) return ms;
  auto [result, stamps] =
      pool.getResults<uint64_t>(0, queries, queries * sizeof(uint64_t), sizeof(uint64_t),
                                vk::QueryResultFlagBits::e64 | vk::QueryResultFlagBits::eWait);
  for (uint32_t i = 0; i + 1 < queries; i += 2)
    ms.push_back(static_cast<double>(timestamp_ticks(stamps[i], stamps[i + 1], rt.timestamp_valid_bits_)) *
                 rt.timestamp_period_ns_ * 1e-6);
  return ms;
}

void Batch::State::run_once() {
  std::vector<std::string> timed;
  for (const auto& e : entries)
    if (!e.shader.empty() && rt.info_.timestamps) timed.push_back(e.shader);
  ms = execute(static_cast<uint32_t>(2 * timed.size()), [&](vk::CommandBuffer c, vk::QueryPool pool) {
    uint32_t q = 0;
    for (const auto& e : entries) emit(c, e, pool, q);
  });
  if (rt.log_dispatches_)
    for (size_t i = 0; i < ms.size(); ++i) rt.dispatch_log_.push_back({timed[i], ms[i]});
}

// The dispatches (first to last, with what lies between) repeated back to back in one
// submission: an untimed warm-up of at least plan.warmup_ms device time (resubmitted with
// more repetitions when it fell short), then plan.reps timed ones, then the clock probe.
void Batch::State::run_repeated(const RepeatPlan& plan) {
  std::vector<size_t> at;  // the entries that dispatch
  for (size_t i = 0; i < entries.size(); ++i)
    if (!entries[i].shader.empty()) at.push_back(i);
  const size_t first = at.front(), last = at.back(), d = at.size();
  const uint64_t most = std::max<uint64_t>(1, kMostWarmupDispatches / d);
  const uint64_t guess =
      plan.rep_ms_hint > 0 ? static_cast<uint64_t>(std::ceil(plan.warmup_ms / plan.rep_ms_hint)) : 1;
  uint64_t warmup = std::min(most, std::max<uint64_t>(guess, static_cast<uint64_t>(plan.min_warmup)));
  std::unique_ptr<Buffer> cycles;
  Entry probe;
  if (rt.info_.shader_clock) {
    cycles = rt.host_buffer(16, true);
    std::set<VkBuffer> bound;
    probe = prepare(Kernel("shader_clock"), {{"cycles", cycles.get()}}, {{"spin", kClockSpinCycles}}, 1, 1, 1,
                    bound);
  }
  const auto reps = static_cast<uint32_t>(plan.reps);
  const auto queries = static_cast<uint32_t>(2 + 2 * d * reps + (cycles ? 2 : 0));
  for (int attempt = 1;; ++attempt) {
    ms = execute(queries, [&](vk::CommandBuffer c, vk::QueryPool pool) {
      uint32_t q = 2;
      for (size_t i = 0; i < first; ++i) entries[i].record(c);
      c.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, pool, 0);
      for (uint64_t w = 0; w < warmup; ++w) {
        for (size_t i = first; i <= last; ++i) entries[i].record(c);
        full_barrier(c);
      }
      c.writeTimestamp(vk::PipelineStageFlagBits::eBottomOfPipe, pool, 1);
      for (uint32_t r = 0; r < reps; ++r) {
        if (!plan.flush.empty()) {  // untimed: outside every dispatch's pair of timestamps
          for (const Buffer* b : plan.flush) c.fillBuffer(*b->handle(), 0, VK_WHOLE_SIZE, r);
          full_barrier(c);
        }
        for (size_t i = first; i <= last; ++i) emit(c, entries[i], pool, q);
        full_barrier(c);
      }
      if (cycles) emit(c, probe, pool, q);
      for (size_t i = last + 1; i < entries.size(); ++i) entries[i].record(c);
    });
    if (ms[0] >= plan.warmup_ms || warmup >= most || attempt == kWarmupAttempts) break;
    // The warm-up measured short (a cold first estimate): size it from what it measured.
    const uint64_t sized = ms[0] > 0
                               ? static_cast<uint64_t>(std::ceil(warmup * plan.warmup_ms * 1.25 / ms[0]))
                               : warmup * 10 + 1;
    warmup = std::min(most, std::max(sized, 2 * warmup));
  }
  RepeatOutcome& o = rt.repeat_outcome_;
  o.warmup_count += static_cast<int64_t>(warmup);
  o.warmup_ms += ms[0];
  if (o.reps.size() < reps) o.reps.resize(reps);
  for (uint32_t r = 0; r < reps; ++r)
    for (size_t k = 0; k < d; ++k) o.reps[r].push_back({entries[at[k]].shader, ms[1 + r * d + k]});
  if (cycles) {
    uint32_t words[2];
    std::memcpy(words, cycles->mapped_, sizeof words);
    const double counted = static_cast<double>(words[0]) + 4294967296.0 * words[1];
    if (ms.back() > 0) o.clock_mhz = counted / (ms.back() * 1e3);
  }
  // The last repetition's (a copy first: assign from the vector's own range is undefined).
  std::vector<double> last_rep(ms.end() - static_cast<ptrdiff_t>(d + (cycles ? 1 : 0)),
                               ms.end() - (cycles ? 1 : 0));
  ms = std::move(last_rep);
}

double Batch::submit() {
  State& s = *s_;
  s.ms.clear();
  if (s.recording) {
    // Everything the batch wrote is visible to the host reads that follow.
    s.barrier(vk::PipelineStageFlagBits::eHost, vk::AccessFlagBits::eHostRead);
    bool dispatches = false;
    for (const auto& e : s.entries) dispatches = dispatches || !e.shader.empty();
    try {
      if (s.rt.repeat_ && dispatches && s.rt.info_.timestamps)
        s.run_repeated(*s.rt.repeat_);
      else
        s.run_once();
    } catch (...) {
      s.reset();
      throw;
    }
  }
  for (const auto& r : s.readbacks)
    std::memcpy(r.dst.data(), (r.staging ? r.staging : r.source)->mapped_, r.dst.size());
  s.reset();
  double total = 0;
  for (double m : s.ms) total += m;
  return total;
}

}  // namespace kvbench
