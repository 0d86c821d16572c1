#include "ref/attention.hpp"

#include <algorithm>
#include <mutex>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "check/expected.hpp"
#include "core/parallel.hpp"
#include "ref/attention_phases.hpp"

namespace kvbench {

namespace ap = attention_phases;  // the phases attend drives

namespace {

// With bounds: the bounds of rows [r0, r1) and their log-sum-exps' from what the phases
// measured (weighted: their sums of p |v|, at (r - r0) * dv). A row that sees no key (or
// only -inf scores) gets 0: every permitted implementation gives its empty-row value exactly.
void write_bounds(const ap::Job& job, int64_t r0, int64_t r1, double k_norm_max,
                  const std::vector<double>& v_abs_max, const double* weighted) {
  const AttentionBlock& a = job.a;
  const double factor = a.divide_by_scale ? 1 / std::fabs(a.scale) : std::fabs(a.scale);
  for (int64_t r = r0; r < r1; ++r) {
    const QueryRow& row = job.rows[r];
    const RowFigures& f = job.figures[r];
    if (row.bound) {
      // The bound is affine in the channel's figures: its coefficients once per row.
      const BoundTerms b = attention_bound_terms(*a.permitted, factor, a.dk, k_norm_max, f);
      for (int64_t d = 0; d < a.dv; ++d) {
        const ChannelFigures c{.v_max = v_abs_max[static_cast<size_t>(d)],
                               .weighted = f.keys == 0 ? 0.0 : weighted[(r - r0) * a.dv + d],
                               .out = std::fabs(row.out[d])};
        row.bound[d] = f.keys == 0 ? 0 : bf16_at_or_above(f32_at_or_above(b.at(c)));
      }
    }
    if (a.lse_bound)
      a.lse_bound[r] = f.keys == 0 || !job.lse
                           ? 0.0
                           : attention_lse_bound(*a.permitted, factor, a.dk, k_norm_max, job.lse[r], f);
  }
}

void merge_maxima(std::vector<double>& into, const std::vector<double>& from) {
  into.resize(from.size(), 0.0);
  for (size_t c = 0; c < from.size(); ++c) into[c] = std::max(into[c], from[c]);
}

// The faults that change what a row sees, not how it is computed (AttentionFault's tile and
// lane faults): the golden's attend() over rows rewritten as the faulty kernel sees them.
bool row_fault(AttentionFault f) {
  return f == AttentionFault::tile_padding_counted || f == AttentionFault::key_past_full_tile_dropped ||
         f == AttentionFault::head_dim_tail_stale;
}

void attend_row_fault(const AttentionBlock& a, std::span<const QueryRow> rows, const RowSource& k,
                      const RowSource& v, double* lse) {
  AttentionBlock golden = a;
  golden.fault = AttentionFault::none;
  std::vector<QueryRow> faulty(rows.begin(), rows.end());
  const int64_t pad = (a.dk + 31) / 32 * 32;
  const bool stale = a.fault == AttentionFault::head_dim_tail_stale && a.dk > 32 && a.dk != pad;
  std::vector<double> q(stale ? faulty.size() * static_cast<size_t>(a.dk) : 0);
  for (size_t r = 0; r < faulty.size(); ++r) {
    QueryRow& row = faulty[r];
    const int64_t n = row.end - row.begin;
    if (a.fault == AttentionFault::tile_padding_counted && n % kFaultTile != 0) {
      // kFaultTile - n % kFaultTile keys of score 0 and value 0: one sink of log(count).
      const double lanes = std::log(static_cast<double>(kFaultTile - n % kFaultTile));
      const double hi = std::max(row.sink, lanes), lo = std::min(row.sink, lanes);
      row.sink = hi + std::log1p(std::exp(lo - hi));
    }
    if (a.fault == AttentionFault::key_past_full_tile_dropped && n > kFaultTile && n % kFaultTile == 1)
      --row.end;
    if (stale) {
      // Linear in q: re-adding q[e] k[e] for e in [dk - 32, pad - 32) is q[e] counted twice.
      double* qr = &q[r * static_cast<size_t>(a.dk)];
      std::copy(row.q, row.q + a.dk, qr);
      for (int64_t e = a.dk - 32; e < pad - 32; ++e) qr[e] *= 2;
      row.q = qr;
    }
  }
  attend(golden, faulty, k, v, lse);
}

}  // namespace

void NanPermits::add(int64_t index) {
  static std::mutex lock;  // rare: a non-finite V beside keys of weight 0
  const std::lock_guard hold(lock);
  list_.push_back(index);
}

std::vector<int64_t> NanPermits::sorted() const {
  std::vector<int64_t> s = list_;
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

void attend(const AttentionBlock& a, std::span<const QueryRow> rows, const RowSource& k, const RowSource& v,
            double* lse) {
  if (a.steps) return attend_variant(a, rows, k, v, lse);
  if (row_fault(a.fault)) return attend_row_fault(a, rows, k, v, lse);
  int64_t k0 = std::numeric_limits<int64_t>::max(), k1 = std::numeric_limits<int64_t>::min();
  double work = 0;
  for (const QueryRow& r : rows)
    if (r.begin < r.end) {
      k0 = std::min(k0, r.begin);
      k1 = std::max(k1, r.end);
      work += static_cast<double>(r.end - r.begin);
    }
  const bool bounds = a.permitted.has_value();
  std::vector<RowFigures> figures(bounds ? rows.size() : 0);
  const ap::Job job{a, rows, lse, bounds ? figures.data() : nullptr};
  const auto n = static_cast<int64_t>(rows.size());
  std::vector<double> v_abs_max(bounds ? static_cast<size_t>(a.dv) : 0, 0.0);
  if (k0 >= k1) {
    for (int64_t r = 0; r < n; ++r) ap::empty_row(job, r);
    if (bounds) write_bounds(job, 0, n, 0, v_abs_max, nullptr);
    return;
  }
  if (n <= ap::kRowBlock && k1 - k0 > ap::kKeyChunk) {
    // One block of rows over many keys (decode): K and V packed a chunk at a time, so
    // memory stays one chunk of panels and the rows' scores, whatever the context length.
    ap::BlockScores b = ap::block_scores(job, 0, n, k0);
    std::vector<double> weighted(bounds ? static_cast<size_t>(n * a.dv) : 0, 0.0);
    b.weighted = bounds ? weighted.data() : nullptr;
    double k_norm_max = 0;
    for (int64_t c = k0; c < k1; c += ap::kKeyChunk) {
      const ap::Panels keys =
          ap::pack_keys(k, k0, c, std::min(k1, c + ap::kKeyChunk), a.dk, a.threads, bounds);
      k_norm_max = std::max(k_norm_max, keys.norm_max);
      ap::score_phase(job, keys, b);
    }
    ap::softmax_phase(job, b);
    for (int64_t c = k0; c < k1; c += ap::kKeyChunk) {
      const ap::Strips values =
          ap::pack_values(v, c, std::min(k1, c + ap::kKeyChunk), a.dv, a.threads, bounds);
      ap::value_phase(job, values, b);
      if (bounds) merge_maxima(v_abs_max, values.abs_max);
    }
    if (bounds) write_bounds(job, 0, n, k_norm_max, v_abs_max, weighted.data());
    return;
  }
  const ap::Panels keys = ap::pack_keys(k, k0, k0, k1, a.dk, a.threads, bounds);
  const ap::Strips values = ap::pack_values(v, k0, k1, a.dv, a.threads, bounds);
  const int64_t tasks = (n + ap::kRowBlock - 1) / ap::kRowBlock;
  // Threads only where the work outweighs starting them (about a millisecond of it).
  const double flops = attention_flops(work, a.dk, a.dv);
  const unsigned threads = flops < 4e6 ? 1 : a.threads;
  parallel_for(tasks, threads, [&](int64_t i) {
    const int64_t r0 = i * ap::kRowBlock, r1 = std::min(n, r0 + ap::kRowBlock);
    ap::BlockScores b = ap::block_scores(job, r0, r1, k0);
    // The block's sums of p |v| (the bound's), made with its P @ V and turned into its
    // bounds at once: memory for one block, not for every row of the call.
    thread_local std::vector<double> weighted;
    weighted.assign(bounds ? static_cast<size_t>((r1 - r0) * a.dv) : 0, 0.0);
    if (!b.empty()) {
      b.weighted = bounds ? weighted.data() : nullptr;
      ap::score_phase(job, keys, b);
      ap::softmax_phase(job, b);
      ap::value_phase(job, values, b);
    }
    if (bounds) write_bounds(job, r0, r1, keys.norm_max, values.abs_max, weighted.data());
  });
}

void attend(const AttentionBlock& a, std::span<const QueryRow> rows, RowsView k, RowsView v, double* lse) {
  const auto copy_row = [](RowsView m, int64_t width) {
    return [m, width](int64_t t, double* dst, int64_t step) {
      const double* src = m.row(t);
      for (int64_t d = 0; d < width; ++d) dst[d * step] = src[d];
    };
  };
  attend(a, rows, copy_row(k, a.dk), copy_row(v, a.dv), lse);
}

}  // namespace kvbench
