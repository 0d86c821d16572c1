// The blocked, multi-threaded attention reference (src/ref/attention.hpp) against a naive
// loop written here with the summation order the reference promises, bit for bit, over
// shapes that cut every tile edge; and its bytes for 1, 2, 3 and 7 threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "ref/attention.hpp"
#include "ref/det_math.hpp"
#include "ref/quant.hpp"
#include "core/float_format.hpp"

using namespace kvbench;

namespace {

struct RefShape {
  int64_t rows, keys, dk, dv;
};

struct Problem {
  RefShape shape;
  std::vector<double> q, k, v;
  std::vector<int64_t> begin, end;
  std::vector<double> bias;  // rows x keys, added to the scaled score (-inf: masked)
};

// Random Q, K, V (with signed zeros), key ranges (some rows empty, some whole) and a bias
// with -inf entries; every `full_mask`-th row has all its keys masked by the bias.
Problem make_problem(RefShape s, uint64_t seed, int64_t full_mask = 0) {
  const CounterRng rng(seed, "attention_ref");
  Problem p{.shape = s};
  auto fill = [&](std::vector<double>& x, size_t n, uint64_t base) {
    for (size_t i = 0; i < n; ++i) {
      const double u = rng.uniform(base + i, -1, 1);
      x.push_back(rng.integer(base + i + (1u << 30), 0, 31) == 0 ? -0.0 * u : u);
    }
  };
  fill(p.q, static_cast<size_t>(s.rows * s.dk), 0);
  fill(p.k, static_cast<size_t>(s.keys * s.dk), 1u << 24);
  fill(p.v, static_cast<size_t>(s.keys * s.dv), 2u << 24);
  for (int64_t r = 0; r < s.rows; ++r) {
    int64_t b = rng.integer(3u << 24 | static_cast<uint64_t>(r), 0, s.keys);
    int64_t e = rng.integer(4u << 24 | static_cast<uint64_t>(r), 0, s.keys);
    const int64_t kind = r % 5;
    if (kind == 0)
      b = 0, e = s.keys;  // every key
    else if (kind == 1)
      b = 0, e = std::min(s.keys, r + 1);  // causal
    else if (kind == 2 && r % 3 == 0)
      e = b;  // empty
    if (b > e) std::swap(b, e);
    p.begin.push_back(b);
    p.end.push_back(e);
    for (int64_t t = 0; t < s.keys; ++t) {
      const uint64_t i = static_cast<uint64_t>(r * s.keys + t);
      const bool masked = (full_mask && r % full_mask == 1) || rng.integer(5u << 24 | i, 0, 6) == 0;
      p.bias.push_back(masked ? -kInf : rng.uniform(6u << 24 | i, -2, 2));
    }
  }
  return p;
}

// The naive loop: one row at a time over every key, -inf outside [begin, end); exp and log
// are kvbench's deterministic ones, as in the reference.
void naive(const Problem& p, const AttentionBlock& a, bool use_bias, std::vector<double>& out,
           std::vector<double>& lse) {
  const RefShape s = p.shape;
  out.assign(static_cast<size_t>(s.rows * s.dv), 0.0);
  lse.assign(static_cast<size_t>(s.rows), 0.0);
  std::vector<double> sc(static_cast<size_t>(s.keys));
  for (int64_t r = 0; r < s.rows; ++r) {
    double m = -kInf;
    for (int64_t t = 0; t < s.keys; ++t) {
      double dot = 0;
      for (int64_t d = 0; d < s.dk; ++d) dot += p.q[r * s.dk + d] * p.k[t * s.dk + d];
      double x = a.divide_by_scale ? dot / a.scale : dot * a.scale;
      if (use_bias) x += p.bias[r * s.keys + t];
      if (t < p.begin[r] || t >= p.end[r]) x = -kInf;
      sc[t] = x;
      m = std::max(m, x);
    }
    double* o = &out[r * s.dv];
    if (m == -kInf) {
      std::fill(o, o + s.dv, a.empty == EmptyRow::nan ? std::numeric_limits<double>::quiet_NaN() : 0.0);
      lse[r] = kInf;
      continue;
    }
    double sum = 0;
    for (double& x : sc) sum += (x = det_exp(x - m));
    for (double& x : sc) {
      x /= sum;
      if (a.round_p) x = round_to(*a.round_p, x);
    }
    for (int64_t t = 0; t < s.keys; ++t)
      for (int64_t d = 0; d < s.dv; ++d) o[d] += sc[t] * p.v[t * s.dv + d];
    lse[r] = m + det_log(sum);
  }
}

void blocked(const Problem& p, AttentionBlock a, bool use_bias, std::vector<double>& out,
             std::vector<double>& lse) {
  const RefShape s = p.shape;
  out.assign(static_cast<size_t>(s.rows * s.dv), 12345.0);  // every element must be written
  lse.assign(static_cast<size_t>(s.rows), 12345.0);
  std::vector<QueryRow> rows;
  for (int64_t r = 0; r < s.rows; ++r) rows.push_back({&p.q[r * s.dk], p.begin[r], p.end[r], &out[r * s.dv]});
  if (use_bias)
    a.bias = [&](int64_t r, int64_t b, int64_t e, double* x) {
      for (int64_t t = b; t < e; ++t) x[t - b] += p.bias[r * s.keys + t];
      return 0.0;
    };
  attend(a, rows, {p.k.data(), s.dk}, {p.v.data(), s.dv}, lse.data());
}

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

const RefShape kShapes[] = {
    {1, 1, 1, 1},
    {3, 5, 7, 3},
    {4, 8, 8, 8},
    {5, 9, 3, 17},
    {37, 77, 16, 24},
    {33, 129, 64, 64},
    {70, 130, 9, 13},
    {65, 300, 128, 40},
    {96, 257, 20, 128},
    {8, 1000, 32, 8},
    // One block of rows over more keys than attend() packs at once (decode): K and V
    // packed chunk by chunk, 8192 keys each, the last chunk partial.
    {6, 20001, 16, 13},
    {32, 8200, 8, 8},
};

}  // namespace

TEST_CASE("attend: bit-identical to the naive loop over tile edges, ranges, masks and empty rows") {
  uint64_t seed = 1;
  for (const RefShape& s : kShapes)
    for (int variant = 0; variant < 4; ++variant) {
      const Problem p = make_problem(s, seed++, variant == 3 ? 4 : 0);
      AttentionBlock a{.dk = s.dk,
                       .dv = s.dv,
                       .scale = variant == 1 ? 8.0 : 0.125,
                       .divide_by_scale = variant == 1,
                       .round_p = variant == 2 ? std::optional<DType>(DType::f16) : std::nullopt,
                       .empty = variant == 2 ? EmptyRow::nan : EmptyRow::zeros};
      const bool use_bias = variant != 0;
      std::vector<double> want, want_lse, got, got_lse;
      naive(p, a, use_bias, want, want_lse);
      for (unsigned threads : {1u, 3u}) {
        a.threads = threads;
        blocked(p, a, use_bias, got, got_lse);
        INFO("rows " << s.rows << " keys " << s.keys << " dk " << s.dk << " dv " << s.dv << " variant "
                     << variant << " threads " << threads);
        CHECK(same_bits(got, want));
        CHECK(same_bits(got_lse, want_lse));
      }
    }
}

TEST_CASE("attend: the same bytes for 1, 2, 3 and 7 threads") {
  // Big enough that attend() starts threads (work above its threshold), rows not a
  // multiple of the row block.
  const Problem p = make_problem({333, 600, 64, 72}, 99);
  AttentionBlock a{.dk = 64, .dv = 72, .scale = 0.125, .round_p = DType::bf16, .threads = 1};
  std::vector<double> ref, ref_lse;
  blocked(p, a, true, ref, ref_lse);
  for (unsigned threads : {2u, 3u, 7u}) {
    a.threads = threads;
    std::vector<double> out, lse;
    blocked(p, a, true, out, lse);
    CHECK_MESSAGE(same_bits(out, ref), "threads " << threads);
    CHECK_MESSAGE(same_bits(lse, ref_lse), "threads " << threads);
  }
}

TEST_CASE("attend: a key of weight 0 adds nothing to P @ V, even an infinite or NaN V") {
  // K is zero, so every visible key scores 0 and the visible keys share P equally. V of key
  // 0 is 1, of key 1 is 3, of key 2 +inf (NaN in channel 4). Row 0 masks key 2 by its bias,
  // row 1 by its range, row 2 sees it. dv 9 takes the 8-channel strips and the tail.
  const int64_t dk = 8, dv = 9, keys = 3;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> q(3 * dk, 0.5), k(keys * dk, 0.0), v(keys * dv, 1.0);
  for (int64_t c = 0; c < dv; ++c) {
    v[dv + c] = 3.0;
    v[2 * dv + c] = c == 4 ? std::nan("") : inf;
  }
  for (const auto fault : {AttentionFault::none, AttentionFault::pv_f16}) {
    std::vector<double> out(3 * dv, -1.0);
    const QueryRow rows[] = {{q.data(), 0, 3, out.data()},
                             {q.data() + dk, 0, 2, out.data() + dv},
                             {q.data() + 2 * dk, 0, 3, out.data() + 2 * dv}};
    AttentionBlock a{.dk = dk, .dv = dv, .fault = fault};
    a.bias = [&](int64_t r, int64_t, int64_t, double* s) {
      if (r == 0) s[2] = -inf;
      return 0.0;
    };
    attend(a, rows, {k.data(), dk}, {v.data(), dv}, nullptr);
    for (int64_t c = 0; c < dv; ++c) {
      CHECK(out[c] == 2.0);
      CHECK(out[dv + c] == 2.0);
      if (c == 4)
        CHECK(std::isnan(out[2 * dv + c]));
      else
        CHECK(out[2 * dv + c] == inf);
    }
  }
}

TEST_CASE("parallel_for: every index once, and the first exception is rethrown") {
  std::vector<int> hits(1000, 0);
  parallel_for(1000, 4, [&](int64_t i) { ++hits[static_cast<size_t>(i)]; });
  CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
  CHECK_THROWS_WITH(parallel_for(50, 3,
                                 [](int64_t i) {
                                   if (i == 7) throw std::runtime_error("seven");
                                 }),
                    "seven");
  parallel_for(0, 4, [](int64_t) { FAIL("no index"); });
}
