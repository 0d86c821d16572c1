#pragma once
// The host's plan for mhca_attention.comp: which work items exist and where each writes
// its partial softmax state (see the shader's header comment).
#include <cstdint>
#include <vector>

#include "ops/multi_head_cache_attention/mhca_params.hpp"

namespace kvbench {

struct AttentionPlan {
  std::vector<uint32_t> batch_plan;  // per batch: slot base, number of splits, split length
  std::vector<uint32_t> items;       // per item: batch, kv head, first vector, vectors, split
  uint32_t num_items = 0;
  uint64_t slots = 0;                // partial states (each head_dim + 2 floats)
};

constexpr uint32_t kVectorsPerItem = 4;  // QT in the shader

// Decode-like batches (seqlen 1) split their KV length in 256-token pieces so that a few
// batches still fill the device; prefill batches have enough items already and split
// only every 2048 tokens.
AttentionPlan plan_attention(const MhcaParams& p);

}  // namespace kvbench
