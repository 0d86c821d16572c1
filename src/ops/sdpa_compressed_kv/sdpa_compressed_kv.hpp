#pragma once
#include <memory>

#include "ops/operator.hpp"

namespace kvbench {

// dnnl.SDPACompressedKV (oneDNN Graph, seed 004; specs/sdpa_compressed_kv.md).
std::unique_ptr<Operator> make_sdpa_compressed_kv_operator();

}  // namespace kvbench
