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

// Splits of a prefill batch (more than one query row): one, whose partial states are then
// one per output vector, unless the whole plan has fewer than target_items items; then as
// many as reach it, at most one per kPrefillMinSplit keys (as FlashAttention-2's
// num_splits_heuristic does: split the keys only to fill the device). Splitting every 2048 keys whatever the
// occupancy had made the partial states grow as S1 x S2 (8.7 GB at a 32k Llama-3-8B prefill).
int64_t prefill_splits(int64_t kv_len, int64_t wanted) {
  return std::max<int64_t>(1, std::min(wanted, ceil_div(kv_len, kPrefillMinSplit)));
}

// Keys per split of each batch: prefill as prefill_splits says, decode as DecodeSplit says.
// All within kMaxMergeSplits splits, whole 16-key tiles.
std::vector<int64_t> split_lengths(const AttentionShape& s, int64_t per_item, const DecodeSplit& rule) {
  const int64_t G = s.num_heads / s.num_kv_heads;
  std::vector<int64_t> groups;  // items per split of each batch
  int64_t prefill_groups = 0, decode_groups = 0;
  for (size_t b = 0; b < s.q_rows.size(); ++b) {
    groups.push_back(s.num_kv_heads * ceil_div(s.q_rows[b] * G, per_item));
    (s.q_rows[b] == 1 ? decode_groups : prefill_groups) += groups.back();
  }
  const int64_t prefill_wanted = prefill_groups > 0 && prefill_groups + decode_groups < rule.target_items
                                     ? ceil_div(rule.target_items - decode_groups, prefill_groups)
                                     : 1;
  int64_t items = 0;  // prefill items
  for (size_t b = 0; b < s.q_rows.size(); ++b)
    if (s.q_rows[b] != 1) items += groups[b] * prefill_splits(s.kv_len[b], prefill_wanted);
  const int64_t wanted =
      decode_groups > 0 ? std::max<int64_t>(1, ceil_div(rule.target_items - items, decode_groups)) : 1;
  std::vector<int64_t> chunks;
  for (size_t b = 0; b < s.q_rows.size(); ++b) {
    const int64_t kv = s.kv_len[b];
    int64_t chunk = ceil_div(ceil_div(kv, prefill_splits(kv, prefill_wanted)), 16) * 16;
    if (s.q_rows[b] == 1) {
      // Splits of max_keys, or more and shorter ones (rounded down to whole 16-key tiles) when
      // the device wants more items than they give.
      const int64_t nsplit = std::min(wanted, ceil_div(kv, rule.min_keys));
      chunk = nsplit <= ceil_div(kv, rule.max_keys) ? rule.max_keys
                                                    : std::max(rule.min_keys, ceil_div(kv, nsplit) / 16 * 16);
    }
    if (rule.cap_keys >= 16) chunk = std::min(chunk, rule.cap_keys / 16 * 16);
    chunks.push_back(std::max({chunk, int64_t{16}, ceil_div(ceil_div(kv, kMaxMergeSplits), 16) * 16}));
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

std::vector<AttentionPlan> plan_waves(const AttentionPlan& plan, const AttentionShape& s,
                                      uint64_t max_slots) {
  if (plan.slots <= max_slots) return {plan};
  const int64_t G = s.num_heads / s.num_kv_heads, nb = static_cast<int64_t>(s.q_rows.size());
  // A wave may begin at row r of batch b unless an item's vectors [v0, v0 + nv) hold rows
  // r - 1 and r (v = row * G + g).
  std::vector<std::vector<bool>> cut(static_cast<size_t>(nb));
  for (int64_t b = 0; b < nb; ++b)
    cut[static_cast<size_t>(b)].assign(static_cast<size_t>(s.q_rows[b]) + 1, true);
  for (uint32_t i = 0; i < plan.num_items; ++i) {
    const uint32_t* it = &plan.items[5 * size_t{i}];
    for (int64_t r = it[2] / G + 1; r <= (int64_t{it[2]} + it[3] - 1) / G; ++r)
      cut[it[0]][static_cast<size_t>(r)] = false;
  }
  // Waves as slot ranges [lo, hi): (batch, row) in slot order, a cut where allowed and needed.
  std::vector<uint64_t> bounds{0};
  uint64_t unit_start = 0;  // the first slot of the rows since the last allowed cut
  for (int64_t b = 0; b < nb; ++b) {
    const uint64_t base = plan.batch_plan[3 * static_cast<size_t>(b)];
    const uint64_t per_row =
        static_cast<uint64_t>(s.num_heads) * plan.batch_plan[3 * static_cast<size_t>(b) + 1];
    for (int64_t r = 0; r <= s.q_rows[b]; ++r) {
      const uint64_t slot = base + static_cast<uint64_t>(r) * per_row;
      if (!cut[static_cast<size_t>(b)][static_cast<size_t>(r)]) continue;
      if (slot - bounds.back() > max_slots && unit_start > bounds.back()) bounds.push_back(unit_start);
      if (slot - bounds.back() > max_slots) return {};  // one unit alone is too large
      unit_start = slot;
    }
  }
  if (bounds.back() < plan.slots) bounds.push_back(plan.slots);
  const auto wave_of = [&](uint64_t slot) {
    return static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), slot) - bounds.begin() - 1);
  };
  std::vector<AttentionPlan> waves(bounds.size() - 1);
  for (size_t w = 0; w < waves.size(); ++w) {
    AttentionPlan& wave = waves[w];
    wave.vectors_per_item = plan.vectors_per_item;
    wave.single_row = plan.single_row;
    wave.slots = bounds[w + 1] - bounds[w];
    wave.batch_plan = plan.batch_plan;
    for (size_t b = 0; b < wave.batch_plan.size(); b += 3)
      wave.batch_plan[b] =
          static_cast<uint32_t>(wave.batch_plan[b] - bounds[w]);  // modulo 2^32, as the shaders add
    wave.merge = plan.merge;                                      // the first slots are set below
  }
  for (uint32_t i = 0; i < plan.num_items; ++i) {
    const uint32_t* it = &plan.items[5 * size_t{i}];
    const uint64_t slot = plan.batch_plan[3 * size_t{it[0]}] + static_cast<uint64_t>(it[2] / G) *
                                                                   s.num_heads *
                                                                   plan.batch_plan[3 * size_t{it[0]} + 1];
    AttentionPlan& wave = waves[wave_of(slot)];
    wave.items.insert(wave.items.end(), it, it + 5);
    ++wave.num_items;
  }
  for (size_t v = 0; v + 3 < plan.merge.size(); v += 4) {
    const size_t w = wave_of(plan.merge[v]);
    for (size_t o = 0; o < waves.size(); ++o)
      waves[o].merge[v] = o == w ? static_cast<uint32_t>(plan.merge[v] - bounds[w]) : kOtherWave;
  }
  return waves;
}

}  // namespace kvbench
