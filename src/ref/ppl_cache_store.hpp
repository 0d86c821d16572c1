#pragma once
// PMX's KeyValueCache store of one (token, head) row, shared by the references of
// pmx.KeyValueCache and pmx.dynamic_batching.MultiHeadCacheAttention
// (specs/key_value_cache.md "Formulas").
#include <cstddef>
#include <cstdint>
#include <vector>

#include "check/expected.hpp"
#include "core/dtype.hpp"

namespace kvbench {

// Writes row x into the golden cache at element `cache_offset` (and, when quant_bit > 0,
// its group scales at `scale_offset`): the values as they are for quant_bit 0, else PPL's
// symmetric codes with their boundary alternates.
void store_ppl_row(const std::vector<double>& x, int64_t quant_bit, int64_t quant_group, DType t1, DType scale_dtype,
                   size_t cache_offset, size_t scale_offset, Expected& cache, Expected& scale);

}  // namespace kvbench
