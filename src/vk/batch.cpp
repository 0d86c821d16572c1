// Batch: a case's uploads, dispatches and downloads recorded in one command buffer with
// barriers and submitted once (specs/runtime.md).
#include <algorithm>
#include <cmath>
#include <cstring>
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

namespace {

constexpr uint32_t kSetsPerPool = 16, kQueriesPerPool = 64;
constexpr uint32_t kStorageBuffersPerSet = 32, kTexelBuffersPerSet = 4;  // room in the pools for each set

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
  std::vector<vk::raii::BufferView> views;    // the `_texels` bindings' views
  std::vector<vk::raii::QueryPool> queries;
  std::vector<std::string> timed;  // the shader of each dispatch with timestamps recorded

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
    // Whatever earlier submissions wrote is visible to this batch. They ran only copies and
    // compute dispatches, so those stages are named (not ALL_COMMANDS, which best practices
    // flags as a needless full stall).
    src_stages = vk::PipelineStageFlagBits::eComputeShader | vk::PipelineStageFlagBits::eTransfer;
    src_writes = vk::AccessFlagBits::eShaderWrite | vk::AccessFlagBits::eTransferWrite;
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
      // Room for kSetsPerPool sets of the most storage and texel buffers and one uniform buffer.
      const std::array<vk::DescriptorPoolSize, 3> sizes{
          vk::DescriptorPoolSize{.type = vk::DescriptorType::eStorageBuffer, .descriptorCount = kSetsPerPool * kStorageBuffersPerSet},
          vk::DescriptorPoolSize{.type = vk::DescriptorType::eUniformTexelBuffer, .descriptorCount = kSetsPerPool * kTexelBuffersPerSet},
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
    views.clear();
    transient.clear();
    params = nullptr;
    params_used = 0;
    timed.clear();
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

void Batch::fill(Buffer& dst, uint32_t word) {
  State& s = *s_;
  s.stage_mapped_readbacks({*dst.handle()});
  s.begin();
  if (s.last != State::Last::upload || s.uploaded.count(*dst.handle()))
    s.barrier(vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
  s.cmd.fillBuffer(*dst.handle(), 0, VK_WHOLE_SIZE, word);
  s.executed(State::Last::upload, vk::PipelineStageFlagBits::eTransfer, vk::AccessFlagBits::eTransferWrite);
  s.uploaded.insert(*dst.handle());
  s.touched.insert(*dst.handle());
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
  if (rt.plan_only_) {
    rt.pipeline_log_.push_back(kernel.key());
    return;
  }
  if (p.interface.buffers.size() > kStorageBuffersPerSet || p.interface.texel_buffers.size() > kTexelBuffersPerSet)
    throw std::logic_error(name + ": more storage or texel buffers than a batch's descriptor pools hold a set");
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
  // Each `_texels` binding views its tensor's buffer as uvec4 texels, as many as fit
  // maxTexelBufferElements (an operator reads through it only when its data lies within).
  std::vector<vk::BufferView> texel_views;
  std::set<VkBuffer> bound;  // every buffer the dispatch reads or writes
  for (const auto& [binding, tensor] : p.interface.texel_buffers) {
    auto it = buffers.find(tensor);
    if (it == buffers.end()) throw std::logic_error(name + ": no buffer given for texel binding " + std::to_string(binding) + " (" + tensor + ")");
    const Buffer* b = it->second ? it->second : rt.placeholder_.get();
    const uint64_t texels = std::min<uint64_t>(b->size() / 16, info.max_texel_buffer_elements);
    s.views.emplace_back(rt.device_, vk::BufferViewCreateInfo{.buffer = *b->handle(), .format = vk::Format::eR32G32B32A32Uint,
                                                              .offset = 0, .range = texels * 16});
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
    writes.push_back({.dstSet = set, .dstBinding = slots[i], .descriptorCount = 1,
                      .descriptorType = uniform ? vk::DescriptorType::eUniformBuffer : vk::DescriptorType::eStorageBuffer,
                      .pBufferInfo = &infos[i]});
  }
  size_t texel = 0;
  for (const auto& [binding, tensor] : p.interface.texel_buffers)
    writes.push_back({.dstSet = set, .dstBinding = binding, .descriptorCount = 1,
                      .descriptorType = vk::DescriptorType::eUniformTexelBuffer, .pTexelBufferView = &texel_views[texel++]});
  rt.device_.updateDescriptorSets(writes, nullptr);

  for (const auto& i : infos) bound.insert(i.buffer);
  s.stage_mapped_readbacks(bound);
  s.touched.insert(bound.begin(), bound.end());
  s.begin();
  s.barrier(vk::PipelineStageFlagBits::eComputeShader, vk::AccessFlagBits::eShaderRead | vk::AccessFlagBits::eShaderWrite);
  const vk::QueryPool* pool = nullptr;
  uint32_t query = 0;
  if (info.timestamps) {
    const size_t n = s.timed.size();
    if (n % (kQueriesPerPool / 2) == 0 && n / (kQueriesPerPool / 2) >= s.queries.size())
      s.queries.emplace_back(rt.device_, vk::QueryPoolCreateInfo{.queryType = vk::QueryType::eTimestamp, .queryCount = kQueriesPerPool});
    pool = &*s.queries[n / (kQueriesPerPool / 2)];
    query = static_cast<uint32_t>(n % (kQueriesPerPool / 2) * 2);
    s.timed.push_back(name);
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
    for (size_t i = 0; i < s.timed.size(); ++i) {
      const auto q = static_cast<uint32_t>(i % (kQueriesPerPool / 2) * 2);
      auto [result, stamps] = s.queries[i / (kQueriesPerPool / 2)].getResults<uint64_t>(
          q, 2, 2 * sizeof(uint64_t), sizeof(uint64_t), vk::QueryResultFlagBits::e64 | vk::QueryResultFlagBits::eWait);
      s.ms.push_back(static_cast<double>(timestamp_ticks(stamps[0], stamps[1], rt.timestamp_valid_bits_)) *
                     rt.timestamp_period_ns_ * 1e-6);
      if (rt.log_dispatches_) rt.dispatch_log_.push_back({s.timed[i], s.ms.back()});
    }
  }
  for (const auto& r : s.readbacks) std::memcpy(r.dst.data(), (r.staging ? r.staging : r.source)->mapped_, r.dst.size());
  s.reset();
  double total = 0;
  for (double m : s.ms) total += m;
  return total;
}

}  // namespace kvbench
