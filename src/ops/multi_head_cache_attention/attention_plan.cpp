#include "ops/multi_head_cache_attention/attention_plan.hpp"

#include <algorithm>

namespace kvbench {

AttentionPlan plan_attention(const MhcaParams& p) {
  AttentionPlan plan;
  const int64_t G = p.group_ratio();
  for (int64_t b = 0; b < p.batches(); ++b) {
    const int64_t kvlen = p.kvlen(b);
    const int64_t chunk = p.seqlens[b] == 1 ? 256 : 2048;
    const int64_t nsplit = (kvlen + chunk - 1) / chunk;
    plan.batch_plan.push_back(static_cast<uint32_t>(plan.slots));
    plan.batch_plan.push_back(static_cast<uint32_t>(nsplit));
    plan.batch_plan.push_back(static_cast<uint32_t>(chunk));
    plan.slots += static_cast<uint64_t>(p.seqlens[b] * p.num_heads * nsplit);
    // The vectors of (b, kv head hk): v = row * G + g for q head hk * G + g.
    const int64_t vectors = p.seqlens[b] * G;
    for (int64_t hk = 0; hk < p.num_kv_heads; ++hk)
      for (int64_t v0 = 0; v0 < vectors; v0 += kVectorsPerItem)
        for (int64_t s = 0; s < nsplit; ++s) {
          const int64_t nv = std::min<int64_t>(kVectorsPerItem, vectors - v0);
          for (int64_t x : {b, hk, v0, nv, s}) plan.items.push_back(static_cast<uint32_t>(x));
          ++plan.num_items;
        }
  }
  return plan;
}

}  // namespace kvbench
