#pragma once
// The host's plan for the shared attention kernel (shaders/attention_core.glsl): which work
// items exist, where each writes its partial softmax state, and which partial states the
// merge (shaders/attention_merge*.comp) combines into each output vector. Every attention
// operator (MHCA, SDPA) plans through here.
#include <cstdint>
#include <functional>
#include <vector>

namespace kvbench {

constexpr uint32_t kVectorsPerItem = 8;     // the most: NV of the tiles kernel, LANES of the lanes kernel
constexpr uint32_t kDecodeMaxVectors = 16;  // the most of the decode kernel's items (heads split, NV)
// Items of 4 lanes (LANES 4) halve lavapipe's key loop for a decode with G <= 4 but are
// pipelines of their own, each 1-5 s of LLVM compile at its first use: they go only to
// decodes of at least this many K rows (keys x kv heads; a 4k context over 8 kv heads), where
// the kernel's speed is what is measured (model shapes, `kvbench bench`), not to the
// conformance suite's short decodes, which each save under a millisecond
// (specs/attention-kernels.md, "Items of 4 lanes only for long decodes").
constexpr int64_t kFourLanesMinKeyRows = 32768;

struct AttentionPlan {
  std::vector<uint32_t> batch_plan;  // per batch: slot base, number of splits, split length
  std::vector<uint32_t> items;       // per item: batch, kv head, first vector, vectors, split
  std::vector<uint32_t> merge;       // per output vector: first slot, number of splits, lse index, head
  uint32_t num_items = 0;
  uint64_t slots = 0;                           // partial states (each dv + 2 floats)
  uint32_t vectors_per_item = kVectorsPerItem;  // the most query vectors an item holds
  bool single_row = false;  // every batch has one query row (a decode): the decode kernel's shapes
};

struct AttentionShape {
  int64_t num_heads = 1, num_kv_heads = 1;
  std::vector<int64_t> q_rows, kv_len;  // per batch
  // The output vector (row of dv elements) that query row `row` of batch `b`, head `h`
  // writes, in the output tensor's order.
  std::function<int64_t(int64_t b, int64_t row, int64_t h)> out_vector;
  // Where that vector's log-sum-exp goes in the lse tensor (empty: no lse).
  std::function<int64_t(int64_t b, int64_t row, int64_t h)> lse_index;
};

constexpr uint32_t kNoLse = 0xffffffffu;

// Keys per split of a decode-like batch (one query row) at most: 256 for the gpu kernel, so
// that a few batches still fill a GPU (on an H200, 64 and 1 024 measured slower:
// specs/attention-kernels.md); 1 024 for the cpu kernel, whose CPU runs a few workgroups
// at a time and pays for each split in partial states and merge work (lavapipe's 8k FIA
// decode 19.6 -> 18.3 ms).
constexpr int64_t kDecodeSplitTiles = 256, kDecodeSplitLanes = 1024;
// A prefill splits its keys only to fill the device, and into at most one split per this many keys.
constexpr int64_t kPrefillMinSplit = 2048;
// The most splits of one output vector: attention_merge_splits.comp keeps a weight per split in
// shared memory. Longer sequences get longer splits.
constexpr int64_t kMaxMergeSplits = 512;

// How decode-like batches split their keys: at most max_keys per split, and shorter splits
// (down to min_keys, multiples of 16) until the plan has at least target_items items, so
// that a device of target_items / 2 compute units gets two items per unit.
struct DecodeSplit {
  int64_t max_keys = kDecodeSplitTiles;
  int64_t min_keys = 64;
  int64_t target_items = 0;
  // Every split of every batch (prefill too) at most this many keys, 0: no cap. Where the
  // device ends loops after a budget of iterations (DeviceInfo::loop_iteration_limit). A cap
  // that the merge's kMaxMergeSplits cannot meet leaves longer splits: the caller refuses them.
  int64_t cap_keys = 0;
};

// Items take up to `vectors_per_item` (1 to kDecodeMaxVectors) query vectors that share a kv
// head (the q heads of a GQA group, then consecutive rows). Decode-like batches split their
// KV length as `split` says; others not at all, unless the plan would have fewer than
// split.target_items items (then into as few splits as reach it, at most one per
// kPrefillMinSplit keys), so that a prefill's partial states are one per output vector. Items are ordered
// split-major: neighbouring items read the same keys of neighbouring kv heads.
AttentionPlan plan_attention(const AttentionShape& s, uint32_t vectors_per_item = kVectorsPerItem,
                             DecodeSplit split = {});

// The bytes of the plan's partial softmax states (its scratch): a slot of dv + 2 floats each.
inline uint64_t attention_scratch_bytes(const AttentionPlan& plan, int64_t value_dim) {
  return plan.slots * static_cast<uint64_t>(value_dim + 2) * 4;
}

// A merge entry's first slot that marks a vector another wave computes: the merges skip it.
constexpr uint32_t kOtherWave = 0xffffffffu;

// The plan cut into waves whose partial states each fit `max_slots` slots, so that scratch
// is sized by what is live, not by the whole plan: each wave is a plan of its own over one
// scratch buffer (its slots numbered from 0: batch_plan's slot bases shifted, modulo 2^32,
// by the wave's first slot), with the items whose rows it holds and a merge table in which
// every other vector is kOtherWave. Waves hold whole query rows (a batch's rows are
// consecutive slots) and never cut an item's vectors. One wave, the plan itself, when it
// fits; empty when one unit of rows (the fewest an item boundary allows) does not.
std::vector<AttentionPlan> plan_waves(const AttentionPlan& plan, const AttentionShape& s, uint64_t max_slots);

// The most query vectors any (batch, kv head) of the shape has: rows x G.
int64_t max_vectors_per_kv_head(const AttentionShape& s);

// Whether every batch of the shape has one query row (a decode).
bool single_query_row(const AttentionShape& s);

}  // namespace kvbench
