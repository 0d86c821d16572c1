#include "ops/attention/attention_kernel.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace kvbench {
namespace {

// `groups` workgroups as a 2-D grid within Vulkan's guaranteed 65535 per dimension; the
// shaders linearize (y * width + x) and ignore the surplus of the last row.
std::pair<uint32_t, uint32_t> grid(uint64_t groups) {
  const uint64_t width = std::min<uint64_t>(groups, 65535);
  return {static_cast<uint32_t>(width), static_cast<uint32_t>((groups + width - 1) / std::max<uint64_t>(width, 1))};
}

}  // namespace

void check_attention_device(const DeviceInfo& dev, int64_t key_dim, int64_t value_dim) {
  if (dev.subgroup_size < 8 || !dev.subgroup_shuffle)
    throw SkipCase("the attention kernel needs subgroups of at least 8 lanes with shuffles; " + dev.name + " has " +
                   std::to_string(dev.subgroup_size));
  for (int64_t d : {key_dim, value_dim})
    if (d % 8 != 0 || d > 256)
      throw SkipCase("the attention kernel needs head sizes that are multiples of 8, at most 256 (" + std::to_string(d) + ")");
}

void run_attention(Batch& batch, const AttentionPlan& plan, AttentionLaunch launch) {
  Buffer* batch_plan = batch.buffer_with(plan.batch_plan);
  Buffer* items = batch.buffer_with(plan.items);
  Buffer* merge = batch.buffer_with(plan.merge);
  Buffer* partials = batch.buffer(static_cast<size_t>(plan.slots) * static_cast<size_t>(launch.head_dim + 2) * 4);
  launch.buffers["batch_plan"] = batch_plan;
  launch.buffers["items"] = items;
  launch.buffers["partials"] = partials;
  launch.params.emplace("num_items", plan.num_items);
  const auto [ax, ay] = grid((uint64_t{plan.num_items} * 8 + 63) / 64);
  batch.dispatch(launch.kernel, launch.buffers, launch.params, ax, ay);
  const uint64_t elements = plan.merge.size() / 4 * static_cast<uint64_t>(launch.head_dim);
  const auto& pq = launch.post_quant;
  const uint64_t words = elements * dtype_bits(launch.out_dtype) / 32;
  const auto [mx, my] = grid((words + 63) / 64);
  batch.dispatch("attention_merge",
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
