#pragma once
#include <memory>

#include "ops/operator.hpp"

namespace kvbench {

// pmx.KeyValueCache (OpenPPL, seed 000; specs/key_value_cache.md).
std::unique_ptr<Operator> make_key_value_cache_operator();

}  // namespace kvbench
