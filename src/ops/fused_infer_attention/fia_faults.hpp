#pragma once
// aclnn.FusedInferAttentionScoreV3: where the catalogued page-attention faults
// (fia_signature.cpp; specs/fused_infer_attention_score.md "Faults") make a kernel read a
// key, and how many keys they leave it. The reference plants them (`kvbench coverage
// --faults`); the golden never takes these paths.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/fused_infer_attention/fia_params.hpp"

namespace kvbench {

// How a faulty paged kernel turns a key's position into its cache slot.
enum class FiaPagedRead {
  right,               // blockTable[b, t / blockSize], row t % blockSize
  index_stuck,         // page_index_stuck: the batch's first block, row t % blockSize
  offset_capped_128,   // block_offset_capped_128: row (t % blockSize) % 128
  block_size_doubled,  // block_size_doubled: entry t / (2 blockSize), row t % (2 blockSize)
};
FiaPagedRead fia_paged_read(const std::string& fault);

// Key token t's block and row; the row may pass the block's end (block_size_doubled), the
// read then running on in memory past the block (fia_cache_index with that row).
struct FiaSlot {
  int64_t blk = 0, r = 0;
};
FiaSlot fia_key_slot(const FiaParams& p, const std::vector<int64_t>& table, int64_t b, int64_t t,
                     FiaPagedRead read);

// The keys batch b attends over when the kernel takes its last block's length as keys %
// blockSize (last_block_len_mod): a sequence that fills its last block loses that block.
int64_t fia_keys_last_block_mod(const FiaParams& p, int64_t b);

// The 256 values a faulty kernel reads HiF8 K/V codes as, by code, under the catalogued
// HiF8 faults: hif8_read_as_e4m3 (the bytes decoded as FP8 E4M3FN) and
// hif8_exponent_no_implicit_one (|E| taken as the field's low w - 1 bits, without the implicit
// leading one); nullptr for every other fault.
const std::array<double, 256>* fia_hif8_fault_values(const std::string& fault);

}  // namespace kvbench
