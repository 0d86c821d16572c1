// dnnl.SDPACompressedKV: attention over K/V stored as u4/s4/u8/s8 with grouped scales and
// optional zero points. Formulas, decisions and tolerances: specs/sdpa_compressed_kv.md.
#include "ops/sdpa_compressed_kv/sdpa_compressed_kv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "ops/sdpa_compressed_kv/sdpa_params.hpp"
#include "ops/attention/attention_golden.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/vulkan_io.hpp"
#include "ref/attention.hpp"
#include "ref/quant.hpp"
#include "vk/runtime.hpp"
#include "core/float_format.hpp"

namespace kvbench {
namespace {

class SdpaCase final : public OpCase {
 public:
  SdpaCase(Args a, SdpaParams p) : OpCase(std::move(a)), p_(std::move(p)) {}

  std::string describe() const override {
    auto side = [](const SdpaSide& s) {
      return s.compressed ? std::string(dtype_name(s.data)) +
                                (s.zero_point ? "+zp" + std::string(dtype_name(s.zp)) : "")
                          : std::string(dtype_name(s.data));
    };
    return "N=" + std::to_string(p_.N) + " H=" + std::to_string(p_.H) + "/" + std::to_string(p_.H_kv) +
           " S_q=" + std::to_string(p_.S_q) + " S_kv=" + std::to_string(p_.S_kv) +
           " D=" + std::to_string(p_.D) + " G=" + std::to_string(p_.G) + " K=" + side(p_.k) +
           (p_.k_transposed ? "(nhds)" : "") + " V=" + side(p_.v) + " Q=" + std::string(dtype_name(p_.q)) +
           (p_.causal ? p_.causal == 1 ? " causal-tl" : " causal-br" : "") +
           (p_.has_mask() ? " mask(" + p_.mask + ")" : "");
  }

  int64_t kv_rows() const { return p_.N * p_.H_kv * p_.S_kv; }

  // The unquantized K (c = 0) or V (c = 1) as [n, k, s, d] in the query's dtype: the values
  // the codes are made from, and what the accuracy attribution compares against.
  std::vector<double> originals(int c) const {
    const std::string name = c == 0 ? "key" : "value";
    const auto r = args().range(name);
    const CounterRng rng(args().seed(), name + "_unquantized");
    std::vector<double> x(static_cast<size_t>(kv_rows() * p_.D));
    for (size_t i = 0; i < x.size(); ++i) x[i] = round_to(p_.q, rng.uniform(i, r.first, r.second));
    return x;
  }

  // Element offsets of K[n,k,s,d] (either layout) and of its group's scale / zero point.
  size_t key_index(int64_t row, int64_t d) const {  // row = (n * H_kv + k) * S_kv + s
    if (!p_.k_transposed) return static_cast<size_t>(row * p_.D + d);
    const int64_t base = row / p_.S_kv, s = row % p_.S_kv;
    return static_cast<size_t>((base * p_.D + d) * p_.S_kv + s);
  }
  size_t group_index(int c, int64_t row, int64_t d) const {
    const int64_t groups = p_.D / p_.G;
    if (c == 1 || !p_.k_transposed) return static_cast<size_t>(row * groups + d / p_.G);
    const int64_t base = row / p_.S_kv, s = row % p_.S_kv;
    return static_cast<size_t>((base * groups + d / p_.G) * p_.S_kv + s);
  }

  Shape data_shape(int c) const {
    return c == 0 && p_.k_transposed ? Shape{p_.N, p_.H_kv, p_.D, p_.S_kv}
                                     : Shape{p_.N, p_.H_kv, p_.S_kv, p_.D};
  }
  Shape group_shape(int c) const {
    return c == 0 && p_.k_transposed ? Shape{p_.N, p_.H_kv, p_.D / p_.G, p_.S_kv}
                                     : Shape{p_.N, p_.H_kv, p_.S_kv, p_.D / p_.G};
  }

  std::vector<TensorSpec> tensor_specs() const override {
    std::vector<TensorSpec> s{{"query", p_.q, {p_.N, p_.H, p_.S_q, p_.D}}};
    for (int c = 0; c < 2; ++c) {
      const SdpaSide& side = c == 0 ? p_.k : p_.v;
      const std::string suffix = c == 0 ? "_k" : "_v";
      s.push_back({c == 0 ? "key" : "value", side.data, data_shape(c)});
      if (side.compressed) s.push_back({"scale" + suffix, side.scale, group_shape(c)});
      if (side.compressed && side.zero_point) s.push_back({"zp" + suffix, side.zp, group_shape(c)});
    }
    s.push_back({"scale", DType::f32, {}});
    if (p_.has_mask()) s.push_back({"attn_mask", p_.q, p_.mask_shape()});
    s.push_back({"output", p_.q, {p_.N, p_.H, p_.S_q, p_.D}});
    return s;
  }

  // K/V codes, scales and zero points come from one quantization of the originals, so
  // they are made together and kept for the fills of the three tensors of a side.
  void fill(Tensor& t) const override {
    const std::string& name = t.name();
    if (name == "scale") return t.set(0, p_.scale);
    if (name == "attn_mask") return fill_mask(t);
    for (int c = 0; c < 2; ++c) {
      const std::string suffix = c == 0 ? "_k" : "_v";
      if (name == (c == 0 ? "key" : "value") || name == "scale" + suffix || name == "zp" + suffix) {
        TensorSet side;
        add_kv(side, c);
        t = side.at(name);
        return;
      }
    }
    OpCase::fill(t);
  }

  // K or V: the originals as they are, or quantized group by group into codes, scales and
  // zero points (specs/sdpa_compressed_kv.md "Inputs").
  void add_kv(TensorSet& ts, int c) const {
    const SdpaSide& side = c == 0 ? p_.k : p_.v;
    const std::string name = c == 0 ? "key" : "value", suffix = c == 0 ? "_k" : "_v";
    const std::vector<double> x = originals(c);
    Tensor data(name, side.data, data_shape(c), Role::input);
    if (!side.compressed) {
      for (int64_t row = 0; row < kv_rows(); ++row)
        for (int64_t d = 0; d < p_.D; ++d) data.set(key_index_for(c, row, d), x[row * p_.D + d]);
      ts.tensors.push_back(std::move(data));
      return;
    }
    Tensor scale("scale" + suffix, side.scale, group_shape(c), Role::input);
    Tensor zp("zp" + suffix, side.zp, group_shape(c), Role::input);
    const double qmin = static_cast<double>(dtype_int_min(side.data)),
                 qmax = static_cast<double>(dtype_int_max(side.data));
    for (int64_t row = 0; row < kv_rows(); ++row)
      for (int64_t g = 0; g < p_.D / p_.G; ++g) {
        const double* v = &x[row * p_.D + g * p_.G];
        double lo = 0, hi = 0, amax = 0;
        for (int64_t k = 0; k < p_.G; ++k) {
          lo = std::min(lo, v[k]);
          hi = std::max(hi, v[k]);
          amax = std::max(amax, std::fabs(v[k]));
        }
        double s, z = 0;
        if (side.zero_point) {
          s = std::max(round_to(side.scale, (hi - lo) / (qmax - qmin)), round_to(side.scale, 1e-5));
          const double zlo = std::max(qmin, static_cast<double>(dtype_int_min(side.zp)));
          const double zhi = std::min(qmax, static_cast<double>(dtype_int_max(side.zp)));
          z = std::clamp(std::nearbyint(qmin - lo / s), zlo, zhi);
        } else {
          s = std::max(round_to(side.scale, amax / std::max(qmax, -qmin - 1)), round_to(side.scale, 1e-5));
        }
        const size_t gi = group_index(c, row, g * p_.G);
        scale.set(gi, s);
        if (side.zero_point) zp.set(gi, z);
        for (int64_t k = 0; k < p_.G; ++k)
          data.set(key_index_for(c, row, g * p_.G + k), std::clamp(std::nearbyint(v[k] / s) + z, qmin, qmax));
      }
    ts.tensors.push_back(std::move(data));
    ts.tensors.push_back(std::move(scale));
    if (side.zero_point) ts.tensors.push_back(std::move(zp));
  }

  size_t key_index_for(int c, int64_t row, int64_t d) const {
    return c == 0 ? key_index(row, d) : static_cast<size_t>(row * p_.D + d);
  }

  // Mask values uniform in [-1, 1) with one in eight -inf; the last masked_rows rows of
  // every (n, h) all -inf (fully masked).
  void fill_mask(Tensor& m) const {
    const CounterRng rng(args().seed(), "attn_mask");
    const Shape s = m.shape();
    for (size_t i = 0; i < m.numel(); ++i) {
      const int64_t row = static_cast<int64_t>(i / static_cast<size_t>(s[3])) % s[2];
      const bool fully = row >= s[2] - p_.masked_rows;
      m.set(i, fully || rng.integer(i, 0, 7) == 0 ? -kInf : rng.uniform(i, -1, 1));
    }
  }

  // Row `row` ((n * H_kv + k) * S_kv + s) of K (c 0) or V as the operator sees it:
  // f32((q - zp) * s), or the given floats; with `unquantized`, the originals the codes were
  // made from. Scales and zero points are read once into `groups` (scale, zero point).
  struct Side {
    const Tensor* data = nullptr;
    std::vector<double> scale, zp;
  };
  Side side_of(const TensorSet& in, int c) const {
    const SdpaSide& side = c == 0 ? p_.k : p_.v;
    const std::string suffix = c == 0 ? "_k" : "_v";
    Side s{.data = &in.at(c == 0 ? "key" : "value")};
    for (const auto& [name, values] :
         {std::pair{"scale" + suffix, &s.scale}, std::pair{"zp" + suffix, &s.zp}})
      if (side.compressed && in.has(name)) *values = in.at(name).values();
    return s;
  }
  RowSource kv_rows(const Side& side, int c, int64_t first_row, bool unquantized) const {
    const std::string name = c == 0 ? "key" : "value";
    const auto r = args().range(name);
    const CounterRng rng(args().seed(), name + "_unquantized");
    const bool zp_after_scale = fault_is("zero_point_after_scale");
    const bool groups_reversed = c == 0 && fault_is("key_scale_groups_reversed");
    const bool scale_dropped = c == 1 && p_.S_q == 1 && fault_is("value_scale_dropped_in_decode");
    // K~'s dtype: its scales' (the definition), f32 (variant kv_f32) or the fpmath dtype
    // with the scale rounded to it first (kv_fpmath, onednn_gpu_micro).
    const std::optional<DType> fp = variant_fpmath();
    const DType dq = variant_is("kv_f32") ? DType::f32 : fp ? *fp : (c == 0 ? p_.k : p_.v).scale;
    return [this, &side, c, first_row, unquantized, r, rng, zp_after_scale, groups_reversed, scale_dropped,
            dq, fp](int64_t t, double* dst, int64_t step) {
      const int64_t row = first_row + t;
      for (int64_t d = 0; d < p_.D; ++d) {
        if (unquantized) {  // originals(c), element by element
          dst[d * step] =
              round_to(p_.q, rng.uniform(static_cast<uint64_t>(row * p_.D + d), r.first, r.second));
          continue;
        }
        const double q = side.data->get(key_index_for(c, row, d));
        if (side.scale.empty()) {
          dst[d * step] = q;
          continue;
        }
        const size_t gi = group_index(c, row, d);
        const double zp = side.zp.empty() ? 0.0 : side.zp[gi];
        // The faults: the group's scale from the mirrored group, or none.
        const double scale = scale_dropped     ? 1.0
                             : groups_reversed ? side.scale[group_index(c, row, p_.D - 1 - d)]
                                               : side.scale[gi];
        if (fp) {
          dst[d * step] = round_to(*fp, (q - zp) * round_to(*fp, scale));
          continue;
        }
        // DynamicDequantize's output dtype is its scales' (oneDNN's op schema; spec "Formulas").
        dst[d * step] = zp_after_scale ? round_to(dq, round_f32(round_f32(q * scale) - zp))
                                       : dequant_zero_point(q, zp, scale, dq);
      }
    };
  }

  // The dtype the variants kv_fpmath and onednn_gpu_micro convert K~ and V~ to: fpmath_mode's
  // where apply_to_int permits one (tf32 rounded as f16, its mantissa; any as bf16); else none.
  std::optional<DType> variant_fpmath() const {
    if (!variant_is("kv_fpmath") && !variant_is("onednn_gpu_micro")) return std::nullopt;
    if (!p_.fpmath_to_int || p_.fpmath == "strict") return std::nullopt;
    return p_.fpmath == "f16" || p_.fpmath == "tf32" ? DType::f16 : DType::bf16;
  }

  // The precision steps of the case's variant (none for the golden).
  std::optional<PrecisionSteps> variant_steps() const {
    if (variant().empty()) return std::nullopt;
    if (auto shared = attention_steps(variant(), p_.q)) return shared;
    if (variant_is("kv_f32")) return PrecisionSteps{};
    if (variant_is("kv_fpmath")) return variant_fpmath() ? std::optional(PrecisionSteps{}) : std::nullopt;
    if (variant_is("onednn_gpu_micro"))
      return PrecisionSteps{.p = PrecisionSteps::P::unnormalized, .p_dtype = p_.q, .exp2 = true};
    throw std::logic_error("dnnl.SDPACompressedKV has no variant " + variant());
  }

  // How far a permitted implementation's K~, V~, P and scores may lie from the golden's
  // (specs/sdpa_compressed_kv.md "Tolerance: the bound").
  PermittedDeltas permitted() const {
    // fpmath_mode with apply_to_int lets a kernel convert K~ and V~ to its dtype: oneDNN's GPU
    // kernel rounds the scale and the product to it (two roundings).
    double fp = 0, fp_sub = 0;
    if (p_.fpmath_to_int && p_.fpmath != "strict") {
      fp = p_.fpmath == "f16" || p_.fpmath == "tf32" ? 0x1p-11 : 0x1p-8;
      fp_sub = p_.fpmath == "f16" ? 0x1p-25 : 0;
    }
    // The golden's K~ in its scales' dtype, against f32 (oneDNN's CPU path, benchdnn's
    // reference) or the fpmath dtype.
    const auto side = [&](const SdpaSide& x) { return x.compressed ? unit_roundoff(x.scale) + 2 * fp : 0.0; };
    const auto side_abs = [&](const SdpaSide& x) {
      return x.compressed ? subnormal_half_spacing(x.scale) + 2 * fp_sub : 0.0;
    };
    return {.k = side(p_.k),
            .v = side(p_.v),
            .v_abs = side_abs(p_.v),
            // P in the query's dtype after normalizing (the golden), unnormalized, or not rounded.
            .p = 2 * unit_roundoff(p_.q),
            .p_abs = 2 * subnormal_half_spacing(p_.q),
            // The mask scaled by 1 / scale and added to the unscaled scores (oneDNN's GPU kernel).
            .s = 0x1p-22};
  }

  // Attention in double over K/V [n, k, s, d]; `round_p` rounds P to the query dtype. With
  // `bound` (and `nan_ok`), each output element's bound and NaN permission too.
  std::vector<double> attention(const TensorSet& in, bool round_p, bool unquantized,
                                std::vector<uint16_t>* bound = nullptr, NanPermits* nan_ok = nullptr) const {
    const Side K = side_of(in, 0), V = side_of(in, 1);
    const Tensor& query = in.at("query");
    const Tensor* mask = p_.has_mask() ? &in.at("attn_mask") : nullptr;
    const int64_t Gq = p_.H / p_.H_kv;
    std::vector<double> out(static_cast<size_t>(p_.N * p_.H * p_.S_q * p_.D), 0.0);
    if (bound) bound->assign(out.size(), 0);
    std::vector<double> q(static_cast<size_t>(p_.S_q * Gq * p_.D));
    AttentionBlock a{.dk = p_.D,
                     .dv = p_.D,
                     .scale = p_.scale,
                     .divide_by_scale = p_.divide && !fault_is("scale_multiplied"),
                     .round_p = round_p ? std::optional<DType>(p_.q) : std::nullopt,
                     .empty = fault_is("masked_row_nan")
                                  ? EmptyRow::nan
                                  : EmptyRow::zeros,  // no visible key: zeros (inf_as_zero)
                     .fault = attention_fault(fault()),
                     .threads = args().threads()};
    if (bound) a.permitted = permitted();
    const std::optional<PrecisionSteps> steps = unquantized ? std::nullopt : variant_steps();
    if (steps) a.steps = &*steps;
    const bool head_mod = fault_is("gqa_head_mod"), swapped = fault_is("causal_alignment_swapped");
    const bool head_broadcast = fault_is("mask_head_broadcast");
    const bool past_8 = fault_is("gqa_group_past_8_reuses_query");
    const int64_t diagonal = fault_is("causal_diagonal_excluded") ? 0 : 1;
    for (int64_t n = 0; n < p_.N; ++n)
      for (int64_t hk = 0; hk < p_.H_kv; ++hk) {
        // Rows (r, h) of the kv head's Gq query heads, position-major. A causal row r sees
        // keys [0, limit]: limit = r (top-left) or r + S_kv - S_q (bottom-right).
        std::vector<QueryRow> rows;
        for (int64_t r = 0; r < p_.S_q; ++r)
          for (int64_t j = 0; j < Gq; ++j) {
            const int64_t h = head_mod ? j * p_.H_kv + hk : hk * Gq + j;
            // gqa_group_past_8_reuses_query: member j >= 8 computed with member j % 8's query.
            const int64_t hq = past_8 ? hk * Gq + j % 8 : h;
            double* qr = &q[rows.size() * p_.D];
            for (int64_t d = 0; d < p_.D; ++d) qr[d] = query.get(query.offset({n, hq, r, d}));
            const int64_t limit = (p_.causal == 1) != swapped ? r : r + p_.S_kv - p_.S_q;
            const auto at = static_cast<size_t>(((n * p_.H + h) * p_.S_q + r) * p_.D);
            rows.push_back({.q = qr,
                            .begin = 0,
                            .end = p_.causal ? std::clamp<int64_t>(limit + diagonal, 0, p_.S_kv) : p_.S_kv,
                            .out = &out[at],
                            .bound = bound ? bound->data() + at : nullptr,
                            .nan_ok = bound ? nan_ok : nullptr,
                            .out_index = static_cast<int64_t>(at)});
          }
        if (mask)
          a.bias = [&](int64_t row, int64_t begin, int64_t end, double* s) {
            const int64_t r = row / Gq, h = head_mod ? row % Gq * p_.H_kv + hk : hk * Gq + row % Gq;
            const int64_t m0 =
                n * p_.mask_stride(0) + (head_broadcast ? 0 : h * p_.mask_stride(1)) + r * p_.mask_stride(2);
            for (int64_t c = begin; c < end; ++c) s[c - begin] += mask->get(static_cast<size_t>(m0 + c));
            return 0.0;  // the mask's roundings are PermittedDeltas::s
          };
        const int64_t kvb = (n * p_.H_kv + hk) * p_.S_kv;
        attend(a, rows, kv_rows(K, 0, kvb, unquantized), kv_rows(V, 1, kvb, unquantized), nullptr);
      }
    return out;
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    std::vector<uint16_t> bound;
    NanPermits nan_ok;
    Expected e = Expected::rounded(in.at("output"), attention(in, true, false, &bound, &nan_ok));
    set_attention_bound(e, p_.q, std::move(bound), nan_ok);
    // Accuracy attribution: the exact compressed attention against the unquantized one.
    if (figures_wanted() && generated("key") && generated("value")) {
      const std::vector<double> compressed = attention(in, false, false);
      const std::vector<double> plain = attention(in, false, true);
      e.figures = {{"quant_err", quant_error_text(compressed, plain)}};
    }
    return expected_list(e);
  }

  // Keys each query row sees under the causal mode (the additive mask is not counted).
  double flops() const override {
    double pairs = 0;
    for (int64_t r = 0; r < p_.S_q; ++r) {
      const int64_t last = p_.causal == 0 ? p_.S_kv - 1 : p_.causal == 1 ? r : r + p_.S_kv - p_.S_q;
      pairs += static_cast<double>(std::clamp<int64_t>(last + 1, 0, p_.S_kv));
    }
    return attention_flops(pairs * static_cast<double>(p_.N * p_.H), p_.D, p_.D);
  }

  Tolerance default_tolerance(const std::string&) const override {
    if (p_.q == DType::f16) return {.atol = 1e-3, .rtol = 1.0 / 1024};
    if (p_.q == DType::bf16) return {.atol = 4e-3, .rtol = 1.0 / 128};
    return {.atol = 2e-5, .rtol = 1e-4};
  }

  void check_device(const DeviceInfo& dev) const override {
    check_attention_device(dev, {.key_dim = p_.D, .value_dim = p_.D});
  }

  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    AttentionShape shape{.num_heads = p_.H,
                         .num_kv_heads = p_.H_kv,
                         .q_rows = std::vector<int64_t>(p_.N, p_.S_q),
                         .kv_len = std::vector<int64_t>(p_.N, p_.S_kv)};
    shape.out_vector = [&](int64_t n, int64_t r, int64_t h) { return (n * p_.H + h) * p_.S_q + r; };
    Batch batch(rt);
    DeviceTensors t(batch, io, args().signature());
    const KernelParams params{{"N", p_.N},
                              {"num_heads", p_.H},
                              {"num_kv_heads", p_.H_kv},
                              {"S_q", p_.S_q},
                              {"S_kv", p_.S_kv},
                              {"G", p_.G},
                              {"k_compressed", p_.k.compressed},
                              {"v_compressed", p_.v.compressed},
                              {"k_layout", p_.k_transposed},
                              {"k_dtype", static_cast<uint32_t>(p_.k.data)},
                              {"v_dtype", static_cast<uint32_t>(p_.v.data)},
                              {"sk_dtype", static_cast<uint32_t>(p_.k.scale)},
                              {"sv_dtype", static_cast<uint32_t>(p_.v.scale)},
                              {"zk_dtype", static_cast<uint32_t>(p_.k.zp)},
                              {"zv_dtype", static_cast<uint32_t>(p_.v.zp)},
                              {"has_zk", p_.k.compressed && p_.k.zero_point},
                              {"has_zv", p_.v.compressed && p_.v.zero_point},
                              {"q_dtype", static_cast<uint32_t>(p_.q)},
                              {"scale_op", p_.divide},
                              {"causal", p_.causal},
                              {"has_mask", p_.has_mask()},
                              {"mask_n_stride", p_.has_mask() ? p_.mask_stride(0) : 0},
                              {"mask_h_stride", p_.has_mask() ? p_.mask_stride(1) : 0},
                              {"mask_q_stride", p_.has_mask() ? p_.mask_stride(2) : 0}};
    run_attention(batch, shape,
                  {.kernel = Kernel("sdpa_attention", {{"D", static_cast<uint32_t>(p_.D)}}),
                   .buffers = t.bindings(),
                   .params = params,
                   .out = t.at("output"),
                   .out_dtype = p_.q,
                   .head_dim = p_.D,
                   .empty = EmptyRow::zeros,  // inf_as_zero
                   .heads = {.key_dim = p_.D, .value_dim = p_.D}});
    t.download(io);
    return batch.submit();
  }

 private:
  SdpaParams p_;
};

class SdpaOperator final : public Operator {
 public:
  const Signature& signature() const override { return sdpa_signature(); }
  std::unique_ptr<OpCase> instantiate(Args a) const override {
    SdpaParams p = parse_sdpa_params(a);
    return std::make_unique<SdpaCase>(std::move(a), std::move(p));
  }
};

}  // namespace

std::unique_ptr<Operator> make_sdpa_compressed_kv_operator() { return std::make_unique<SdpaOperator>(); }

}  // namespace kvbench
