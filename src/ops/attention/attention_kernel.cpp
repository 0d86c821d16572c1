#include "ops/attention/attention_kernel.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace kvbench {

namespace {

// KVBENCH_KERNEL: "gpu", "cpu", or unset/empty (the rule); anything else is an error.
std::optional<AttentionKernel> forced_kernel() {
  const char* v = std::getenv("KVBENCH_KERNEL");
  const std::string s = v ? v : "";
  if (s.empty()) return std::nullopt;
  if (s == "gpu") return AttentionKernel::tiles;
  if (s == "cpu") return AttentionKernel::lanes;
  throw std::runtime_error("KVBENCH_KERNEL must be gpu or cpu, not '" + s + "'");
}

bool lanes_can_run(const DeviceInfo& dev) { return dev.subgroup_size >= 8 && dev.subgroup_shuffle; }

// Items of 4 lanes give each lane D / 4 elements: at most 32, lavapipe's unrolling limit.
bool four_lanes_fit(const AttentionHeads& h) { return h.key_dim <= 128 && h.value_dim <= 128; }

bool lanes_heads_fit(const AttentionHeads& h) {
  return h.lanes_fit && h.key_dim % 8 == 0 && h.value_dim % 8 == 0 && h.key_dim <= 256 && h.value_dim <= 256;
}

}  // namespace

AttentionKernel choose_attention_kernel(const DeviceInfo& dev, const AttentionHeads& heads) {
  if (const auto forced = forced_kernel()) return *forced;
  return dev.type == "cpu" && lanes_can_run(dev) && lanes_heads_fit(heads) ? AttentionKernel::lanes
                                                                           : AttentionKernel::tiles;
}

uint32_t tiles_shared_bytes(int64_t key_dim, int64_t value_dim) {
  // shaders/attention_tiles.glsl: q_s[NV * D], kv_s[TK * (max(D, DV) + 1)], p_s[NV * TK], 3 x [NV], h_s[2 *
  // TK].
  const int64_t nv = kVectorsPerItem, maxd = std::max(key_dim, value_dim), tk = maxd <= 256 ? 16 : 4;
  return static_cast<uint32_t>(4 * (nv * key_dim + tk * (maxd + 1) + nv * tk + 3 * nv + 2 * tk));
}

void check_attention_device(const DeviceInfo& dev, const AttentionHeads& heads) {
  const int64_t kd = heads.key_dim, vd = heads.value_dim;
  if (kd % 8 != 0 || vd % 8 != 0 || kd <= 0 || vd <= 0)
    throw SkipCase("the attention kernels need head sizes that are multiples of 8 (" + std::to_string(kd) +
                   ", " + std::to_string(vd) + ")");
  if (choose_attention_kernel(dev, heads) == AttentionKernel::lanes) {
    if (!lanes_can_run(dev))
      throw SkipCase(
          "the cpu attention kernel (KVBENCH_KERNEL=cpu) needs subgroups of at least 8 lanes with "
          "shuffles; " +
          dev.name + " has " + std::to_string(dev.subgroup_size));
    if (!lanes_heads_fit(heads))
      throw SkipCase(
          "the cpu attention kernel (KVBENCH_KERNEL=cpu) needs head sizes of at most 256 that split over 8 "
          "lanes (" +
          std::to_string(kd) + ", " + std::to_string(vd) + ")");
    return;
  }
  if (kd > 576 || vd > 512)
    throw SkipCase("the attention kernel supports head sizes up to 576 (Q/K) and 512 (V), not " +
                   std::to_string(kd) + ", " + std::to_string(vd));
  const uint32_t shared = tiles_shared_bytes(kd, vd);
  if (shared > dev.shared_memory_bytes)
    throw SkipCase("the gpu attention kernel needs " + std::to_string(shared) +
                   " bytes of shared memory at head sizes " + std::to_string(kd) + "/" + std::to_string(vd) +
                   "; " + dev.name + " gives " + std::to_string(dev.shared_memory_bytes));
  // The kernel's workgroups, and its merge's (Vulkan guarantees only 128 invocations).
  const uint32_t wg = std::max(kTilesWorkgroup, kMergeSplitsWorkgroup);
  if (dev.max_workgroup_invocations < wg || dev.max_workgroup_size_x < wg)
    throw SkipCase("the gpu attention kernel and its merge need workgroups of " + std::to_string(wg) +
                   " invocations; " + dev.name + " allows " +
                   std::to_string(std::min(dev.max_workgroup_invocations, dev.max_workgroup_size_x)));
}

uint32_t attention_vectors_per_item(const DeviceInfo& dev, const AttentionHeads& heads,
                                    const AttentionShape& shape) {
  const bool four = four_lanes_fit(heads) && max_vectors_per_kv_head(shape) <= 4;
  return four && choose_attention_kernel(dev, heads) == AttentionKernel::lanes ? 4 : kVectorsPerItem;
}

void run_attention(Batch& batch, const AttentionShape& shape, AttentionLaunch launch) {
  const uint32_t per_item = attention_vectors_per_item(batch.runtime().info(), launch.heads, shape);
  const bool lanes = choose_attention_kernel(batch.runtime().info(), launch.heads) == AttentionKernel::lanes;
  // Two items per compute unit at least (DeviceInfo::compute_units).
  const DecodeSplit split{.max_keys = lanes ? kDecodeSplitLanes : kDecodeSplitTiles,
                          .target_items = 2 * static_cast<int64_t>(batch.runtime().info().compute_units)};
  run_attention(batch, plan_attention(shape, per_item, split), std::move(launch));
}

void run_attention(Batch& batch, const AttentionPlan& plan, AttentionLaunch launch) {
  Buffer* batch_plan = batch.buffer_with(plan.batch_plan);
  Buffer* items = batch.buffer_with(plan.items);
  Buffer* merge = batch.buffer_with(plan.merge);
  Buffer* partials =
      batch.buffer(static_cast<size_t>(plan.slots) * static_cast<size_t>(launch.head_dim + 2) * 4);
  // NaN in every partial state first: a slot the plan leaves unwritten makes its output
  // vectors NaN, on lavapipe (whose fresh memory reads as zeros) as on a GPU (stale memory).
  batch.fill(*partials, kPartialsPoison);
  launch.buffers["batch_plan"] = batch_plan;
  launch.buffers["items"] = items;
  launch.buffers["partials"] = partials;
  launch.params.emplace("num_items", plan.num_items);
  const AttentionKernel kernel = choose_attention_kernel(batch.runtime().info(), launch.heads);
  if (kernel == AttentionKernel::tiles) {
    launch.kernel.shader += "_tiles";
    const auto [ax, ay] = dispatch_grid(plan.num_items);  // one workgroup per item
    batch.dispatch(launch.kernel, launch.buffers, launch.params, ax, ay);
  } else {
    // A lane per query vector: 4 lanes per item for plans of 4-vector items, else 8.
    const uint32_t lanes = plan.vectors_per_item <= 4 && four_lanes_fit(launch.heads) ? 4 : kVectorsPerItem;
    launch.kernel.constants["LANES"] = lanes;
    const auto [ax, ay] = dispatch_grid((uint64_t{plan.num_items} * lanes + 63) / 64);
    batch.dispatch(launch.kernel, launch.buffers, launch.params, ax, ay);
  }
  const uint64_t elements = plan.merge.size() / 4 * static_cast<uint64_t>(launch.head_dim);
  const auto& pq = launch.post_quant;
  // The gpu kernel's merge: a workgroup per output vector, parallel over its splits; the cpu
  // kernel's: an invocation per output word (faster on lavapipe: specs/attention-kernels.md).
  const uint64_t words = elements * dtype_bits(launch.out_dtype) / 32;
  const auto [mx, my] =
      dispatch_grid(kernel == AttentionKernel::tiles ? plan.merge.size() / 4 : (words + 63) / 64);
  // Constants: whether the partials are read through their texel view, and output elements per word.
  const Kernel merge_kernel(kernel == AttentionKernel::tiles ? "attention_merge_splits" : "attention_merge",
                            {{"TEXELS", batch.runtime().texels_cover(partials->size()) ? 1u : 0u},
                             {"PER_WORD", static_cast<uint32_t>(32 / dtype_bits(launch.out_dtype))}});
  batch.dispatch(merge_kernel,
                 {{"partials", partials},
                  {"merge", merge},
                  {"out", launch.out},
                  {"lse", launch.lse},
                  {"quantScale2", pq.scale},
                  {"quantOffset2", pq.offset}},
                 {{"elements", elements},
                  {"head_dim", launch.head_dim},
                  {"out_dtype", static_cast<uint32_t>(launch.out_dtype)},
                  {"empty_zeros", launch.empty == EmptyRow::zeros},
                  {"has_lse", launch.lse != nullptr},
                  {"pq_per_channel", pq.per_channel},
                  {"pq_offset", pq.offset != nullptr},
                  {"pq_dtype", static_cast<uint32_t>(pq.dtype)}},
                 mx, my);
}

}  // namespace kvbench
