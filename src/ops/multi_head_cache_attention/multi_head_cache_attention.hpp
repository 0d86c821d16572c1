#pragma once
#include <memory>

#include "ops/operator.hpp"

namespace kvbench {

// pmx.dynamic_batching.MultiHeadCacheAttention (OpenPPL, seed 001;
// specs/multi_head_cache_attention.md).
std::unique_ptr<Operator> make_multi_head_cache_attention_operator();

}  // namespace kvbench
