// attend() for a permitted implementation (AttentionBlock::steps): every operation in f32,
// rounded where the implementation rounds. Row by row and plain: it runs in `kvbench
// coverage --variants`, never in a golden.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/float_format.hpp"
#include "core/parallel.hpp"
#include "ref/attention.hpp"
#include "ref/det_math.hpp"
#include "ref/quant.hpp"

namespace kvbench {

namespace {

constexpr float kLog2e = 1.44269504088896340736f;  // f32(log2 e)

float f32(double x) { return static_cast<float>(x); }
// x rounded to t where a step rounds (the common dtypes inline: this runs per element).
float rounded(std::optional<DType> t, float x) {
  if (!t) return x;
  switch (*t) {
    case DType::f16: return f32(round_f16(x));
    case DType::bf16: return f32(round_bf16(x));
    case DType::f32: return x;
    default: return f32(round_to(*t, x));
  }
}

// f32 exp of an f32 argument: the correctly rounded f32 of the exact value (an
// implementation's exp is within a few ulp of it; the bound allows for that).
float exp32(float x) { return f32(det_exp(x)); }

// The f32 sum of terms(i) for i in [0, n), ascending or descending.
template <typename Term>
float sum32(int64_t n, bool descending, Term term) {
  float s = 0;
  for (int64_t k = 0; k < n; ++k) s += term(descending ? n - 1 - k : k);
  return s;
}

struct VariantRows {
  const AttentionBlock& a;
  const PrecisionSteps& st;
  int64_t k0, keys;
  std::vector<float> K, V;  // the call's keys [k0, k0 + keys), rows of dk and dv f32 values
  bool v_finite = true;

  const float* key(int64_t t) const { return &K[static_cast<size_t>((t - k0) * a.dk)]; }
  const float* value(int64_t t) const { return &V[static_cast<size_t>((t - k0) * a.dv)]; }

  // One row's scores over its keys [begin, end): q . k in f32, scaled, biased. Eight keys'
  // dot products side by side (eight independent sums, each in sum32's order).
  std::vector<float> scores(int64_t r, const QueryRow& row) const {
    const int64_t n = row.end - row.begin;
    std::vector<float> s(static_cast<size_t>(n)), q(static_cast<size_t>(a.dk));
    for (int64_t d = 0; d < a.dk; ++d) q[static_cast<size_t>(d)] = f32(row.q[d]);
    for (int64_t j0 = 0; j0 < n; j0 += 8) {
      const int64_t width = std::min<int64_t>(8, n - j0);
      const float* k[8];
      float dots[8] = {};
      for (int64_t i = 0; i < 8; ++i) k[i] = key(row.begin + j0 + std::min(i, width - 1));
      for (int64_t step = 0; step < a.dk; ++step) {
        const int64_t d = st.descending ? a.dk - 1 - step : step;
        for (int64_t i = 0; i < 8; ++i) dots[i] += q[static_cast<size_t>(d)] * k[i][d];
      }
      for (int64_t i = 0; i < width; ++i) s[static_cast<size_t>(j0 + i)] = dots[i];
    }
    for (int64_t j = 0; j < n; ++j) {
      float dot = rounded(st.score_dtype, s[static_cast<size_t>(j)]);
      s[static_cast<size_t>(j)] =
          rounded(st.score_dtype, a.divide_by_scale ? dot / f32(a.scale) : dot * f32(a.scale));
    }
    if (a.bias) {
      std::vector<double> biased(s.begin(), s.end());
      a.bias(r, row.begin, row.end, biased.data());
      for (int64_t j = 0; j < n; ++j)
        s[static_cast<size_t>(j)] = rounded(st.score_dtype, f32(biased[static_cast<size_t>(j)]));
    }
    return s;
  }

  float expo(float s, float m) const {
    if (s == -std::numeric_limits<float>::infinity()) return 0;
    if (st.exp2) return f32(std::exp2(static_cast<double>(s * kLog2e - m * kLog2e)));
    return exp32(s - m);
  }

  // The softmax and P @ V of keys [b, e) of the row (indices into s): its max, its sum and
  // the unnormalized accumulator (as_golden: the normalized one, P rounded after dividing).
  struct Part {
    float m = -std::numeric_limits<float>::infinity(), l = 0;
    std::vector<float> acc;
  };
  Part part(const QueryRow& row, const std::vector<float>& s, int64_t b, int64_t e) const {
    Part p;
    p.acc.assign(static_cast<size_t>(a.dv), 0.0f);
    for (int64_t j = b; j < e; ++j) p.m = std::max(p.m, s[static_cast<size_t>(j)]);
    if (p.m == -std::numeric_limits<float>::infinity()) return p;
    std::vector<float> w(static_cast<size_t>(e - b));
    for (int64_t j = b; j < e; ++j) w[static_cast<size_t>(j - b)] = expo(s[static_cast<size_t>(j)], p.m);
    p.l = sum32(e - b, st.descending, [&](int64_t i) { return w[static_cast<size_t>(i)]; });
    if (st.p == PrecisionSteps::P::as_golden) {
      for (float& x : w) x = rounded(a.round_p, x / (p.l + f32(st.sum_epsilon)));
    } else if (st.p == PrecisionSteps::P::unnormalized) {
      for (float& x : w) x = f32(round_to(st.p_dtype, x));
    }
    add_weighted(row.begin + b, w, !st.ieee_zero_weight, p.acc);
    return p;
  }

  // acc[d] = sum32 over i of w[i] * v[t0 + i][d] (a term of weight 0 is +0 with
  // skip_zero: 0 * inf = NaN only where IEEE is asked for), for every d at once: key by key
  // in sum32's order, so each d's sum is the same sequence of f32 additions (acc starts at
  // +0; adding +0 changes no sum that never is -0, and an f32 sum from +0 never is).
  void add_weighted(int64_t t0, const std::vector<float>& w, bool skip_zero, std::vector<float>& acc) const {
    const auto n = static_cast<int64_t>(w.size());
    float* out = acc.data();
    for (int64_t step = 0; step < n; ++step) {
      const int64_t i = st.descending ? n - 1 - step : step;
      const float x = w[static_cast<size_t>(i)];
      if (x == 0 && skip_zero) continue;
      const float* v = value(t0 + i);
      for (int64_t d = 0; d < a.dv; ++d) out[d] += x * v[d];
    }
  }

  // Keys of the call the row does not see, times their weight 0 (IEEE softmax @ V).
  void ieee_outside(const QueryRow& row, std::vector<float>& o) const {
    if (!st.ieee_zero_weight || v_finite) return;
    for (int64_t t = k0; t < k0 + keys; ++t)
      if (t < row.begin || t >= row.end)
        for (int64_t d = 0; d < a.dv; ++d) o[static_cast<size_t>(d)] += 0.0f * value(t)[d];
  }

  // The running accumulation of Ascend's fp16 prompt kernel: blocks of acc_block keys, each
  // block's P (rounded to acc_dtype) @ V in f32 rounded, the rescale factor rounded, the
  // running sum rounded after each update; the division rounded.
  std::vector<float> blocked(const QueryRow& row, const std::vector<float>& s, float& m_out,
                             float& l_out) const {
    const DType t = *st.acc_dtype;
    const auto n = static_cast<int64_t>(s.size());
    std::vector<float> acc(static_cast<size_t>(a.dv), 0.0f);
    float m = -std::numeric_limits<float>::infinity(), l = 0;
    for (int64_t b = 0; b < n; b += st.acc_block) {
      const int64_t e = std::min(n, b + st.acc_block);
      float bm = m;
      for (int64_t j = b; j < e; ++j) bm = std::max(bm, s[static_cast<size_t>(j)]);
      if (bm == -std::numeric_limits<float>::infinity()) continue;
      const float rescale =
          m == -std::numeric_limits<float>::infinity() ? 0.0f : f32(round_to(t, expo(m, bm)));
      std::vector<float> w(static_cast<size_t>(e - b));
      for (int64_t j = b; j < e; ++j) w[static_cast<size_t>(j - b)] = expo(s[static_cast<size_t>(j)], bm);
      l = l * rescale + sum32(e - b, st.descending, [&](int64_t i) { return w[static_cast<size_t>(i)]; });
      for (float& x : w) x = f32(round_to(t, x));
      std::vector<float> pv(static_cast<size_t>(a.dv), 0.0f);
      add_weighted(row.begin + b, w, true, pv);
      for (int64_t d = 0; d < a.dv; ++d) {
        float& x = acc[static_cast<size_t>(d)];
        x = f32(round_to(t, f32(round_to(t, x * rescale)) + f32(round_to(t, pv[static_cast<size_t>(d)]))));
      }
      m = bm;
    }
    for (float& x : acc) x = f32(round_to(t, x / f32(round_to(t, l))));
    m_out = m;
    l_out = l;
    return acc;
  }

  void row(int64_t r, const QueryRow& q, double* lse) const {
    const auto empty = [&] {
      std::fill(q.out, q.out + a.dv,
                a.empty == EmptyRow::nan ? std::numeric_limits<double>::quiet_NaN() : 0.0);
      if (lse) lse[r] = kInf;
    };
    if (q.begin >= q.end) return empty();
    const std::vector<float> s = scores(r, q);
    const auto n = static_cast<int64_t>(s.size());
    if (*std::max_element(s.begin(), s.end()) == -std::numeric_limits<float>::infinity()) return empty();
    std::vector<float> o(static_cast<size_t>(a.dv));
    float m = 0, l = 0;
    if (st.acc_dtype) {
      o = blocked(q, s, m, l);
    } else if (st.split <= 0 || st.p == PrecisionSteps::P::as_golden) {
      Part p = part(q, s, 0, n);
      m = p.m;
      l = p.l;
      for (int64_t d = 0; d < a.dv; ++d)
        o[static_cast<size_t>(d)] = st.p == PrecisionSteps::P::as_golden
                                        ? p.acc[static_cast<size_t>(d)]
                                        : p.acc[static_cast<size_t>(d)] / (p.l + f32(st.sum_epsilon));
    } else {
      std::vector<Part> parts;
      for (int64_t b = 0; b < n; b += st.split) parts.push_back(part(q, s, b, std::min(n, b + st.split)));
      m = -std::numeric_limits<float>::infinity();
      for (const Part& p : parts) m = std::max(m, p.m);
      std::vector<float> scale(parts.size());
      for (size_t i = 0; i < parts.size(); ++i) scale[i] = expo(parts[i].m, m);
      l = sum32(static_cast<int64_t>(parts.size()), st.descending,
                [&](int64_t i) { return scale[static_cast<size_t>(i)] * parts[static_cast<size_t>(i)].l; });
      for (int64_t d = 0; d < a.dv; ++d)
        o[static_cast<size_t>(d)] =
            sum32(static_cast<int64_t>(parts.size()), st.descending,
                  [&](int64_t i) {
                    const Part& p = parts[static_cast<size_t>(i)];
                    if (p.l == 0) return 0.0f;
                    if (st.partial_dtype)  // the split's normalized output, stored, weighted by its share
                      return f32(round_to(*st.partial_dtype, p.acc[static_cast<size_t>(d)] / p.l)) *
                             (scale[static_cast<size_t>(i)] * p.l / l);
                    return scale[static_cast<size_t>(i)] * p.acc[static_cast<size_t>(d)];
                  }) /
            (st.partial_dtype ? 1.0f : l + f32(st.sum_epsilon));
    }
    ieee_outside(q, o);
    if (q.sink != -kInf) {  // the sink merged last, as one more split without values
      const float sink = f32(q.sink), mm = std::max(m, sink);
      const float kept = l * expo(m, mm), share = kept / (kept + expo(sink, mm));
      for (float& x : o) x *= share;
      l = kept + expo(sink, mm);
      m = mm;
    }
    for (int64_t d = 0; d < a.dv; ++d) q.out[d] = o[static_cast<size_t>(d)];
    if (lse) lse[r] = f32(m + f32(det_log(l)));
    if (a.row_max) a.row_max[r] = m;
  }
};

}  // namespace

void attend_variant(const AttentionBlock& a, std::span<const QueryRow> rows, const RowSource& k,
                    const RowSource& v, double* lse) {
  int64_t k0 = std::numeric_limits<int64_t>::max(), k1 = std::numeric_limits<int64_t>::min();
  for (const QueryRow& r : rows)
    if (r.begin < r.end) {
      k0 = std::min(k0, r.begin);
      k1 = std::max(k1, r.end);
    }
  if (k0 >= k1) k0 = k1 = 0;
  VariantRows var{.a = a, .st = *a.steps, .k0 = k0, .keys = k1 - k0};
  std::vector<double> row(static_cast<size_t>(std::max(a.dk, a.dv)));
  var.K.resize(static_cast<size_t>(var.keys * a.dk));
  var.V.resize(static_cast<size_t>(var.keys * a.dv));
  for (int64_t t = k0; t < k1; ++t) {
    k(t, row.data(), 1);
    for (int64_t d = 0; d < a.dk; ++d)
      var.K[static_cast<size_t>((t - k0) * a.dk + d)] = f32(row[static_cast<size_t>(d)]);
    v(t, row.data(), 1);
    for (int64_t d = 0; d < a.dv; ++d) {
      const float x = f32(row[static_cast<size_t>(d)]);
      var.V[static_cast<size_t>((t - k0) * a.dv + d)] = x;
      var.v_finite = var.v_finite && std::isfinite(x);
    }
  }
  parallel_for(static_cast<int64_t>(rows.size()), a.threads,
               [&](int64_t r) { var.row(r, rows[static_cast<size_t>(r)], lse); });
}

}  // namespace kvbench
