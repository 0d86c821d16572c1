// aclnn.FusedInferAttentionScoreV3: every layout, sparse modes 0-4, masks, pse, page
// attention, softmaxLse, KV antiquant, left padding, shared prefix, MLA and post-quant on
// the shared attention reference and kernel.
// Formulas, decisions and tolerances: specs/fused_infer_attention_score.md.
#include "ops/fused_infer_attention/fused_infer_attention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "core/error.hpp"
#include "core/float_format.hpp"
#include "core/rng.hpp"
#include "ops/attention/attention_golden.hpp"
#include "ops/attention/attention_kernel.hpp"
#include "ops/fused_infer_attention/fia_faults.hpp"
#include "ops/fused_infer_attention/fia_full_quant.hpp"
#include "ops/fused_infer_attention/fia_post_quant.hpp"
#include "ops/fused_infer_attention/fia_inputs.hpp"
#include "ops/fused_infer_attention/fia_params.hpp"
#include "ops/fused_infer_attention/fia_vulkan.hpp"
#include "ref/attention.hpp"
#include "ref/quant.hpp"
#include "vk/runtime.hpp"

namespace kvbench {
namespace {

constexpr double kIfaEmptyLse =
    static_cast<double>(-3.4e38f);  // the IFA kernel's lse of a batch without keys

class FiaCase final : public OpCase {
 public:
  FiaCase(Args a, FiaParams p) : OpCase(std::move(a)), p_(std::move(p)) {}

  std::string describe() const override {
    std::string s = p_.layout + " B=" + std::to_string(p_.B) + " S1=" + std::to_string(p_.S1) +
                    " S2=" + std::to_string(p_.S2) + " N=" + std::to_string(p_.N) + "/" +
                    std::to_string(p_.Nkv) + " D=" + std::to_string(p_.D) +
                    (p_.Dv != p_.D ? "/" + std::to_string(p_.Dv) : "") +
                    " sparse=" + std::to_string(p_.sparse) + " " + std::string(dtype_name(p_.q));
    if (p_.has_mask()) s += " mask(" + p_.mask + "," + std::string(dtype_name(p_.mask_dtype)) + ")";
    if (p_.pse != "none") s += " pse(" + p_.pse + ")";
    if (p_.paged())
      s += " paged(" + args().string("kv_cache_layout") + "," + std::to_string(p_.block_size) + ")";
    if (p_.tensorlist) s += " tensorlist";
    if (p_.lse) s += " lse";
    return s;
  }

  std::vector<TensorSpec> tensor_specs() const override {
    const DType kv = p_.quant.on ? p_.quant.codes : p_.q;
    std::vector<TensorSpec> s{{"query", p_.q, p_.query_shape()}};
    if (p_.tensorlist) {  // key.0, value.0, key.1, ...: batch b's own K and V
      for (int64_t b = 0; b < p_.B; ++b) {
        s.push_back({"key." + std::to_string(b), kv, p_.list_shape(b, p_.D)});
        s.push_back({"value." + std::to_string(b), kv, p_.list_shape(b, p_.Dv)});
      }
    } else {
      s.push_back({"key", kv, p_.kv_shape(p_.D)});
      s.push_back({"value", kv, p_.kv_shape(p_.Dv)});
    }
    if (p_.quant.on && p_.quant.combined) {
      s.push_back({"antiquantScale", p_.antiquant_dtype(p_.quant.key_mode), p_.combined_antiquant_shape()});
      if (p_.quant.offset)
        s.push_back(
            {"antiquantOffset", p_.antiquant_dtype(p_.quant.key_mode), p_.combined_antiquant_shape()});
    }
    for (int side = 0; side < 2 && p_.quant.on && !p_.quant.combined; ++side) {
      const FiaSide q = fia_side(p_, side);
      s.push_back({q.scale, p_.antiquant_dtype(q.mode), p_.antiquant_shape(q.mode, q.dim)});
      if (p_.quant.offset)
        s.push_back({q.offset, p_.antiquant_dtype(q.mode), p_.antiquant_shape(q.mode, q.dim)});
    }
    if (p_.pse != "none") s.push_back({"pseShift", p_.pse_dtype(), p_.pse_shape()});
    if (p_.full.deq1) s.push_back({"deqScale1", DType::f32, {1}});
    if (p_.full.qs1) s.push_back({"quantScale1", DType::f32, {1}});
    if (p_.full.deq2) s.push_back({"deqScale2", DType::f32, {1}});
    if (p_.has_mask()) s.push_back({"attenMask", p_.mask_dtype, p_.mask_shape()});
    if (!p_.act_q.empty())
      s.push_back({"actualSeqLengths", DType::i64, {static_cast<int64_t>(p_.act_q.size())}});
    if (!p_.act_kv.empty())
      s.push_back({"actualSeqLengthsKv", DType::i64, {static_cast<int64_t>(p_.act_kv.size())}});
    if (p_.rope) {
      s.push_back({"queryRope", p_.q, p_.query_shape(p_.rope)});
      s.push_back({"keyRope", p_.q, p_.kv_shape(p_.rope)});
      if (p_.rope_antiquant_scale) s.push_back({"keyRopeAntiquantScale", p_.q, {1}});
    }
    if (p_.has_prefix()) {
      s.push_back({"keySharedPrefix", p_.q, p_.prefix_shape(p_.D)});
      s.push_back({"valueSharedPrefix", p_.q, p_.prefix_shape(p_.Dv)});
    }
    if (args().written("actualSharedPrefixLen")) s.push_back({"actualSharedPrefixLen", DType::i64, {1}});
    if (p_.q_pad >= 0) s.push_back({"queryPaddingSize", DType::i64, {1}});
    if (p_.kv_pad >= 0) s.push_back({"kvPaddingSize", DType::i64, {1}});
    if (p_.paged()) s.push_back({"blockTable", DType::i32, {p_.B, p_.max_blocks}});
    if (p_.post.on) s.push_back({"quantScale2", p_.post.dtype, p_.post_quant_shape()});
    if (p_.post.on && p_.post.offset) s.push_back({"quantOffset2", p_.post.dtype, p_.post_quant_shape()});
    s.push_back({"attentionOut", p_.out_dtype(), p_.out_shape()});
    s.push_back({"softmaxLse", DType::f32, p_.lse_shape()});
    return s;
  }

  // One make_tensors() quantizes each side once (a tensor filled alone, again).
  void fill_generated(TensorSet& ts) const override {
    FiaQuantized quantized;
    for (auto& t : ts.tensors)
      if (t.role() != Role::output && generated(t.name())) fill(t, quantized);
  }
  void fill(Tensor& t) const override {
    FiaQuantized alone;
    fill(t, alone);
  }

  void fill(Tensor& t, FiaQuantized& quantized) const {
    const std::string& name =
        args().signature().tensor(t.name())->name;  // key.b and value.b fill as key and value
    if (name == "actualSeqLengths") return fill_values(t, p_.act_q);
    if (name == "actualSeqLengthsKv") return fill_values(t, p_.act_kv);
    if (name == "queryPaddingSize") return fill_values(t, {args().integer("queryPaddingSize")});
    if (name == "actualSharedPrefixLen") return fill_values(t, {p_.prefix_len});
    if (name == "kvPaddingSize") return fill_values(t, {args().integer("kvPaddingSize")});
    if (name == "blockTable") return fill_values(t, fia_block_table(p_, args().seed()));
    if (name == "attenMask") return fill_with(t, fia_mask_values(p_, args().seed()));
    if (p_.full.on && (name == "query" || name == "key" || name == "value")) return fia_fill_codes(args(), t);
    if (name == "keyRopeAntiquantScale")
      return t.set(0, std::numeric_limits<double>::quiet_NaN());  // reserved: must not be applied
    if (name == "deqScale1") return t.set(0, fia_deq_scale1(args()));
    if (name == "quantScale1") return t.set(0, fia_quant_scale1(args()));
    if (name == "deqScale2") return t.set(0, fia_deq_scale2(args()));
    if (p_.quant.on && p_.quant.combined && (name == "antiquantScale" || name == "antiquantOffset")) {
      // The key's scales, then the value's.
      const Tensor key = take_fia_quantized(p_, args(), quantized, 0, name),
                   value = take_fia_quantized(p_, args(), quantized, 1, name);
      t.bytes() = key.bytes();
      t.bytes().insert(t.bytes().end(), value.bytes().begin(), value.bytes().end());
      return;
    }
    for (int side = 0; side < 2 && p_.quant.on; ++side) {
      const FiaSide s = fia_side(p_, side);
      if (name == s.data) {
        quantized[static_cast<size_t>(side)] = fia_quantized(p_, args(), side, t);
        return;
      }
      if (name == s.scale || name == s.offset) {
        t = take_fia_quantized(p_, args(), quantized, side, name);
        return;
      }
    }
    if (p_.post.ties && (name == "quantScale2" || name == "quantOffset2")) {
      for (size_t i = 0; i < t.numel(); ++i) t.set(i, name == "quantScale2" ? 4.0 : 0.5);
      return;
    }
    OpCase::fill(t);
    if (p_.post.ties && name == "value")  // equal rows of multiples of 1/8: x * 4 (+ 0.5) lands on ties
      for (size_t i = 0; i < t.numel(); ++i)
        t.set(i, static_cast<double>(static_cast<int64_t>(i % static_cast<size_t>(p_.Dv)) % 17 - 8) / 8);
    if (p_.paged() && (name == "key" || name == "value"))
      fia_poison_cache(p_, args().seed(), t, name == "key" ? p_.D : p_.Dv);
  }

  bool masked(const Tensor* mask, int64_t b, int64_t i, int64_t j) const {
    if (!mask || !p_.mask_applies()) return false;
    const int64_t row = p_.ifa() ? 0 : (p_.q_start[b] + i) * p_.mask_row_stride();
    const bool set =
        mask->get(static_cast<size_t>(b * p_.mask_batch_stride() + row + p_.kv_start[b] + j)) != 0;
    return set != fault_is("mask_inverted");
  }

  // Each side's antiquant scales and offsets as doubles (empty without antiquant / offset).
  struct Antiquant {
    std::array<std::vector<double>, 2> scale, offset;
  };
  Antiquant antiquant(const TensorSet& in) const {
    Antiquant a;
    for (size_t side = 0; side < 2 && p_.quant.on; ++side) {
      const FiaSide s = fia_side(p_, static_cast<int>(side));
      for (const auto& [name, values] :
           {std::pair{s.scale, &a.scale[side]}, std::pair{s.offset, &a.offset[side]}})
        if (in.has(name)) *values = in.at(name).values();
    }
    return a;
  }

  // Rows of K (side 0, with the rope channels) or V of kv head hk as batch b sees them:
  // keys [0, Lp) from the shared prefix, then the batch's own K/V, either as given, or the
  // codes antiquantized as f32(f32(code + offset) * scale) (Ascend's formula,
  // ref/quant.hpp), or (`originals`) the unquantized values the codes were made from.
  RowSource kv_rows(const TensorSet& in, const std::vector<int64_t>& table, int side, int64_t b, int64_t hk,
                    const std::array<std::vector<double>, 2>& prefix, const Antiquant& antiquant,
                    const FiaOriginals* originals) const {
    const FiaSide s = fia_side(p_, side);
    const Tensor& data = in.at(p_.tensorlist ? s.data + "." + std::to_string(b) : s.data);
    const Tensor* rope = side == 0 && p_.rope ? &in.at("keyRope") : nullptr;
    const Strides ps = p_.prefix_strides(s.dim);
    const std::vector<double>& scale = antiquant.scale[static_cast<size_t>(side)];
    const std::vector<double>& offset = antiquant.offset[static_cast<size_t>(side)];
    // Full int8: K rows are the codes (deqScale1 joins the score scale), V rows the codes
    // times deqScale2, in double.
    const double factor = p_.full.on && side == 1 ? in.at("deqScale2").get(0) : 1.0;
    // The page-attention faults' reads (fia_faults.hpp): page_index_stuck also takes its
    // per-token scales at the position it reads.
    const PagedRead read = p_.paged() ? fia_paged_read(fault()) : PagedRead::right;
    const bool stuck = read == PagedRead::index_stuck;
    const bool reversed = fault_is("antiquant_scale_channels_reversed") && p_.quant.per_channel(side);
    const bool unit_scale = fault_is("value_scale_dropped_in_decode") && side == 1 && p_.ifa();
    const bool no_left_pad = fault_is("kv_left_padding_ignored") && !p_.paged() && !p_.nz;
    const bool swap_nibbles = fault_is("int4_nibble_swap") && dtype_bits(data.dtype()) == 4;
    const bool fp8_infinities = fault_is("fp8_e4m3_with_infinities") && data.dtype() == DType::f8e4m3fn;
    // The HiF8 faults: each code read through a faulty decode (fia_faults.hpp).
    const std::array<double, 256>* hif8_fault =
        data.dtype() == DType::hifloat8 ? fia_hif8_fault_values(fault()) : nullptr;
    const double offset_sign = fault_is("antiquant_offset_subtracted") ? -1.0 : 1.0;
    const bool antiquant_in_input = variant_is("ascend_antiquant_fp16") && !p_.full.on && p_.q != DType::f32;
    const bool fp8 = p_.quant.float8();  // FP8 E4M3FN or HiF8 codes
    return [=, this, &data, &table, &prefix, &scale, &offset](int64_t t, double* dst, int64_t step) {
      const int64_t Lp = p_.prefix_len, dim = s.dim;
      // Paged: the slot read (a faulty one may run past the cache: NaN there).
      const FiaSlot slot = p_.paged() ? fia_key_slot(p_, table, b, t - Lp, read) : FiaSlot{};
      const auto at = [&](int64_t d, int64_t n) {
        return p_.paged() ? fia_cache_index(p_, slot.blk, slot.r, hk, d, n)
                          : fia_kv_index(p_, table, b, t, hk, d, n);
      };
      if (p_.paged() && static_cast<size_t>(at(dim - 1, dim)) >= data.numel()) {
        for (int64_t d = 0; d < dim + (rope ? p_.rope : 0); ++d)
          dst[d * step] = std::numeric_limits<double>::quiet_NaN();
        return;
      }
      for (int64_t d = 0; rope && d < p_.rope; ++d)
        dst[(dim + d) * step] = rope->get(static_cast<size_t>(at(d, p_.rope)));
      if (t < Lp) {
        for (int64_t d = 0; d < dim; ++d)
          dst[d * step] = prefix[static_cast<size_t>(side)][ps.at(0, t, hk, d)];
        return;
      }
      const int64_t tt = stuck ? (t - Lp) % p_.block_size : t - Lp;
      const int64_t e = p_.paged()
                            ? at(0, dim)
                            : fia_kv_index(p_, table, b, tt - (no_left_pad ? p_.kv_start[b] : 0), hk, 0, dim);
      thread_local std::vector<double> row;
      row.resize(static_cast<size_t>(dim));
      if (originals) {  // drawn in bulk (the dtype dispatched once a row)
        originals->fill(e, dim, row.data());
        const std::vector<double>& f = originals->channel_factors();  // antiquant_scale_spread
        for (int64_t d = 0; d < dim; ++d)
          dst[d * step] =
              row[static_cast<size_t>(d)] * (f.empty() ? 1.0 : f[static_cast<size_t>(hk * dim + d)]);
        return;
      }
      if (p_.nz) {  // the row's 16-channel pieces lie blockSize * 16 elements apart
        for (int64_t d = 0; d < dim; d += 16)
          data.get_range(static_cast<size_t>(at(d, dim)), 16, row.data() + d);
      } else {
        data.get_range(static_cast<size_t>(e), static_cast<size_t>(dim), row.data());
      }
      if (swap_nibbles)
        for (int64_t d = 0; d + 1 < dim; d += 2)
          std::swap(row[static_cast<size_t>(d)], row[static_cast<size_t>(d + 1)]);
      for (int64_t d = 0; fp8_infinities && d < dim; ++d)
        row[static_cast<size_t>(d)] = e4m3fn_read_as_ieee(row[static_cast<size_t>(d)]);
      for (int64_t d = 0; hif8_fault && d < dim; ++d)  // one byte a code, row e.. (no NZ with antiquant)
        row[static_cast<size_t>(d)] = (*hif8_fault)[data.bytes()[static_cast<size_t>(e + d)]];
      if (scale.empty()) {
        for (int64_t d = 0; d < dim; ++d) dst[d * step] = row[static_cast<size_t>(d)] * factor;
        return;
      }
      const int64_t g0 =
          s.base + p_.antiquant_index(s.mode, dim, b, p_.kv_start[b] + tt, hk, 0, slot.blk, slot.r);
      // The common case in a loop of its own (a model-scale decode reads 10^8 elements
      // here): plain f32 antiquant with every group of the row inside the scales.
      if (!antiquant_in_input && !unit_scale && !reversed &&
          static_cast<size_t>(std::max(s.group(g0, 0), s.group(g0, dim - 1))) < scale.size() &&
          std::min(s.group(g0, 0), s.group(g0, dim - 1)) >= 0) {
        for (int64_t d = 0; d < dim; ++d) {
          const auto g = static_cast<size_t>(s.group(g0, d));
          dst[d * step] =
              dequant_offset(row[static_cast<size_t>(d)], offset.empty() ? 0.0 : offset[g] * offset_sign,
                             scale[g], DType::f32);
        }
        return;
      }
      for (int64_t d = 0; d < dim; ++d) {
        const auto g = static_cast<size_t>(s.group(g0, reversed ? dim - 1 - d : d));
        if (g >= scale.size()) {  // a faulty slot's scale past the tensor (block_size_doubled)
          dst[d * step] = std::numeric_limits<double>::quiet_NaN();
          continue;
        }
        const double off = offset.empty() ? 0.0 : offset[g] * offset_sign, sc = unit_scale ? 1.0 : scale[g];
        // The variant ascend_antiquant_fp16: in(in(code + offset) * scale) in an f16 input
        // dtype, f32 arithmetic rounded to bf16 in a bf16 one (AscendAntiQuant); FP8 and HiF8
        // codes in(code * in(scale)), the product in the input dtype (the Ascend 950's
        // vf_antiquant_w8.h, specs/fused_infer_attention_quant.md: the code's value is exact in
        // f16 and bf16, so its casts there change nothing).
        dst[d * step] =
            antiquant_in_input && fp8 ? round_to(p_.q, row[static_cast<size_t>(d)] * round_to(p_.q, sc))
            : antiquant_in_input
                ? (p_.q == DType::f16 ? round_f16(round_f16(row[static_cast<size_t>(d)] + off) * sc)
                                      : dequant_offset(row[static_cast<size_t>(d)], off, sc, p_.q))
                : dequant_offset(row[static_cast<size_t>(d)], off, sc, DType::f32);
      }
    };
  }

  // attentionOut (in double, before any output rounding), the log-sum-exp of every row at
  // its softmaxLse index (+inf: no visible key or not computed), over the K/V values, and for
  // full int8 the attentionOut atol (fia_full_quant_bound). With `originals`, over the
  // unquantized K/V instead (quant_err).
  struct Attention {
    std::vector<double> out, lse;
    double full_atol = 0;
    // Without `originals` and outside full int8: each element's bound before the output's
    // rounding and its NaN permission (ref/attention_bound.hpp), and each lse's bound.
    std::vector<uint16_t> bound;  // bf16 bits (QueryRow::bound)
    std::vector<double> lse_bound;
    NanPermits nan_ok;
  };

  // The precision steps of the case's variant: none for the golden, nor under full int8 (its
  // own P quantization), nor ascend_pfa_fp16_hp outside an fp16 prompt with innerPrecise bit 0.
  std::optional<PrecisionSteps> steps() const {
    using P = PrecisionSteps::P;
    // The fault inner_precise_ignored: the high-performance path where innerPrecise asks for
    // high precision (bit 0 = 0) on an fp16 prompt.
    if (fault_is("inner_precise_ignored") && p_.q == DType::f16 && !p_.ifa() && !(p_.inner_precise & 1) &&
        !p_.full.on)
      return fp16_high_performance_steps();
    if (variant().empty() || p_.full.on) return std::nullopt;
    if (auto shared = attention_steps(variant(), p_.q)) return shared;
    if (variant_is("ascend_p_cast") || variant_is("ascend_antiquant_fp16"))
      return PrecisionSteps{.p = P::unnormalized, .p_dtype = p_.q};
    if (variant_is("ascend_pfa_fp16_hp")) {
      if (!pfa_fp16_high_performance()) return std::nullopt;
      return fp16_high_performance_steps();
    }
    throw std::logic_error("aclnn.FusedInferAttentionScoreV3 has no variant " + variant());
  }
  static PrecisionSteps fp16_high_performance_steps() {
    return {.p = PrecisionSteps::P::unnormalized,
            .p_dtype = DType::f16,
            .score_dtype = DType::f16,
            .acc_dtype = DType::f16};
  }
  // innerPrecise bit 0 (high performance, the default) on an fp16 prompt: Ascend's prompt
  // kernel keeps scores, P and the running P @ V in fp16.
  bool pfa_fp16_high_performance() const { return p_.q == DType::f16 && (p_.inner_precise & 1) && !p_.ifa(); }

  // How far a permitted implementation's K~, V~, P and scores may lie from the golden's
  // (specs/fused_infer_attention_score.md "Tolerance policy"): Ascend's antiquant rounds
  // fp16(fp16(code + offset) * scale) in its prompt kernel (bf16: f32, then bf16), its
  // incremental kernel keeps finer int8 slices; P is cast to the input dtype (ties away)
  // before the second matmul, which the golden does not; with innerPrecise bit 0 an fp16
  // prompt keeps its scores, their scaling, P, the running P @ V and the final division in fp16.
  PermittedDeltas permitted() const {
    const double u = unit_roundoff(p_.q), sub = subnormal_half_spacing(p_.q);
    const double kv = p_.quant.on ? 2 * u : 0;
    PermittedDeltas d{
        .k = kv, .v = kv, .v_abs = p_.quant.on ? 2 * sub : 0, .p = 2 * u, .p_abs = 2 * sub, .s = 0x1p-22};
    if (pfa_fp16_high_performance()) {
      d.s += 2 * u;
      d.acc = u;
      d.acc_block = 128;
    }
    return d;
  }
  Attention attention(const TensorSet& in, const std::vector<int64_t>& table,
                      const std::array<std::vector<double>, 2>& prefix,
                      const std::array<FiaOriginals, 2>* originals) const {
    const Tensor& query = in.at("query");
    const Tensor* mask = in.has("attenMask") ? &in.at("attenMask") : nullptr;
    const Tensor* pse = in.has("pseShift") ? &in.at("pseShift") : nullptr;
    const int64_t G = p_.N / p_.Nkv;
    const Strides qs = p_.query_strides(), qrs = p_.query_strides(p_.rope), ps = p_.pse_strides();
    const Tensor* q_rope = p_.rope ? &in.at("queryRope") : nullptr;
    const int64_t DK = p_.D + p_.rope;  // MLA: the rope channels extend the contraction
    const Antiquant scales = antiquant(in);
    const bool head_mod = fault_is("gqa_head_mod"), group_of_8 = fault_is("gqa_group_past_8_reuses_query");
    const auto head = [&](int64_t hk, int64_t j) { return head_mod ? j * p_.Nkv + hk : hk * G + j; };
    const int64_t late = fault_is("band_start_late") ? 1 : 0,
                  diagonal = fault_is("band_end_exclusive") ? 0 : 1;
    const int64_t key_limit = fault_is("keys_past_512_dropped") ? 512 : std::numeric_limits<int64_t>::max();
    std::vector<double> out(shape_numel(p_.out_shape()), 0.0), lse(static_cast<size_t>(p_.T() * p_.N), kInf);
    double full_atol = 0;
    const bool bounds = !originals && !p_.full.on;
    const std::optional<PrecisionSteps> variant_steps = steps();
    std::vector<uint16_t> bound(bounds ? out.size() : 0, 0);
    std::vector<double> lse_bound(bounds ? lse.size() : 0, 0.0);
    NanPermits nan_ok;
    for (int64_t b = 0; b < p_.B; ++b) {
      const int64_t S1b = p_.s1b[b];
      const Band band = p_.band[b];
      for (int64_t hk = 0; hk < p_.Nkv; ++hk) {
        const int64_t S2b = fault_is("last_block_len_mod") && p_.paged()
                                ? keys_last_page_mod(p_.keys(b), p_.block_size)
                                : p_.keys(b);
        // Rows (i, h) of the kv head's G query heads, position-major. Row i sees the keys
        // j of its band, band.lo <= j - i <= band.hi; the mask and pse act in the bias.
        std::vector<double> qv(static_cast<size_t>(S1b * G * DK));
        std::vector<QueryRow> rows;
        for (int64_t i = 0; i < S1b; ++i)
          for (int64_t j = 0; j < G; ++j) {
            // hq: the head whose query the row takes (a pack-GQA tile of 8 heads reuses
            // member j % 8's past the 8th under the fault).
            const int64_t h = head(hk, j), hq = group_of_8 && j >= 8 ? head(hk, j % 8) : h;
            double* q = &qv[rows.size() * DK];
            for (int64_t d = 0; d < p_.D; ++d)
              q[d] = query.get(static_cast<size_t>(qs.at(b, p_.query_row(b, i), hq, d)));
            for (int64_t d = 0; d < p_.rope; ++d)
              q[p_.D + d] = q_rope->get(static_cast<size_t>(qrs.at(b, p_.query_row(b, i), hq, d)));
            const int64_t begin = std::clamp<int64_t>(i + band.lo + late, 0, S2b);
            const int64_t end = std::clamp<int64_t>(std::min(i + band.hi + diagonal, key_limit), 0, S2b);
            const auto at = static_cast<size_t>(p_.out_vector(b, i, h) * p_.Dv);
            rows.push_back({.q = q,
                            .begin = begin,
                            .end = std::max(begin, end),
                            .out = &out[at],
                            .bound = bounds ? &bound[at] : nullptr,
                            .nan_ok = bounds ? &nan_ok : nullptr,
                            .out_index = static_cast<int64_t>(at)});
          }
        AttentionBlock a{.dk = DK,
                         .dv = p_.Dv,
                         .scale = p_.scale,
                         .empty = EmptyRow::zeros,
                         .fault = attention_fault(fault()),
                         .threads = args().threads()};
        std::vector<double> row_max;
        if (p_.full.on) {  // s = scaleValue * deqScale1 * (q . k); P as int8 codes (spec "Full int8")
          const double qs1 = in.at("quantScale1").get(0);
          a.scale = p_.scale * in.at("deqScale1").get(0);
          a.quantize_p = [qs1, away = fault_is("p_code_half_away")](double p) {
            return away ? std::clamp(std::round(p * qs1), 0.0, 127.0) : fia_p_code(p, qs1);
          };
          row_max.resize(rows.size());
          a.row_max = row_max.data();
        }
        if ((mask && p_.mask_applies()) || pse)
          a.bias = [&](int64_t r, int64_t begin, int64_t end, double* s) {
            const int64_t i = r / G, h = head(hk, r % G);
            for (int64_t j = begin; j < end; ++j) {
              if (masked(mask, b, i, j))
                s[j - begin] = -kInf;
              else if (pse)
                s[j - begin] +=
                    pse->get(static_cast<size_t>(ps.at(b, p_.q_start[b] + i, h, p_.kv_start[b] + j)));
            }
            return 0.0;  // the bias's roundings are PermittedDeltas::s
          };
        std::vector<double> row_lse(rows.size()), row_lse_bound(rows.size());
        if (bounds) {
          a.permitted = permitted();
          a.lse_bound = row_lse_bound.data();
        }
        if (variant_steps && !originals) a.steps = &*variant_steps;
        const RowSource values =
            kv_rows(in, table, 1, b, hk, prefix, scales, originals ? &(*originals)[1] : nullptr);
        attend(a, rows, kv_rows(in, table, 0, b, hk, prefix, scales, originals ? &(*originals)[0] : nullptr),
               values, row_lse.data());
        if (fault_is("pv_reads_past_sequence") && p_.paged())  // the last block's poisoned tail, weight 0
          past_sequence_nan(rows, values, p_.Dv, S2b,
                            (S2b + p_.block_size - 1) / p_.block_size * p_.block_size);
        if (p_.full.on)
          full_atol = std::max(full_atol, fia_full_quant_bound(in.at("quantScale1").get(0), p_.Dv, rows,
                                                               values, S2b, row_max, row_lse));
        for (size_t r = 0; r < rows.size(); ++r) {
          const int64_t i = static_cast<int64_t>(r) / G, h = head(hk, static_cast<int64_t>(r) % G);
          if (std::isinf(row_lse[r]) && rows[r].begin < rows[r].end && p_.inner_precise < 2 &&
              fault().empty()) {
            // The generator never makes one; an attenMask or pseShift from a file may, and so do
            // keys, a query or scales from files that hold NaN or infinity (no finite score).
            bool all_masked = mask && p_.mask_applies();
            for (int64_t j = rows[r].begin; all_masked && j < rows[r].end; ++j)
              all_masked = masked(mask, b, i, j);
            throw std::runtime_error(
                "row " + std::to_string(i) + " of batch " + std::to_string(b) +
                (all_masked
                     ? " has every key masked, which the document leaves undefined without innerPrecise 2/3"
                     : " has no finite score though keys are visible to it: its query, keys, "
                       "antiquant scales or pseShift hold NaN or infinity (check the input files)"));
          }
          lse[p_.lse_index(b, i, h)] = row_lse[r];
          if (bounds) lse_bound[p_.lse_index(b, i, h)] = row_lse_bound[r];
        }
      }
    }
    return {.out = std::move(out),
            .lse = std::move(lse),
            .full_atol = full_atol,
            .bound = std::move(bound),
            .lse_bound = std::move(lse_bound),
            .nan_ok = std::move(nan_ok)};
  }

  std::vector<Expected> reference(const TensorSet& in) const override {
    std::vector<int64_t> table;
    if (p_.paged())
      for (size_t i = 0; i < in.at("blockTable").numel(); ++i)
        table.push_back(static_cast<int64_t>(in.at("blockTable").get(i)));
    std::array<std::vector<double>, 2> prefix;
    for (int side = 0; side < 2 && p_.has_prefix(); ++side) {
      const Tensor& t = in.at(side == 0 ? "keySharedPrefix" : "valueSharedPrefix");
      for (size_t i = 0; i < t.numel(); ++i) prefix[side].push_back(t.get(i));
    }
    Attention a = attention(in, table, prefix, nullptr);
    std::vector<double> out_exact = std::move(a.out), row_lse = std::move(a.lse);
    // Accuracy attribution: the same attention on the unquantized K/V.
    CaseFigures figures;
    if (p_.quant.on && figures_wanted() && generated("key") && generated("value")) {
      const std::array<FiaOriginals, 2> originals{FiaOriginals(p_, args(), 0), FiaOriginals(p_, args(), 1)};
      const auto plain = attention(in, table, prefix, &originals);
      figures = {{"quant_err", quant_error_text(out_exact, plain.out)}};
    }
    std::optional<Tolerance> full_tolerance;
    if (p_.full.on) full_tolerance = full_int8_tolerance(in, out_exact, a.full_atol);
    Expected out = p_.post.on ? fia_post_quantize(p_, args(), in, row_lse, std::move(out_exact),
                                                  fault_is("post_quant_half_away"))
                              : Expected::rounded(in.at("attentionOut"), std::move(out_exact));
    if (!p_.post.on && !a.bound.empty())
      set_attention_bound(out, p_.out_dtype(), std::move(a.bound), a.nan_ok);
    out.data_tolerance = full_tolerance;
    out.figures = std::move(figures);
    std::vector<double> lse_out = p_.lse ? row_lse : std::vector<double>{0.0};
    for (double& x : lse_out)  // the softmaxLse faults
      if (fault_is("lse_log2") && std::isfinite(x))
        x /= std::log(2.0);
      else if (fault_is("empty_lse_zero") && std::isinf(x))
        x = 0;
    Expected lse = Expected::rounded(in.at("softmaxLse"), std::move(lse_out));
    if (p_.lse && !a.lse_bound.empty()) set_attention_bound(lse, DType::f32, a.lse_bound);
    accept_ifa_empty_lse(lse);
    return expected_list(out, lse);
  }

  // The IFA kernel (Q_S 1) writes softmaxLse f32(−3.4e38) for a batch with no keys
  // (InitAllZeroOutput) where the golden, as the PFA kernel, says +inf: the document is
  // silent, so both are accepted, the IFA value as the alternate (spec Decisions).
  void accept_ifa_empty_lse(Expected& lse) const {
    if (!p_.lse || !p_.ifa()) return;
    for (int64_t b = 0; b < p_.B; ++b)
      if (p_.keys(b) == 0)
        for (int64_t h = 0; h < p_.N; ++h)
          lse.set_alternate(static_cast<size_t>(p_.lse_index(b, 0, h)), kIfaEmptyLse);
  }

  // Keys inside the band of every computed row (the mask's data is not counted).
  double flops() const override {
    double pairs = 0;
    for (int64_t b = 0; b < p_.B; ++b)
      for (int64_t i = 0; i < p_.s1b[b]; ++i) {
        const int64_t first = std::max<int64_t>(0, i + p_.band[b].lo),
                      last = std::min<int64_t>(p_.keys(b) - 1, i + p_.band[b].hi);
        pairs += static_cast<double>(std::max<int64_t>(0, last - first + 1));
      }
    return attention_flops(pairs * static_cast<double>(p_.N), p_.D + p_.rope, p_.Dv);
  }

  // Full int8's attentionOut tolerance: `atol` (the rows' bound) with rtol 2^-8 for the fp16
  // intermediates of P.V and the division; an INT8 output takes that times the largest
  // |quantScale2|, in whole codes, plus one.
  Tolerance full_int8_tolerance(const TensorSet& in, const std::vector<double>& out_exact,
                                double atol) const {
    const Tolerance x{.atol = atol, .rtol = 1.0 / 256};
    if (!p_.post.on) return x;
    double out_max = 0, qs2_max = 0;
    for (double v : out_exact) out_max = std::max(out_max, std::fabs(v));
    for (double v : in.at("quantScale2").values()) qs2_max = std::max(qs2_max, std::fabs(v));
    return {.atol = std::floor(qs2_max * (x.atol + x.rtol * out_max)) + 1};
  }

  Tolerance default_tolerance(const std::string& output) const override {
    if (output == "softmaxLse") {
      if (!p_.lse) return {};
      // Full int8: the device's scores are fp16 (2^-10 of lse) and its sums of fp16 exps.
      return p_.full.on ? Tolerance{.atol = 1e-3, .rtol = 1.0 / 512} : Tolerance{.atol = 1e-4, .rtol = 1e-5};
    }
    if (p_.full.on)  // depends on the data: the reference gives it (full_int8_tolerance)
      throw std::logic_error("full int8's attentionOut tolerance is the reference's");
    if (p_.post.on) return {};  // int8 codes: exact, or the boundary alternate
    return attention_tolerance();
  }

  Tolerance attention_tolerance() const {
    if (p_.q == DType::f16) return {.atol = 1e-3, .rtol = 1.0 / 1024};
    if (p_.q == DType::bf16) return {.atol = 8e-3, .rtol = 1.0 / 128};
    return {.atol = 2e-5, .rtol = 1e-4};
  }

  void check_device(const DeviceInfo& dev) const override { check_attention_device(dev, fia_heads(p_)); }

  double run_vulkan(Runtime& rt, TensorSet& io) const override { return fia_run_vulkan(p_, args(), rt, io); }

 private:
  FiaParams p_;
};

class FiaOperator final : public Operator {
 public:
  const Signature& signature() const override { return fia_signature(); }
  std::unique_ptr<OpCase> instantiate(Args a) const override {
    FiaParams p = parse_fia_params(a);
    return std::make_unique<FiaCase>(std::move(a), std::move(p));
  }
};

}  // namespace

std::unique_ptr<Operator> make_fused_infer_attention_operator() { return std::make_unique<FiaOperator>(); }

}  // namespace kvbench
