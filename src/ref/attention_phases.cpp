#include "ref/attention_phases.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/clones.hpp"
#include "core/parallel.hpp"
#include "ref/attention_tiles.hpp"
#include "ref/det_math.hpp"
#include "ref/quant.hpp"
#include "core/float_format.hpp"

namespace kvbench::attention_phases {
using namespace tiles;  // the inner loops (ref/attention_tiles.hpp)
namespace {

// Rows [k0, k1) made in chunks on up to `threads` threads when there are enough of them
// to pay for starting threads; make(t0, t1) writes rows [t0, t1) only.
void for_key_chunks(int64_t k0, int64_t k1, int64_t width, unsigned threads,
                    const std::function<void(int64_t, int64_t)>& make) {
  constexpr int64_t kChunk = 256;  // keys per task (a multiple of kPanel)
  const int64_t chunks = (k1 - k0 + kChunk - 1) / kChunk;
  parallel_for(chunks, (k1 - k0) * width < (int64_t{1} << 16) ? 1 : threads,
               [&](int64_t c) { make(k0 + c * kChunk, std::min(k1, k0 + (c + 1) * kChunk)); });
}

// The largest ||k||_2 of the keys of `count` panels: each key's sum of squares in ascending
// d, the panel's eight keys side by side (one vector); a non-finite key's is +inf.
KVB_CLONES double panel_norm_max(const double* panels, int64_t count, int64_t dk) {
  double largest = 0;
  for (int64_t p = 0; p < count; ++p) {
    double sum[kPanel] = {};
    const double* panel = panels + p * dk * kPanel;
    for (int64_t d = 0; d < dk; ++d)
      for (int64_t j = 0; j < kPanel; ++j) sum[j] += panel[d * kPanel + j] * panel[d * kPanel + j];
    for (int64_t j = 0; j < kPanel; ++j) {
      largest = std::max(largest, std::sqrt(sum[j]));  // NaN: std::max keeps largest, then +inf below
      if (!std::isfinite(sum[j])) largest = kInf;
    }
  }
  return largest;
}

}  // namespace

// Keys [c0, c1) of the keys from k0, c0 - k0 a multiple of kPanel.
Panels pack_keys(const RowSource& k, int64_t k0, int64_t c0, int64_t c1, int64_t dk, unsigned threads,
                 bool norms) {
  Panels P{.k0 = k0, .first = (c0 - k0) / kPanel, .count = (c1 - c0 + kPanel - 1) / kPanel};
  const int64_t base = c0;
  k0 = c0;
  const int64_t k1 = c1;
  P.data.reset(new double[static_cast<size_t>(P.count * dk * kPanel)]);  // every element written below
  for_key_chunks(k0, k1, dk, threads, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      k(t, P.data.get() + (t - base) / kPanel * dk * kPanel + (t - base) % kPanel, kPanel);
  });
  for (int64_t t = k1; t < base + P.count * kPanel; ++t)  // the last panel's lanes past k1
    for (int64_t d = 0; d < dk; ++d)
      P.data[static_cast<size_t>((t - base) / kPanel * dk * kPanel + d * kPanel + (t - base) % kPanel)] = 0;
  if (norms) P.norm_max = panel_norm_max(P.data.get(), P.count, dk);
  return P;
}

// With `maxima` (the bound's): each channel's largest finite |v| into V.abs_max, made in the
// same pass (|V| itself is taken in the value phase's tiles, not stored).
Strips pack_values(const RowSource& v, int64_t k0, int64_t k1, int64_t dv, unsigned threads, bool maxima) {
  const int64_t strips = dv / 8;
  Strips V{.k0 = k0, .keys = k1 - k0, .tail_width = dv % 8};
  V.data.reset(new double[static_cast<size_t>(strips * V.keys * 8)]);
  V.tail.reset(new double[static_cast<size_t>(V.keys * V.tail_width)]);
  if (maxima) V.abs_max.assign(static_cast<size_t>(dv), 0.0);
  std::atomic<bool> finite = true;
  std::mutex merge;
  for_key_chunks(k0, k1, dv, threads, [&](int64_t t0, int64_t t1) {
    std::vector<double> row(static_cast<size_t>(dv)), largest(maxima ? row.size() : 0, 0.0);
    bool chunk_finite = true;
    for (int64_t t = t0; t < t1; ++t) {
      v(t, row.data(), 1);
      for (int64_t c = 0; c < strips; ++c)
        std::copy_n(row.data() + c * 8, 8, V.data.get() + (c * V.keys + t - k0) * 8);
      std::copy_n(row.data() + strips * 8, V.tail_width, V.tail.get() + (t - k0) * V.tail_width);
      // Branch-free loops (they vectorize): m <= max is false for inf and NaN. Non-finite
      // values are the NaN permissions' business, not the bound's maxima (0 leaves one as is).
      int row_finite = 1;
      if (maxima)
        for (size_t c = 0; c < row.size(); ++c) {
          const double m = std::fabs(row[c]);
          const bool ok = m <= std::numeric_limits<double>::max();
          row_finite &= ok;
          largest[c] = std::max(largest[c], ok ? m : 0.0);
        }
      else
        for (const double x : row) row_finite &= std::fabs(x) <= std::numeric_limits<double>::max();
      chunk_finite = chunk_finite && row_finite;
    }
    if (!chunk_finite) finite = false;
    if (maxima) {
      std::lock_guard lock(merge);
      for (size_t c = 0; c < largest.size(); ++c) V.abs_max[c] = std::max(V.abs_max[c], largest[c]);
    }
  });
  V.finite = finite;
  return V;
}

namespace {

// The largest score (NaN ignored), in a function of its own so the running max stays in a
// register (inline, GCC kept it in memory across the exp calls that follow).
__attribute__((noinline)) double row_max(const double* s, int64_t n) {
  double m = -kInf;
  for (int64_t t = 0; t < n; ++t) m = std::max(m, s[t]);
  return m;
}

// row_max and, in the same pass, the least score other than -inf (NaN ignored; +inf if none).
struct MaxMin {
  double max, min;
};
__attribute__((noinline)) MaxMin row_max_min(const double* s, int64_t n) {
  double m = -kInf, lo = kInf;
  for (int64_t t = 0; t < n; ++t) {
    m = std::max(m, s[t]);
    lo = s[t] < lo && s[t] != -kInf ? s[t] : lo;
  }
  return {m, lo};
}

}  // namespace

void empty_row(const Job& job, int64_t r) {
  const QueryRow& row = job.rows[r];
  std::fill(row.out, row.out + job.a.dv,
            job.a.empty == EmptyRow::nan ? std::numeric_limits<double>::quiet_NaN() : 0.0);
  if (job.lse) job.lse[r] = kInf;
  if (job.a.row_max) job.a.row_max[r] = -kInf;
}

BlockScores block_scores(const Job& job, int64_t r0, int64_t r1, int64_t k0) {
  BlockScores b{.r0 = r0,
                .r1 = r1,
                .kb = std::numeric_limits<int64_t>::max(),
                .ke = std::numeric_limits<int64_t>::min()};
  for (int64_t r = r0; r < r1; ++r)
    if (job.rows[r].begin < job.rows[r].end) {
      b.kb = std::min(b.kb, job.rows[r].begin);
      b.ke = std::max(b.ke, job.rows[r].end);
    }
  if (b.empty()) {
    for (int64_t r = r0; r < r1; ++r) empty_row(job, r);
    return b;
  }
  b.pb = (b.kb - k0) / kPanel;
  b.pe = (b.ke - k0 + kPanel - 1) / kPanel;
  b.W = (b.pe - b.pb) * kPanel;
  b.origin = k0 + b.pb * kPanel;
  b.S.reset(new double[static_cast<size_t>((r1 - r0 + 1) * b.W)]);  // + the score row of padding rows
  return b;
}

// 1. q . k for each group of kMr rows over the panels its rows see, within the panels K
// holds (tiled over keys so a tile of panels stays in cache).
KVB_CLONES void score_phase(const Job& job, const Panels& K, BlockScores& b) {
  const AttentionBlock& a = job.a;
  const int64_t r0 = b.r0, r1 = b.r1, W = b.W;
  double* scratch = b.S.get() + (r1 - r0) * W;
  const int64_t qb = std::max(b.pb, K.first), qe = std::min(b.pe, K.first + K.count);
  for (int64_t pt = qb; pt < qe; pt += kKeyTile)
    for (int64_t g = r0; g < r1; g += kMr) {
      const double* q[kMr];
      double* s[kMr];
      int64_t gb = std::numeric_limits<int64_t>::max(), ge = std::numeric_limits<int64_t>::min();
      for (int i = 0; i < kMr; ++i) {
        const int64_t r = std::min(g + i, r1 - 1);
        q[i] = job.rows[r].q;
        if (job.rows[r].begin < job.rows[r].end) {
          gb = std::min(gb, job.rows[r].begin);
          ge = std::max(ge, job.rows[r].end);
        }
      }
      if (gb >= ge) continue;
      const int64_t p0 = std::max(pt, (gb - K.k0) / kPanel);
      const int64_t p1 = std::min({pt + kKeyTile, qe, (ge - K.k0 + kPanel - 1) / kPanel});
      for (int64_t p = p0; p < p1;) {
        for (int i = 0; i < kMr; ++i)
          s[i] = (g + i < r1 ? b.S.get() + (g + i - r0) * W : scratch) + (p - b.pb) * kPanel;
#ifdef KVB_WIDE_TILES
        if (kWideTiles && p + 1 < p1) {
          score_tile_pair8(q, K.panel(p, a.dk), a.dk, s);
          p += 2;
          continue;
        }
#endif
        score_tile(q, K.panel(p, a.dk), a.dk, s);
        ++p;
      }
    }
}

// 2. Softmax of each row over its keys [begin, end), in ascending key order.
KVB_CLONES void softmax_phase(const Job& job, BlockScores& b) {
  const AttentionBlock& a = job.a;
  for (int64_t r = b.r0; r < b.r1; ++r) {
    const QueryRow& row = job.rows[r];
    if (row.begin >= row.end) {
      empty_row(job, r);
      continue;
    }
    double* s = b.S.get() + (r - b.r0) * b.W + (row.begin - b.origin);
    const int64_t len = row.end - row.begin;
    for (int64_t t = 0; t < len; ++t) s[t] = a.divide_by_scale ? s[t] / a.scale : s[t] * a.scale;
    const double bias_moved = a.bias ? a.bias(r, row.begin, row.end, s) : 0.0;
    // The least score other than -inf, for the bound's figures (+inf without them).
    const MaxMin extremes = job.figures ? row_max_min(s, len) : MaxMin{row_max(s, len), kInf};
    const double m = std::max(extremes.max, row.sink);  // a sink takes part in the max
    if (a.row_max) a.row_max[r] = m;
    if (m == -kInf) {  // nothing to attend to
      empty_row(job, r);
      continue;
    }
    const bool no_max = a.fault == AttentionFault::no_max_subtraction;
    thread_local std::vector<double> below;  // s_j - m (<= 0), for the bound's figures
    const double* x = nullptr;               // below's data, with figures
    if (job.figures) {
      // The bound's figures of the row: ||q||, the largest |s_j| (the max or the least finite
      // score) and, after the exp, sum_j p_j (m - s_j). Branch-free loops (they vectorize).
      RowFigures& f = job.figures[r];
      f.keys = len;
      for (int64_t d = 0; d < a.dk; ++d) f.q_norm += row.q[d] * row.q[d];
      f.q_norm = std::sqrt(f.q_norm);
      f.q_delta = row.q_delta;
      f.s_delta = bias_moved;
      f.score_max = std::max(std::fabs(m), std::fabs(std::min(m, extremes.min)));
      below.resize(static_cast<size_t>(len));
      double* xs = below.data();
      for (int64_t t = 0; t < len; ++t) xs[t] = s[t] - m;
      x = xs;
    }
    // Not std::exp: the same bits on every machine (ref/det_math.hpp). With figures, from
    // below (the same s_j - m).
    if (x && !no_max) {
      det_exp_to(x, s, len);
    } else {
      for (int64_t t = 0; t < len; ++t) s[t] = s[t] - (no_max ? 0.0 : m);
      det_exp_inplace(s, len);
    }
    if (no_max) round_span(DType::f32, s, static_cast<size_t>(len));  // exp(88.73) is inf in f32
    double sum = 0;
    // The bound's spread, -sum_j p_j (s_j - m) over the weights the output sums; in the
    // sum's own loop (a chain of dependent additions, which leaves room for another) when
    // no step changes the weights between and the sum is the plain one (not sum_f16's).
    double spread = 0;
    const bool spread_in_sum = x && !a.quantize_p && a.fault != AttentionFault::sum_f16;
    if (a.fault == AttentionFault::sum_f16)
      for (int64_t t = 0; t < len; ++t) sum = round_f16(sum + s[t]);
    else if (spread_in_sum)
      for (int64_t t = 0; t < len; ++t) {
        sum += s[t];
        spread -= s[t] > 0 ? s[t] * x[t] : 0.0;  // e_j = 0 at s_j = -inf
      }
    else
      for (int64_t t = 0; t < len; ++t) sum += s[t];
    // A sink's weight joins the sum after the keys (ggml's CPU kernel adds it last).
    const double sink_weight = row.sink == -kInf ? 0.0 : det_exp(row.sink - m);
    sum += sink_weight;
    // Per element: quantize_p, the division, round_p (three loops: two of them vectorize).
    if (a.quantize_p)
      for (int64_t t = 0; t < len; ++t) s[t] = a.quantize_p(s[t]);
    if (job.figures) {
      if (!spread_in_sum)
        for (int64_t t = 0; t < len; ++t) spread -= s[t] > 0 ? s[t] * x[t] : 0.0;  // e_j = 0 at s_j = -inf
      if (sink_weight > 0) spread += sink_weight * (m - row.sink);
      job.figures[r].spread = spread / sum;
    }
    for (int64_t t = 0; t < len; ++t) s[t] /= sum;
    if (a.round_p) round_span(*a.round_p, s, static_cast<size_t>(len));
    if (job.lse) job.lse[r] = (no_max ? 0.0 : m) + det_log(sum);
    std::fill(row.out, row.out + a.dv, 0.0);
    b.live.push_back(r);
  }
}

namespace {

// V's element c of key t, from its strip or its tail.
double value_at(const Strips& V, int64_t t, int64_t c, int64_t dv) {
  const int64_t vec = dv / 8 * 8;
  return c < vec ? V.strip(c / 8)[(t - V.k0) * 8 + c % 8] : V.tail_at(t, c - vec);
}

// Row r's accumulators of sum_j p_j |v_jd| (the bound's), or null without bounds.
double* weighted(const Job& job, const BlockScores& b, int64_t r) {
  return b.weighted ? b.weighted + (r - b.r0) * job.a.dv : nullptr;
}

// 3 with AttentionFault::pv_f16: each row's running sum of P @ V rounded to f16 after
// every addition, in the same ascending key order (a strip of eight columns at a time:
// branch-free, so it vectorizes).
KVB_CLONES void value_phase_f16(const Job& job, const Strips& V, const BlockScores& b) {
  const int64_t dv = job.a.dv, vec = dv / 8 * 8;
  for (int64_t r : b.live) {
    const QueryRow& row = job.rows[r];
    const double* p = b.S.get() + (r - b.r0) * b.W;
    double* w = weighted(job, b, r);
    for (int64_t t = std::max(row.begin, V.k0); t < std::min(row.end, V.k0 + V.keys); ++t) {
      const double pt = p[t - b.origin];
      if (pt == 0) continue;  // a key of weight 0 adds nothing, whatever its V (its +0 changes no sum)
      for (int64_t c = 0; c < vec; c += 8) {
        const double* v = V.strip(c / 8) + (t - V.k0) * 8;
        for (int64_t j = 0; j < 8; ++j) row.out[c + j] = round_f16(row.out[c + j] + pt * v[j]);
        // The bound's sum of p * |v| is the unfaulted one (value_tile's, in the same order).
        if (w)
          for (int64_t j = 0; j < 8; ++j) w[c + j] += pt * std::fabs(v[j]);
      }
      for (int64_t c = vec; c < dv; ++c) {
        const double v = V.tail_at(t, c - vec);
        row.out[c] = round_f16(row.out[c] + pt * v);
        if (w) w[c] += pt * std::fabs(v);
      }
    }
  }
}

// 3 where V holds an infinite or NaN value: each row's keys of weight 0 are left out (a
// masked key's 0 * inf would make the row NaN), the runs between them added by the same
// value_tile, so every output's sum and its order are those of value_phase.
void value_phase_weighted(const Job& job, const Strips& V, const BlockScores& b) {
  for (int64_t r : b.live) {
    const QueryRow& row = job.rows[r];
    const double* p = b.S.get() + (r - b.r0) * b.W;
    double* out = row.out;
    double* w = weighted(job, b, r);
    const int64_t t1 = std::min(row.end, V.k0 + V.keys);
    for (int64_t t = std::max(row.begin, V.k0); t < t1;) {
      while (t < t1 && p[t - b.origin] == 0) ++t;
      const int64_t run = t;
      while (t < t1 && p[t - b.origin] != 0) ++t;
      if (run < t) value_tile<1>(&p, b.origin, V, run, t, job.a.dv, &out, w ? &w : nullptr);
    }
  }
}

// Calls mark(row, c) for each channel c of a live row where a key of V the row weighs 0
// (one it does not see, or one of weight 0 among those it sees) has a non-finite value:
// where an implementation that multiplies every key of the sequence by its weight, as IEEE
// softmax(s) @ V does, gets 0 * inf = NaN.
template <typename Mark>
void for_zero_weight_nonfinite(const Job& job, const Strips& V, const BlockScores& b, Mark mark) {
  for (int64_t r : b.live) {
    const QueryRow& row = job.rows[r];
    const double* p = b.S.get() + (r - b.r0) * b.W;
    for (int64_t t = V.k0; t < V.k0 + V.keys; ++t) {
      if (t >= row.begin && t < row.end && p[t - b.origin] != 0) continue;
      for (int64_t c = 0; c < job.a.dv; ++c)
        if (!std::isfinite(value_at(V, t, c, job.a.dv))) mark(row, c);
    }
  }
}

}  // namespace

// 3. P @ V over the keys V holds (tiled over keys; each output's running sum is kept in
// `out` between tiles and chunks, so its order is still ascending t). A group's keys seen
// by all its rows go through the kMr-row kernel; the keys only some rows see (before and
// after that common range) row by row, in key order.
KVB_CLONES void value_phase(const Job& job, const Strips& V, const BlockScores& b) {
  const AttentionBlock& a = job.a;
  if (a.fault == AttentionFault::pv_f16) return value_phase_f16(job, V, b);
  if (!V.finite) {
    value_phase_weighted(job, V, b);
    if (a.permitted)  // IEEE 0 * inf at such keys is a permitted implementation's NaN
      for_zero_weight_nonfinite(job, V, b, [](const QueryRow& row, int64_t c) {
        if (row.nan_ok) row.nan_ok->add(row.out_index + c);
      });
    return;
  }
  const int64_t lo = std::max(b.kb, V.k0), hi = std::min(b.ke, V.k0 + V.keys);
  for (int64_t vt = lo; vt < hi; vt += kValueTile) {
    const int64_t vt1 = std::min(hi, vt + kValueTile);
    for (size_t g = 0; g < b.live.size(); g += kMr) {
      const size_t count = std::min<size_t>(kMr, b.live.size() - g);
      const double* p[kMr];
      double *out[kMr], *w[kMr];
      int64_t cb = std::numeric_limits<int64_t>::min(), ce = std::numeric_limits<int64_t>::max();
      for (size_t i = 0; i < count; ++i) {
        const QueryRow& row = job.rows[b.live[g + i]];
        p[i] = b.S.get() + (b.live[g + i] - b.r0) * b.W;
        out[i] = row.out;
        w[i] = weighted(job, b, b.live[g + i]);
        cb = std::max(cb, row.begin);
        ce = std::min(ce, row.end);
      }
      double* const* ws = b.weighted ? w : nullptr;
      auto alone = [&](size_t i, int64_t t0, int64_t t1) {
        t0 = std::max(t0, vt);
        t1 = std::min(t1, vt1);
        if (t0 < t1) value_tile<1>(&p[i], b.origin, V, t0, t1, a.dv, &out[i], ws ? &w[i] : nullptr);
      };
      if (count < kMr || cb >= ce) {
        for (size_t i = 0; i < count; ++i) {
          const QueryRow& row = job.rows[b.live[g + i]];
          alone(i, row.begin, row.end);
        }
        continue;
      }
      for (size_t i = 0; i < count; ++i) alone(i, job.rows[b.live[g + i]].begin, cb);
      const int64_t t0 = std::max(cb, vt), t1 = std::min(ce, vt1);
      if (t0 < t1) value_tile<kMr>(p, b.origin, V, t0, t1, a.dv, out, ws);
      for (size_t i = 0; i < count; ++i) alone(i, ce, job.rows[b.live[g + i]].end);
    }
  }
}

}  // namespace kvbench::attention_phases
