// ggml.FLASH_ATTN_EXT: llama.cpp's attention over its KV cache, as ggml defines it
// (ggml/include/ggml.h, ggml/src/ggml-cpu/ops.cpp): for query row i of head h in batch b,
//   s_j = softcap ? softcap * tanh(scale * q.k_j / softcap) : scale * q.k_j
//   s_j += slope(h) * mask[b % ne33, h % ne32, i, j]         (-inf removes key j)
//   out[b, i, h, :] = sum_j softmax(s, sink_h)_j v_j        (a sink: one more logit, no value)
// K and V in any ggml KV type (dequantized exactly as ggml does), GQA by broadcast, Dk != Dv.
// The golden is exact in double; its bound covers the precisions llama.cpp's kernels take.
// Definition, bound and sources: specs/ggml.md.
#include <algorithm>
#include <cmath>

#include "core/float_format.hpp"
#include "core/rng.hpp"
#include "ops/attention/attention_golden.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/fault.hpp"
#include "ops/ggml/ggml_common.hpp"
#include "ops/ggml/ggml_ops.hpp"
#include "ops/vulkan_io.hpp"
#include "ref/attention.hpp"
#include "ref/attention_bound.hpp"

namespace kvbench {
namespace {

constexpr double kU16 = 0x1p-11, kU32 = 0x1p-24;

struct FaParams {
  GgmlType tk, tv;
  double scale, max_bias, softcap;
  bool prec_f32, sinks;
  std::string mask;  // none, causal, random
  int64_t batch, n_batch, n_head, n_head_kv, n_kv, dk, dv, mask_heads, mask_batch;
  int64_t group() const { return n_head / n_head_kv; }
  bool has_mask() const { return mask != "none"; }
};

// ggml's ALiBi slope of each head (ops.cpp: m0^(h+1), then m1^(2(h-n)+1)), in double: the
// shared rule with its max_bias; 1 for every head without ALiBi.
std::vector<double> ggml_alibi_slopes(const FaParams& p) {
  return p.max_bias > 0 ? alibi_slopes(p.n_head, p.max_bias)
                        : std::vector<double>(static_cast<size_t>(p.n_head), 1.0);
}

class FlashAttnExtCase final : public OpCase {
 public:
  FlashAttnExtCase(Args a, FaParams p)
      : OpCase(std::move(a)), p_(std::move(p)), slopes_(ggml_alibi_slopes(p_)) {}

  std::string describe() const override {
    std::string s = "q=" + shape_string({p_.batch, p_.n_head, p_.n_batch, p_.dk}) +
                    " kv=" + shape_string({p_.batch, p_.n_head_kv, p_.n_kv}) +
                    " k=" + ggml_type_info(p_.tk).name + " v=" + ggml_type_info(p_.tv).name +
                    " dv=" + std::to_string(p_.dv) + " mask=" + p_.mask;
    if (p_.max_bias > 0) s += " max_bias=" + bound_text(p_.max_bias);
    if (p_.softcap > 0) s += " softcap=" + bound_text(p_.softcap);
    if (p_.sinks) s += " sinks";
    return s + (p_.prec_f32 ? " prec=f32" : "");
  }

  std::vector<TensorSpec> tensor_specs() const override {
    std::vector<TensorSpec> s{
        {"q", DType::f32, {p_.batch, p_.n_head, p_.n_batch, p_.dk}},
        {"k", ggml_type_info(p_.tk).dtype, ggml_shape(p_.tk, {p_.batch, p_.n_head_kv, p_.n_kv, p_.dk})},
        {"v", ggml_type_info(p_.tv).dtype, ggml_shape(p_.tv, {p_.batch, p_.n_head_kv, p_.n_kv, p_.dv})}};
    if (p_.has_mask()) s.push_back({"mask", DType::f16, {p_.mask_batch, p_.mask_heads, p_.n_batch, p_.n_kv}});
    if (p_.sinks) s.push_back({"sinks", DType::f32, {p_.n_head}});
    s.push_back({"out", DType::f32, {p_.batch, p_.n_batch, p_.n_head, p_.dv}});
    return s;
  }

  void fill(Tensor& t) const override {
    if (t.name() == "k") return fill_ggml_rows(args(), t, p_.tk, p_.dk, args().range("k"));
    if (t.name() == "v") return fill_ggml_rows(args(), t, p_.tv, p_.dv, args().range("v"));
    if (t.name() != "mask") return OpCase::fill(t);
    // causal: query i (at position n_kv - n_batch + i) sees keys up to its position; with
    // ALiBi a visible key holds -(distance), as llama.cpp writes it. random: each element
    // -inf with probability 1/4, else uniform in [-4, 0); every row i = 3 (mod 8) all -inf.
    const CounterRng rng(args().seed(), t.name());
    fill_with(t, [&](size_t e) {
      const auto j = static_cast<int64_t>(e % static_cast<size_t>(p_.n_kv));
      const auto i = static_cast<int64_t>(e / static_cast<size_t>(p_.n_kv) % static_cast<size_t>(p_.n_batch));
      if (p_.mask == "causal") {
        const int64_t pos = p_.n_kv - p_.n_batch + i;
        if (j > pos) return -kInf;
        return p_.max_bias > 0 ? -static_cast<double>(pos - j) : 0.0;
      }
      if (i % 8 == 3 || rng.integer(e, 0, 3) == 0) return -kInf;
      return rng.uniform(e ^ (1ull << 62), -4, 0);
    });
  }

  double flops() const override {
    return attention_flops(static_cast<double>(p_.batch * p_.n_head * p_.n_batch * p_.n_kv), p_.dk, p_.dv);
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    std::vector<uint16_t> bound;
    NanPermits nan_ok;
    Expected e = Expected::rounded(in.at("out"), attention(in, &bound, &nan_ok));
    // The result rounded once more: to f32, or under GGML_PREC_DEFAULT through f16.
    set_attention_bound(e, p_.prec_f32 ? DType::f32 : DType::f16, std::move(bound), nan_ok);
    return expected_list(std::move(e));
  }

  void check_device(const DeviceInfo& dev) const override {
    check_attention_device(dev, {.key_dim = p_.dk, .value_dim = p_.dv});
  }

  // The shared attention kernel (shaders/ggml_attention.comp): K and V read in their ggml
  // types, ALiBi's slopes per head from the host (f32 of the exact slope), sinks in the finish.
  double run_vulkan(Runtime& rt, TensorSet& io) const override {
    AttentionShape shape{.num_heads = p_.n_head,
                         .num_kv_heads = p_.n_head_kv,
                         .q_rows = std::vector<int64_t>(static_cast<size_t>(p_.batch), p_.n_batch),
                         .kv_len = std::vector<int64_t>(static_cast<size_t>(p_.batch), p_.n_kv)};
    shape.out_vector = [&](int64_t b, int64_t r, int64_t h) { return (b * p_.n_batch + r) * p_.n_head + h; };
    Batch batch(rt);
    DeviceTensors t(batch, io, args().signature());
    const std::vector<float> slopes(slopes_.begin(), slopes_.end());  // f32 of the exact slopes
    KernelBuffers buffers = t.bindings();
    buffers["slopes"] = batch.buffer_with(slopes);
    const KernelParams params{{"num_heads", p_.n_head},
                              {"num_kv_heads", p_.n_head_kv},
                              {"n_batch", p_.n_batch},
                              {"n_kv", p_.n_kv},
                              {"k_row_bytes", ggml_row_bytes(p_.tk, p_.dk)},
                              {"v_row_bytes", ggml_row_bytes(p_.tv, p_.dv)},
                              {"has_mask", p_.has_mask()},
                              {"mask_heads", p_.mask_heads},
                              {"mask_batch", p_.mask_batch},
                              {"scale", p_.scale},
                              {"softcap", p_.softcap}};
    run_attention(batch, shape,
                  {.kernel = Kernel("ggml_attention", {{"D", static_cast<uint32_t>(p_.dk)},
                                                       {"GGML_DV", static_cast<uint32_t>(p_.dv)},
                                                       {"K_TYPE", static_cast<uint32_t>(p_.tk)},
                                                       {"V_TYPE", static_cast<uint32_t>(p_.tv)}}),
                   .buffers = buffers,
                   .params = params,
                   .out = t.at("out"),
                   .sinks = p_.sinks ? t.at("sinks") : nullptr,
                   .out_dtype = DType::f32,
                   .head_dim = p_.dv,
                   .empty = EmptyRow::zeros,
                   .heads = {.key_dim = p_.dk, .value_dim = p_.dv}});
    t.download(io);
    return batch.submit();
  }

 private:
  // The largest magnitude a block of a quantized side reaches (its f16 dequantization's
  // rounding is relative to it), or 0.
  double side_magnitude(const Tensor& t, GgmlType type) const {
    if (!ggml_is_quantized(type)) return 0;
    const int64_t bb = ggml_type_info(type).block_bytes;
    double m = 0;
    for (size_t at = 0; at + static_cast<size_t>(bb) <= t.bytes().size(); at += static_cast<size_t>(bb))
      m = std::max(m, ggml_block_magnitude(type, t.bytes().data() + at));
    return m;
  }

  // specs/ggml.md "Bound". Any precision: Q, K, V and P held in f16 (ggml-vulkan on an fp16
  // device, the CPU's f16 vec-dot). GGML_PREC_DEFAULT (ggml_prec_set_acc: no accumulator
  // required) also lets q.k, the scores and the running P.V accumulate in f16 after every key
  // (ggml-vulkan's f16 ACC_TYPE, the CPU's VKQ16) and the result pass through f16;
  // GGML_PREC_F32 "requires accumulation of the results in F32" (ggml.h).
  PermittedDeltas permitted(const TensorSet& in) const {
    const bool qk = ggml_is_quantized(p_.tk), qv = ggml_is_quantized(p_.tv), f32 = p_.prec_f32;
    return {.k = kU16,
            .k_abs = (qk ? kU16 * side_magnitude(in.at("k"), p_.tk) : 0.0) + 0x1p-25,
            .v = kU16,
            .v_abs = (qv ? kU16 * side_magnitude(in.at("v"), p_.tv) : 0.0) + 0x1p-25,
            .p = 2 * kU16,
            .p_abs = 2 * 0x1p-25,
            .s = f32 ? 0x1p-22 : 3 * kU16,
            .dot = f32 ? kU32 : kU16,
            .acc = f32 ? 0.0 : kU16,
            .acc_block = 1};
  }

  // How far the query a permitted kernel multiplies K with may lie from q (2-norm): ggml's
  // CPU kernel converts it to K's vec-dot type (q8_0 blocks for q8_0, q4_0, q5_0, iq4_nl;
  // q8_1 blocks, with their f16 sum, for q4_1 and q5_1; f16 for f16; bf16 for bf16), a GPU
  // kernel may hold it in f16. Per element the larger of the two.
  double query_delta(const double* q) const {
    const bool blocks = ggml_is_quantized(p_.tk), sum = p_.tk == GgmlType::q4_1 || p_.tk == GgmlType::q5_1;
    const double own = p_.tk == GgmlType::bf16 ? 0x1p-8 : kU16;
    double total = 0;
    for (int64_t b = 0; b < p_.dk; b += 32) {
      const int64_t e = std::min(p_.dk, b + 32);
      double amax = 0, l1 = 0;
      for (int64_t d = b; d < e; ++d) amax = std::max(amax, std::fabs(q[d])), l1 += std::fabs(q[d]);
      // q8: |code * f16(d) - q| <= d / 2 + 127 |f16(d) - d| + the f32 product's rounding.
      const double step = blocks ? amax / 127 * (0.5 + 127 * kU16 + 0x1p-20) : 0.0;
      for (int64_t d = b; d < e; ++d) {
        const double x = std::max(step, own * std::fabs(q[d]) + 0x1p-25);
        total += x * x;
      }
      if (sum) total += std::pow(kU16 * (l1 + 16 * amax / 127) + 0x1p-25, 2);  // q8_1's s in f16
    }
    return std::sqrt(total) * (1 + 0x1p-20);
  }

  std::vector<double> attention(const TensorSet& in, std::vector<uint16_t>* bound, NanPermits* nan_ok) const {
    const Tensor& q = in.at("q");
    const Tensor& k = in.at("k");
    const Tensor& v = in.at("v");
    const Tensor* mask = p_.has_mask() ? &in.at("mask") : nullptr;
    const Tensor* sinks = p_.sinks ? &in.at("sinks") : nullptr;
    const int64_t G = p_.group();
    std::vector<double> out(static_cast<size_t>(p_.batch * p_.n_batch * p_.n_head * p_.dv), 0.0);
    bound->assign(out.size(), 0);
    AttentionBlock a{.dk = p_.dk,
                     .dv = p_.dv,
                     .scale = p_.scale,
                     .empty = EmptyRow::zeros,  // ggml: S = 0 -> 1/S taken as 0
                     .fault = attention_fault(fault()),
                     .threads = args().threads()};
    a.permitted = permitted(in);
    const std::optional<PrecisionSteps> steps = variant_steps();
    if (steps) a.steps = &*steps;
    // prec_f32_honoured_only_at_gqa16: GGML_PREC_F32 away from a group of 16 computed as the
    // CPU's default precision does (the running P.V in f16).
    const PrecisionSteps default_precision{
        .p = PrecisionSteps::P::unrounded, .acc_dtype = DType::f16, .acc_block = 1};
    if (fault_is("prec_f32_honoured_only_at_gqa16") && p_.prec_f32 && G != 16) a.steps = &default_precision;
    const int64_t query_members = fault_is("gqa_group_past_8_reuses_query") ? 8 : G;
    std::vector<double> qrows(static_cast<size_t>(G * p_.n_batch * p_.dk));
    for (int64_t b = 0; b < p_.batch; ++b)
      for (int64_t hk = 0; hk < p_.n_head_kv; ++hk) {
        std::vector<QueryRow> rows;
        for (int64_t j = 0; j < G; ++j)
          for (int64_t i = 0; i < p_.n_batch; ++i) {
            const int64_t h = hk * G + j;
            double* qr = &qrows[rows.size() * static_cast<size_t>(p_.dk)];
            q.get_range(q.offset({b, hk * G + j % query_members, i, 0}), static_cast<size_t>(p_.dk), qr);
            if (variant_is("cpu_query_vec_dot")) to_vec_dot_type(qr);
            if (variant_is("vulkan_fp16"))  // Q * scale in f16 (the scale applied to q, not the dot)
              for (int64_t d = 0; d < p_.dk; ++d) qr[d] = round_f16(qr[d] * p_.scale) / p_.scale;
            const auto at = static_cast<size_t>(((b * p_.n_batch + i) * p_.n_head + h) * p_.dv);
            rows.push_back(
                {.q = qr,
                 .begin = 0,
                 .end = p_.n_kv,
                 .out = &out[at],
                 .bound = bound->data() + at,
                 .nan_ok = nan_ok,
                 .out_index = static_cast<int64_t>(at),
                 .sink = sinks && !fault_is("sinks_ignored") ? sinks->get(static_cast<size_t>(h)) : -kInf,
                 .q_delta = query_delta(qr)});
          }
        a.bias = [&, b, hk](int64_t r, int64_t begin, int64_t end, double* s) {
          const int64_t h = hk * G + r / p_.n_batch, i = r % p_.n_batch;
          double xmax = 0, bmax = 0;
          const bool cap_after = fault_is("softcap_after_mask");
          if (p_.softcap > 0 && !cap_after)
            for (int64_t c = 0; c < end - begin; ++c) {
              xmax = std::max(xmax, std::fabs(s[c] / p_.softcap));
              s[c] = p_.softcap * std::tanh(s[c] / p_.softcap);
            }
          if (mask) {
            const int64_t plane =
                fault_is("mask_heads_divided") ? h / (p_.n_head / p_.mask_heads) : h % p_.mask_heads;
            const size_t row0 = mask->offset({b % p_.mask_batch, plane, i, 0});
            const double slope =
                slopes_[static_cast<size_t>(fault_is("alibi_slope_next_head") ? (h + 1) % p_.n_head : h)];
            for (int64_t c = begin; c < end; ++c) {
              const double m = mask->get(row0 + static_cast<size_t>(c));
              if (m == -kInf) {
                s[c - begin] = -kInf;
                continue;
              }
              s[c - begin] += slope * m;
              bmax = std::max(bmax, std::fabs(slope * m));
            }
          }
          if (p_.softcap > 0 && cap_after)
            for (int64_t c = 0; c < end - begin; ++c) s[c] = p_.softcap * std::tanh(s[c] / p_.softcap);
          // The slope in f32 (powf) and its product with the mask: a few ulp of |slope * m|;
          // tanh's error in f32 (its exp form) grows with its argument up to saturation.
          return 8 * kU32 * bmax +
                 (p_.softcap > 0 ? p_.softcap * kU32 * (16 + 8 * std::min(xmax, 10.0)) : 0.0);
        };
        const int64_t kv0 = (b * p_.n_head_kv + hk) * p_.n_kv;
        attend(a, rows, side_rows(k, p_.tk, p_.dk, kv0), side_rows(v, p_.tv, p_.dv, kv0, true), nullptr);
      }
    return out;
  }

  // K or V rows kv0 + t as ggml dequantizes them. V with fault v_read_with_dk_stride: row t
  // taken from element t * dk of its head's values (float types, dk != dv).
  RowSource side_rows(const Tensor& t, GgmlType type, int64_t cols, int64_t kv0, bool is_v = false) const {
    const bool drift =
        is_v && fault_is("v_read_with_dk_stride") && !ggml_is_quantized(type) && p_.dk != p_.dv;
    return [&t, type, cols, kv0, drift, this](int64_t row, double* dst, int64_t step) {
      thread_local std::vector<double> buf;
      buf.resize(static_cast<size_t>(cols));
      if (drift) {
        const int64_t head0 = kv0 * cols, at = head0 + row * p_.dk;
        const int64_t end = std::min<int64_t>(at + cols, head0 + p_.n_kv * cols);
        for (int64_t c = 0; c < cols; ++c)
          buf[static_cast<size_t>(c)] = at + c < end ? t.get(static_cast<size_t>(at + c)) : 0.0;
      } else {
        ggml_row_values(t, type, cols, kv0 + row, buf.data());
        if (variant_is("vulkan_fp16"))  // K and V dequantized into f16
          for (double& x : buf) x = round_f16(x);
      }
      for (int64_t c = 0; c < cols; ++c) dst[c * step] = buf[static_cast<size_t>(c)];
    };
  }

  // The CPU kernel's query: q converted to K's vec-dot type and back (variant cpu_query_vec_dot).
  void to_vec_dot_type(double* q) const {
    std::vector<float> x(static_cast<size_t>(p_.dk));
    for (int64_t d = 0; d < p_.dk; ++d) x[static_cast<size_t>(d)] = static_cast<float>(q[d]);
    if (ggml_is_quantized(p_.tk)) {
      std::vector<uint8_t> blocks(static_cast<size_t>(ggml_row_width(GgmlType::q8_0, p_.dk)));
      ggml_quantize_row(GgmlType::q8_0, x.data(), blocks.data(), p_.dk);
      ggml_dequantize_row(GgmlType::q8_0, blocks.data(), q, p_.dk);
    } else if (p_.tk == GgmlType::f16) {
      for (int64_t d = 0; d < p_.dk; ++d) q[d] = round_f16(q[d]);
    } else if (p_.tk == GgmlType::bf16) {
      for (int64_t d = 0; d < p_.dk; ++d)
        q[d] = bf16_bits_to_double(ggml_bf16_bits(x[static_cast<size_t>(d)]));
    }
  }

  std::optional<PrecisionSteps> variant_steps() const {
    if (variant().empty()) return std::nullopt;
    if (auto shared = attention_steps(variant(), DType::f16)) return shared;
    if (variant_is("cpu_query_vec_dot")) return PrecisionSteps{.p = PrecisionSteps::P::unrounded};
    if (variant_is("vulkan_fp16")) {
      // P rounded to f16 unnormalized; at the default precision the scores too, and the
      // running P.V rounded to f16 after every key (ggml-vulkan's f16 ACC_TYPE and Of).
      PrecisionSteps st{.p = PrecisionSteps::P::unnormalized, .p_dtype = DType::f16};
      if (!p_.prec_f32) st.score_dtype = DType::f16, st.acc_dtype = DType::f16, st.acc_block = 1;
      return st;
    }
    if (variant_is("cpu_v_f16_accumulate"))
      return p_.prec_f32
                 ? PrecisionSteps{.p = PrecisionSteps::P::unrounded}
                 : PrecisionSteps{.p = PrecisionSteps::P::unrounded, .acc_dtype = DType::f16, .acc_block = 1};
    throw std::logic_error("ggml.FLASH_ATTN_EXT has no variant " + variant());
  }

  FaParams p_;
  std::vector<double> slopes_;  // ALiBi's per head
};

class FlashAttnExtOperator final : public Operator {
 public:
  const Signature& signature() const override {
    static const Signature sig{
        .id = "ggml.FLASH_ATTN_EXT",
        .doc =
            "llama.cpp's attention over its KV cache (ggml_flash_attn_ext): K and V in any ggml KV type, "
            "mask with ALiBi, softcap, sinks, GQA, Dk != Dv (specs/ggml.md)",
        .params =
            {
                ggml_type_param("type_k", "K's ggml type", "f16"),
                [] {
                  Param p = ggml_type_param("type_v", "V's ggml type");
                  p.derived = "type_k";
                  return p;
                }(),
                {.section = "attributes",
                 .name = "scale",
                 .type = ParamType::number,
                 .derived = "1 / sqrt(head_size_k)",
                 .doc = "multiplies q.k"},
                {.section = "attributes",
                 .name = "max_bias",
                 .type = ParamType::number,
                 .fallback = 0,
                 .min = 0,
                 .doc = "ALiBi: > 0 scales the mask by ggml's per-head slope"},
                {.section = "attributes",
                 .name = "logit_softcap",
                 .type = ParamType::number,
                 .fallback = 0,
                 .min = 0,
                 .doc = "> 0: s = softcap * tanh(s / softcap) before the mask (Gemma-2: 50)"},
                {.section = "attributes",
                 .name = "precision",
                 .type = ParamType::string,
                 .fallback = "default",
                 .allowed = {"default", "f32"},
                 .doc = "GGML_PREC_DEFAULT (f16 accumulation permitted) or GGML_PREC_F32"},
                {.section = "attributes",
                 .name = "mask",
                 .type = ParamType::string,
                 .fallback = "causal",
                 .allowed = {"none", "causal", "random"},
                 .doc = "none; causal (ALiBi: -distance); random (-inf 1 in 4, rows 3 mod 8 all -inf)"},
                {.section = "attributes",
                 .name = "sinks",
                 .type = ParamType::boolean,
                 .fallback = false,
                 .doc = "one sink logit per head (ggml_flash_attn_ext_add_sinks, gpt-oss)"},
                {.section = "shapes", .name = "batch", .fallback = 1, .min = 1, .doc = "ne3 of q, k, v"},
                {.section = "shapes", .name = "n_batch", .min = 1, .doc = "query rows (tokens)"},
                {.section = "shapes", .name = "n_head", .min = 1, .doc = "query heads"},
                {.section = "shapes",
                 .name = "n_head_kv",
                 .derived = "n_head",
                 .min = 1,
                 .doc = "kv heads, divides n_head"},
                {.section = "shapes", .name = "n_kv", .min = 1, .doc = "keys"},
                {.section = "shapes", .name = "head_size_k", .min = 1, .doc = "Dk"},
                {.section = "shapes", .name = "head_size_v", .derived = "head_size_k", .min = 1, .doc = "Dv"},
                {.section = "shapes",
                 .name = "mask_heads",
                 .fallback = 1,
                 .min = 1,
                 .doc = "mask ne2, divides n_head"},
                {.section = "shapes",
                 .name = "mask_batch",
                 .fallback = 1,
                 .min = 1,
                 .doc = "mask ne3, divides batch"},
            },
        .tensors =
            {
                {.name = "q",
                 .shape = "[batch, n_head, n_batch, head_size_k]",
                 .dtype_rule = "f32",
                 .range = {{-1, 1}}},
                {.name = "k",
                 .shape = "[batch, n_head_kv, n_kv, head_size_k] (block types: [.., row bytes], u8)",
                 .dtype_rule = "= type_k",
                 .range = {{-1, 1}}},
                {.name = "v",
                 .shape = "[batch, n_head_kv, n_kv, head_size_v] (block types: [.., row bytes], u8)",
                 .dtype_rule = "= type_v",
                 .range = {{-1, 1}}},
                {.name = "mask",
                 .shape = "[mask_batch, mask_heads, n_batch, n_kv]",
                 .dtype_rule = "f16",
                 .present = "mask != none"},
                {.name = "sinks",
                 .shape = "[n_head]",
                 .dtype_rule = "f32",
                 .range = {{-2, 2}},
                 .present = "sinks"},
                {.name = "out",
                 .role = Role::output,
                 .shape = "[batch, n_batch, n_head, head_size_v] (ggml's permuted result)",
                 .dtype_rule = "f32"},
            },
        .from_files = {"q", "k", "v", "mask", "sinks"},
        .sizes = {"batch", "n_batch", "n_head", "n_kv", "head_size_k", "head_size_v", "n_head_kv"},
        .faults = with_attention_faults({
            {"softcap_after_mask", "tanh softcapping applied after the mask and ALiBi are added",
             "issue 60's fault list"},
            {"alibi_slope_next_head", "head h given head h + 1's ALiBi slope", "issue 60's fault list"},
            {"sinks_ignored", "the sink logits left out of the softmax", "issue 60's fault list"},
            {"mask_heads_divided", "mask plane h / (n_head / ne32) where ggml broadcasts h % ne32",
             "issue 60's fault list (the mask's broadcast over heads)"},
            {"v_read_with_dk_stride", "V rows read with Dk's stride when Dk != Dv",
             "ik_llama.cpp#2031 (the V pointer drifting at 576/512)"},
            {"gqa_group_past_8_reuses_query",
             "GQA in tiles of 8 query heads: member j >= 8 of a kv head's group computed with member j % 8's "
             "query (right only up to a group of 8)",
             "issue 62 (GQA mappings that hold only up to a group of 8)"},
            {"prec_f32_honoured_only_at_gqa16",
             "GGML_PREC_F32 honoured only at a GQA group of 16; any other group runs the default precision's "
             "f16 running P.V",
             "llama.cpp#28124 (prec=F32 ignored, seen only at GQA 16)"},
        }),
        .variants = with_attention_variants({
            {"cpu_query_vec_dot",
             "q converted to K's vec-dot type before q.k (q8_0 blocks for quantized K, f16, bf16)",
             "ggml/src/ggml-cpu/ops.cpp ggml_compute_forward_flash_attn_ext_f16_one_chunk (q_to_vec_dot)"},
            {"vulkan_fp16",
             "Q * scale, K, V and P in f16; under GGML_PREC_DEFAULT the scores and the running P.V in f16 "
             "too",
             "ggml/src/ggml-vulkan/vulkan-shaders/flash_attn.comp on a device with fp16 (FLOAT_TYPE, "
             "ACC_TYPE); "
             "only as far as GGML_PREC_F32 permits: its f16 Of under F32 is the defect of "
             "specs/ggml-findings.md"},
            {"cpu_v_f16_accumulate", "under GGML_PREC_DEFAULT the running P.V rounded to f16 after every key",
             "ggml/src/ggml-cpu/ops.cpp (VKQ16, ggml_vec_mad_f16) for f16 V"},
        }),
    };
    return sig;
  }

  std::unique_ptr<OpCase> instantiate(Args a) const override {
    FaParams p{.tk = ggml_type_arg(a, "type_k"),
               .tv = ggml_type_arg(a, a.written("type_v") ? "type_v" : "type_k"),
               .scale = 0,
               .max_bias = a.number("max_bias"),
               .softcap = a.number("logit_softcap"),
               .prec_f32 = a.string("precision") == "f32",
               .sinks = a.boolean("sinks"),
               .mask = a.string("mask"),
               .batch = a.integer("batch"),
               .n_batch = a.integer("n_batch"),
               .n_head = a.integer("n_head"),
               .n_head_kv = a.written("n_head_kv") ? a.integer("n_head_kv") : a.integer("n_head"),
               .n_kv = a.integer("n_kv"),
               .dk = a.integer("head_size_k"),
               .dv = a.written("head_size_v") ? a.integer("head_size_v") : a.integer("head_size_k"),
               .mask_heads = a.integer("mask_heads"),
               .mask_batch = a.integer("mask_batch")};
    if (!a.written("type_v")) a.resolve("type_v", a.string("type_k"));
    if (!a.written("n_head_kv")) a.resolve("n_head_kv", p.n_head_kv);
    if (!a.written("head_size_v")) a.resolve("head_size_v", p.dv);
    p.scale = a.written("scale") ? a.number("scale") : 1 / std::sqrt(static_cast<double>(p.dk));
    if (!a.written("scale")) a.resolve("scale", p.scale);
    require_whole_blocks(a, p.tk, p.dk, "head_size_k");
    require_whole_blocks(a, p.tv, p.dv, "head_size_v");
    if (p.n_head % p.n_head_kv) a.fail("n_head_kv", "n_head_kv must divide n_head (ggml broadcasts K and V)");
    if (p.n_head % p.mask_heads)
      a.fail("mask_heads", "mask_heads must divide n_head (ggml: n_head % ne32 == 0)");
    if (p.batch % p.mask_batch) a.fail("mask_batch", "mask_batch must divide batch (ggml: ne3 % ne33 == 0)");
    if (p.max_bias > 0 && !p.has_mask()) a.fail("max_bias", "ALiBi scales the mask: max_bias needs a mask");
    return std::make_unique<FlashAttnExtCase>(std::move(a), p);
  }
};

}  // namespace

std::unique_ptr<Operator> make_ggml_flash_attn_ext_operator() {
  return std::make_unique<FlashAttnExtOperator>();
}

}  // namespace kvbench
