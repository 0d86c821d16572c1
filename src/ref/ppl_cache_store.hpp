#pragma once
// PMX's KeyValueCache store of (token, head) rows, shared by the references of
// pmx.KeyValueCache and pmx.dynamic_batching.MultiHeadCacheAttention
// (specs/key_value_cache.md "Formulas").
#include <cstddef>
#include <cstdint>
#include <span>

#include "check/expected.hpp"
#include "core/dtype.hpp"
#include "core/tensor.hpp"
#include "ref/quant.hpp"

namespace kvbench {

// One row to store: `width` values of `source` from element `source_offset`, written into
// the golden cache at element `cache_offset` and (quant_bit > 0) their group scales at
// `scale_offset`.
struct PplRow {
  const Tensor* source;
  size_t source_offset, cache_offset, scale_offset;
};

// Kernel faults of the store (`kvbench coverage --faults`): the quantizer's, and int4
// codes stored with the two nibbles of each byte swapped (element 2k+1 in the low nibble).
struct PplStoreFault {
  QuantFault quant;
  bool swap_nibbles = false;
};

// Stores every row: the values rounded to t1 for quant_bit 0, else PPL's
// symmetric codes with their boundary alternates. Rows are quantized on `threads` threads
// and recorded in the cache's order, so the golden does not depend on the thread count.
void store_ppl_rows(std::span<const PplRow> rows, size_t width, int64_t quant_bit, int64_t quant_group,
                    DType t1, DType scale_dtype, Expected& cache, Expected& scale, unsigned threads,
                    PplStoreFault fault = {});

}  // namespace kvbench
