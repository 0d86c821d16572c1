#include "ops/attention/attention_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kvbench {

int64_t max_vectors_per_kv_head(const AttentionShape& s) {
  int64_t rows = 0;
  for (int64_t r : s.q_rows) rows = std::max(rows, r);
  return rows * (s.num_heads / s.num_kv_heads);
}

bool single_query_row(const AttentionShape& s) {
  return std::all_of(s.q_rows.begin(), s.q_rows.end(), [](int64_t r) { return r == 1; });
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Keys per split of each batch: prefill every 2048; decode as DecodeSplit says. All within
// kMaxMergeSplits splits.
std::vector<int64_t> split_lengths(const AttentionShape& s, int64_t per_item, const DecodeSplit& rule) {
  const int64_t G = s.num_heads / s.num_kv_heads;
  int64_t items = 0, decode_groups = 0;  // prefill items; decode items per split
  for (size_t b = 0; b < s.q_rows.size(); ++b) {
    const int64_t groups = s.num_kv_heads * ceil_div(s.q_rows[b] * G, per_item);
    if (s.q_rows[b] == 1)
      decode_groups += groups;
    else
      items += groups * std::max<int64_t>(1, ceil_div(s.kv_len[b], 2048));
  }
  const int64_t wanted =
      decode_groups > 0 ? std::max<int64_t>(1, ceil_div(rule.target_items - items, decode_groups)) : 1;
  std::vector<int64_t> chunks;
  for (size_t b = 0; b < s.q_rows.size(); ++b) {
    const int64_t kv = s.kv_len[b];
    int64_t chunk = 2048;
    if (s.q_rows[b] == 1) {
      // Splits of max_keys, or more and shorter ones (rounded down to whole 16-key tiles) when
      // the device wants more items than they give.
      const int64_t nsplit = std::min(wanted, ceil_div(kv, rule.min_keys));
      chunk = nsplit <= ceil_div(kv, rule.max_keys) ? rule.max_keys
                                                    : std::max(rule.min_keys, ceil_div(kv, nsplit) / 16 * 16);
    }
    chunks.push_back(std::max(chunk, ceil_div(ceil_div(kv, kMaxMergeSplits), 16) * 16));
  }
  return chunks;
}

}  // namespace

AttentionPlan plan_attention(const AttentionShape& s, uint32_t vectors_per_item, DecodeSplit split) {
  if (split.max_keys < 16 || split.min_keys < 16 || split.max_keys % 16 || split.min_keys % 16)
    throw std::logic_error("plan_attention: decode splits of " + std::to_string(split.min_keys) + " to " +
                           std::to_string(split.max_keys) + " keys (multiples of 16)");
  if (vectors_per_item < 1 || vectors_per_item > kDecodeMaxVectors)
    throw std::logic_error("plan_attention: items of " + std::to_string(vectors_per_item) + " vectors");
  AttentionPlan plan;
  plan.vectors_per_item = vectors_per_item;
  plan.single_row = single_query_row(s);
  const int64_t per_item = vectors_per_item;
  const int64_t G = s.num_heads / s.num_kv_heads;
  int64_t vectors_out = 0;
  for (size_t b = 0; b < s.q_rows.size(); ++b) vectors_out += s.q_rows[b] * s.num_heads;
  plan.merge.assign(static_cast<size_t>(4 * vectors_out), 0);
  const std::vector<int64_t> chunks = split_lengths(s, per_item, split);
  for (size_t b = 0; b < s.q_rows.size(); ++b) {
    const int64_t rows = s.q_rows[b], kv_len = s.kv_len[b];
    const int64_t chunk = chunks[b];
    const int64_t nsplit = std::max<int64_t>(1, (kv_len + chunk - 1) / chunk);
    plan.batch_plan.push_back(static_cast<uint32_t>(plan.slots));
    plan.batch_plan.push_back(static_cast<uint32_t>(nsplit));
    plan.batch_plan.push_back(static_cast<uint32_t>(chunk));
    // Slot of (row i, head h, split): slot base + (i * H + h) * nsplit + split.
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t h = 0; h < s.num_heads; ++h) {
        const auto o = static_cast<size_t>(s.out_vector(static_cast<int64_t>(b), i, h));
        if (4 * o + 3 >= plan.merge.size())
          throw std::logic_error("plan_attention: output vector out of range");
        plan.merge[4 * o] =
            static_cast<uint32_t>(plan.slots + static_cast<uint64_t>((i * s.num_heads + h) * nsplit));
        plan.merge[4 * o + 1] = static_cast<uint32_t>(nsplit);
        plan.merge[4 * o + 3] = static_cast<uint32_t>(h);
        plan.merge[4 * o + 2] =
            s.lse_index ? static_cast<uint32_t>(s.lse_index(static_cast<int64_t>(b), i, h)) : kNoLse;
      }
    plan.slots += static_cast<uint64_t>(rows * s.num_heads * nsplit);
    // The vectors of (b, kv head hk): v = row * G + g for q head hk * G + g.
    const int64_t vectors = rows * G;
    // Splits outermost: consecutive items (the subgroups of one workgroup, which lavapipe
    // runs one after the other) read the same keys' rows of neighbouring heads, which share
    // cache lines, pages and the prefetcher's streams.
    for (int64_t split = 0; split < nsplit; ++split)
      for (int64_t hk = 0; hk < s.num_kv_heads; ++hk)
        for (int64_t v0 = 0; v0 < vectors; v0 += per_item) {
          const int64_t nv = std::min<int64_t>(per_item, vectors - v0);
          for (int64_t x : {static_cast<int64_t>(b), hk, v0, nv, split})
            plan.items.push_back(static_cast<uint32_t>(x));
          ++plan.num_items;
        }
  }
  return plan;
}

}  // namespace kvbench
