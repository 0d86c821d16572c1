#pragma once
#include <memory>

#include "ops/operator.hpp"

namespace kvbench {

// atb.ReshapeAndCacheOmni (Ascend ATB, seed 002) and its uncompressed sibling
// atb.ReshapeAndCache (specs/reshape_and_cache.md).
std::unique_ptr<Operator> make_reshape_and_cache_omni_operator();
std::unique_ptr<Operator> make_reshape_and_cache_operator();

}  // namespace kvbench
