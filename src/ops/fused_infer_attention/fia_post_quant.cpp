// aclnn.FusedInferAttentionScoreV3's post-quant INT8 output (specs/fused_infer_attention_quant.md).
#include "ops/fused_infer_attention/fia_post_quant.hpp"

#include <algorithm>
#include <cmath>

#include "core/float_format.hpp"

namespace kvbench {

// Whether row i of batch b sees one key at most (its band, before any mask).
bool fia_single_key(const FiaParams& p_, int64_t b, int64_t i) {
  const int64_t first = std::max<int64_t>(0, i + p_.band[b].lo),
                last = std::min<int64_t>(p_.keys(b) - 1, i + p_.band[b].hi);
  return last <= first;
}

// attentionOut as int8 codes: sat(roundEven(x * scale + offset)), code 0 in rows with no
// visible key (not computed). Where x * scale + offset lies within a device's error of
// a rounding boundary (P rounded to the input dtype before P @ V: 2^-11 (f16), 2^-8
// (bf16) of max|V|, plus 1e-6 of f32 arithmetic, times |scale|; plus |value| * 2^-11,
// half to one fp16 ulp of it, for the fp16 intermediate of the per-channel path), the
// neighbouring code is the alternate (ties included: ties-to-even and ties-away paths).
Expected fia_post_quantize(const FiaParams& p_, const Args& args, const TensorSet& in,
                           const std::vector<double>& row_lse, std::vector<double> exact, bool half_away) {
  const Tensor& scale = in.at("quantScale2");
  const Tensor* offset = p_.post.offset ? &in.at("quantOffset2") : nullptr;
  const auto vr = args.range("value");
  const double vmax = std::max(std::fabs(vr.first), std::fabs(vr.second));
  const double p_error = (p_.q == DType::f16    ? std::ldexp(1.0, -11)
                          : p_.q == DType::bf16 ? std::ldexp(1.0, -8)
                                                : 0.0) *
                             vmax +
                         1e-6;
  std::vector<int64_t> head(exact.size() / static_cast<size_t>(p_.Dv)), row(head.size());
  std::vector<uint8_t> one_key(head.size(), 0);  // the row's band holds a single key
  for (int64_t b = 0; b < p_.B; ++b)
    for (int64_t i = 0; i < (p_.tnd ? p_.s1b[b] : p_.S1); ++i)
      for (int64_t h = 0; h < p_.N; ++h) {
        head[p_.out_vector(b, i, h)] = h;
        row[p_.out_vector(b, i, h)] = p_.lse_index(b, i, h);
        one_key[p_.out_vector(b, i, h)] = fia_single_key(p_, b, i);
      }
  std::vector<double> codes(exact.size());
  std::vector<Alternate> alternates;
  for (size_t e = 0; e < exact.size(); ++e) {
    const size_t vec = e / static_cast<size_t>(p_.Dv);
    if (std::isinf(row_lse[row[vec]])) {
      exact[e] = 0;
      codes[e] = 0;
      continue;
    }
    const size_t c =
        p_.post.per_channel ? static_cast<size_t>(head[vec] * p_.Dv) + e % static_cast<size_t>(p_.Dv) : 0;
    const double s = scale.get(c), x = exact[e];
    const double v = x * s + (offset ? offset->get(c) : 0.0);
    const double code = std::clamp(half_away ? std::round(v) : std::nearbyint(v), -128.0, 127.0);
    const double near = p_error * std::fabs(s) + std::ldexp(std::fabs(v), -11);
    // The two codes around v and the boundary between them; the alternate is the one
    // the golden did not pick.
    const double below = std::clamp(std::floor(v), -128.0, 127.0),
                 above = std::clamp(std::floor(v) + 1, -128.0, 127.0);
    const double boundary = std::floor(v) + 0.5;
    const double other = code == below ? above : below;
    // A tie exact in every precision (one key: x is that value row, and x, x * s and v
    // are f16 values) takes the tie rule alone; any other near tie keeps its alternate.
    const bool exact_tie = one_key[vec] && !p_.full.on && v == boundary && round_f16(x) == x &&
                           round_f16(x * s) == x * s && round_f16(v) == v;
    if (std::fabs(v - boundary) <= near && other != code && !exact_tie) alternates.push_back({e, other});
    exact[e] = v;
    codes[e] = code;
  }
  Expected out = Expected::output(in.at("attentionOut"), codes, std::move(exact));
  for (const Alternate& a : alternates) out.set_alternate(a.index, a.value);
  return out;
}

}  // namespace kvbench
