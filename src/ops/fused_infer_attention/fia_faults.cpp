// aclnn.FusedInferAttentionScoreV3: the page-attention faults' reads (fia_faults.hpp).
#include "ops/fused_infer_attention/fia_faults.hpp"

namespace kvbench {

FiaPagedRead fia_paged_read(const std::string& fault) {
  if (fault == "page_index_stuck") return FiaPagedRead::index_stuck;
  if (fault == "block_offset_capped_128") return FiaPagedRead::offset_capped_128;
  if (fault == "block_size_doubled") return FiaPagedRead::block_size_doubled;
  return FiaPagedRead::right;
}

FiaSlot fia_key_slot(const FiaParams& p, const std::vector<int64_t>& table, int64_t b, int64_t t,
                     FiaPagedRead read) {
  const int64_t bs = p.block_size, row0 = b * p.max_blocks;
  switch (read) {
    case FiaPagedRead::index_stuck: return {table[row0], t % bs};
    case FiaPagedRead::offset_capped_128: return {table[row0 + t / bs], t % bs % 128};
    case FiaPagedRead::block_size_doubled: return {table[row0 + t / (2 * bs)], t % (2 * bs)};
    default: return {table[row0 + t / bs], t % bs};
  }
}

int64_t fia_keys_last_block_mod(const FiaParams& p, int64_t b) {
  const int64_t keys = p.keys(b), bs = p.block_size;
  return keys > 0 && keys % bs == 0 ? keys - bs : keys;
}

}  // namespace kvbench
