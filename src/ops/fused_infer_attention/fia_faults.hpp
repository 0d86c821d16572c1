#pragma once
// aclnn.FusedInferAttentionScoreV3: where the catalogued page-attention faults
// (fia_signature.cpp; specs/fused_infer_attention_score.md "Faults") make a kernel read a
// key, and how many keys they leave it. The reference plants them (`kvbench coverage
// --faults`); the golden never takes these paths.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/attention/paged_faults.hpp"
#include "ops/fused_infer_attention/fia_params.hpp"

namespace kvbench {

// The paged read of a fault name (ops/attention/paged_faults.hpp): page_index_stuck,
// block_offset_capped_128, block_size_doubled; PagedRead::right for any other.
PagedRead fia_paged_read(const std::string& fault);

// Key token t's block and row; the row may pass the block's end (block_size_doubled), the
// read then running on in memory past the block (fia_cache_index with that row).
struct FiaSlot {
  int64_t blk = 0, r = 0;
};
FiaSlot fia_key_slot(const FiaParams& p, const std::vector<int64_t>& table, int64_t b, int64_t t,
                     PagedRead read);

// The 256 values a faulty kernel reads HiF8 K/V codes as, by code, under the catalogued
// HiF8 faults: hif8_read_as_e4m3 (the bytes decoded as FP8 E4M3FN) and
// hif8_exponent_no_implicit_one (|E| taken as the field's low w - 1 bits, without the implicit
// leading one); nullptr for every other fault.
const std::array<double, 256>* fia_hif8_fault_values(const std::string& fault);

}  // namespace kvbench
