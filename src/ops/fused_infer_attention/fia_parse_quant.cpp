// aclnn.FusedInferAttentionScoreV3: the quantized modes' attributes checked against the
// document's constraints (specs/fused_infer_attention_quant.md): KV antiquant (int8, int4,
// FP4, FP8), post-quant int8 output and full int8. The other constraints: fia_parse.cpp.
#include <string>

#include "core/float_format.hpp"
#include "ops/fused_infer_attention/fia_params.hpp"

namespace kvbench {
namespace {

// Whether some row of batch b is not computed (rows outside the band, a batch without keys,
// masked_rows), as the document's quantOffset2 interception lists them.
bool has_uncomputed_rows(const FiaParams& p, int64_t b) {
  const int64_t s1 = p.s1b[b], s2 = p.keys(b);
  const bool gaps = p.ifa()                         ? false
                    : p.sparse == 0 && p.has_mask() ? s1 - s2 - p.pre > 0 || p.next < 0
                    : p.sparse == 3                 ? s2 - s1 < 0
                    : p.sparse == 4                 ? p.pre < 0 || p.next + s2 - s1 < 0
                                                    : false;
  return gaps || (s1 > 0 && s2 == 0) || p.masked_rows > 0;
}

}  // namespace

// KV antiquant: the modes the document defines, and the combinations it allows.
void parse_fia_antiquant(Args& c, FiaParams& p) {
  FiaAntiquant& a = p.quant;
  if (p.q == DType::i8) {  // full int8: K/V are int8 codes under deqScale1/deqScale2, not antiquant
    c.dtype("key", DType::i8, {DType::i8});
    c.require_same_dtype("value", DType::i8, "key");
    for (const char* k :
         {"keyAntiquantMode", "valueAntiquantMode", "antiquant_per_tensor", "antiquant_offset",
          "antiquantMode", "antiquant_combined", "antiquant_scale_spread"})
      if (c.written(k))
        c.fail(k,
               std::string(k) + " is KV antiquant's (a float query); with an INT8 query K/V are full int8");
    if (!c.written("valueAntiquantMode")) c.resolve("valueAntiquantMode", 0);
    return;
  }
  const DType kv =
      c.dtype("key", p.q,
              {p.q, DType::i8, DType::s4, DType::f4e2m1, DType::f4e1m2, DType::f8e4m3fn, DType::hifloat8});
  c.require_same_dtype("value", kv, "key");
  a.key_mode = static_cast<int>(c.integer("keyAntiquantMode"));
  if (!c.written("valueAntiquantMode")) c.resolve("valueAntiquantMode", a.key_mode);
  a.value_mode = static_cast<int>(c.integer("valueAntiquantMode"));
  a.per_tensor = c.boolean("antiquant_per_tensor");
  a.combined = c.boolean("antiquant_combined");
  a.offset = c.boolean("antiquant_offset");
  a.on = kv != p.q;
  a.codes = kv;
  if (!a.on) {
    for (const char* k :
         {"keyAntiquantMode", "valueAntiquantMode", "antiquant_per_tensor", "antiquant_offset",
          "antiquantMode", "antiquant_combined", "antiquant_scale_spread"})
      if (c.written(k))
        c.fail(k, std::string(k) +
                      " needs int8/int4/FP4/FP8/HiF8 key and value (dtypes key, value: i8, s4, f4e2m1, "
                      "f4e1m2, f8e4m3fn, hifloat8)");
    return;
  }
  // Per-token-group (mode 6): FP4 codes with FLOAT8_E8M0 scales of shape (1, B, N, S, D/32),
  // no offset, Q_S = 1 (the document: "使能per-token-group模式 … 数据类型固定为FLOAT8_E8M0,
  // 不支持带antiquantOffset。当key、value数据类型为FLOAT4_E1M2、FLOAT4_E2M1时支持").
  if (a.fp4() != (a.key_mode == 6))
    c.fail(a.fp4() ? "key" : "keyAntiquantMode",
           "FP4 key/value (f4e2m1, f4e1m2) go with keyAntiquantMode 6 (per-token-group) and only with it");
  if (a.fp4()) {
    if (a.value_mode != 6)
      c.fail("valueAntiquantMode", "per-token-group (mode 6) takes valueAntiquantMode 6 as well");
    if (!p.ifa()) c.fail("S1", "per-token-group antiquant is documented for Q_S = 1 only");
    if (a.offset)
      c.fail("antiquant_offset",
             "per-token-group antiquant takes no offset (the document: \"不支持带antiquantOffset\")");
    if (a.combined || a.per_tensor)
      c.fail(a.combined ? "antiquant_combined" : "antiquant_per_tensor",
             "per-token-group antiquant takes the separate parameters only");
    if (p.D % 32 != 0 || p.Dv % 32 != 0)
      c.fail(p.D % 32 != 0 ? "D" : "Dv",
             "per-token-group scales cover 32 channels: D and Dv are multiples of 32");
  }
  // FP8 (FLOAT8_E4M3FN) K/V: aclnnFusedInferAttentionScoreV5's Ascend 950 modes 0, 1 and 4,
  // no offset (specs/fused_infer_attention_quant.md "FP8 KV antiquant").
  if (a.fp8()) {
    if (a.key_mode != 0 && a.key_mode != 1 && a.key_mode != 4)
      c.fail("keyAntiquantMode",
             "FP8 (f8e4m3fn) key/value take modes 0 (per-channel), 1 (per-token) and 4 "
             "(per-token in page-attention blocks)");
    if (a.offset)
      c.fail("antiquant_offset",
             "FP8 key/value take no offset (the V5 document: FLOAT8_E4M3FN without "
             "antiquantOffset)");
    if (a.combined || a.per_tensor)
      c.fail(a.combined ? "antiquant_combined" : "antiquant_per_tensor",
             "FP8 key/value take the separate per-channel or per-token parameters only");
  }
  // HIFLOAT8 K/V: the V3/V5 documents' Ascend 950 antiquant, per-channel only, scales in the
  // query's dtype, no offset (specs/fused_infer_attention_quant.md "HIFLOAT8 KV antiquant").
  if (a.hif8()) {
    if (p.q != DType::f16 && p.q != DType::bf16)
      c.fail(
          "query",
          "HIFLOAT8 key/value take an FP16 or BF16 query (the document: 伪量化 query FLOAT16/BFLOAT16 with "
          "key/value HIFLOAT8)");
    if (a.key_mode != 0)
      c.fail("keyAntiquantMode",
             "HIFLOAT8 key/value take per-channel scales only, keyAntiquantMode 0 (the document: "
             "\"per-channel模式，其支持的数据类型为INT8、INT4(INT32)、HIFLOAT8、FLOAT8_E4M3FN\")");
    if (a.value_mode != 0)
      c.fail("valueAntiquantMode",
             "HIFLOAT8 key/value take per-channel scales only, valueAntiquantMode 0 (the document)");
    if (a.offset)
      c.fail("antiquant_offset",
             "HIFLOAT8 key/value take no offset (the document: \"当key/value的数据类型为FLOAT8_E4M3FN、"
             "HIFLOAT8、FLOAT4_E2M1时，不支持offset\")");
    if (a.per_tensor)
      c.fail("antiquant_per_tensor",
             "HIFLOAT8 key/value take per-channel scales only, not per-tensor (the document)");
    if (a.combined)
      c.fail("antiquant_combined",
             "HIFLOAT8 key/value take the separate keyAntiquantScale/valueAntiquantScale only");
    if (p.paged() && p.block_size % 32 != 0)
      c.fail(
          "blockSize",
          "HIFLOAT8 key/value with page attention take a blockSize that is a multiple of 32 (the document)");
    if (p.N > 256)
      c.fail("numHeads", "HIFLOAT8 key/value antiquant takes N <= 256 (the document: 伪量化 N <= 256)");
  }
  if (p.tnd) c.fail("inputLayout", "KV antiquant with TND layouts is not built");
  if (a.combined) {  // the legacy parameters: one mode for both
    for (const char* k : {"keyAntiquantMode", "valueAntiquantMode"})
      if (c.written(k))
        c.fail(k,
               std::string(k) + " belongs to the separate parameters; the combined ones take antiquantMode");
    a.key_mode = a.value_mode = static_cast<int>(c.integer("antiquantMode"));
    if (kv != DType::i8)
      c.fail("antiquant_combined", "the combined antiquant parameters take int8 KV only (the document)");
    if (p.q != DType::f16)
      c.fail("antiquant_combined", "the combined antiquant parameters take an f16 query only (the document)");
    if (a.key_mode == 0 && !a.per_tensor && p.D != p.Dv)
      c.fail("Dv", "combined per-channel scales need Dv = D");
  } else if (c.written("antiquantMode")) {
    c.fail("antiquantMode", "antiquantMode belongs to the combined parameters (antiquant_combined)");
  }
  if (p.has_prefix())
    c.fail(
        "S_prefix",
        "KV antiquant with a shared prefix is not built (per-token scales over the prefix are undocumented)");
  if (a.value_mode != a.key_mode && !(a.key_mode == 0 && a.value_mode == 1))
    c.fail("valueAntiquantMode",
           "valueAntiquantMode equals keyAntiquantMode, except key 0 (per-channel) with value 1 (per-token)");
  if (!p.ifa() && a.key_mode > 1)
    c.fail("keyAntiquantMode", "with Q_S > 1 only modes 0 and 1 (the document)");
  if ((a.key_mode == 4 || a.key_mode == 5) && !p.paged())
    c.fail("keyAntiquantMode", "modes 4 and 5 keep their scales in page-attention blocks: set blockSize");
  if (a.per_tensor && a.key_mode != 0)
    c.fail("antiquant_per_tensor", "per-tensor is mode 0 with a [1] scale");
  a.spread = c.number("antiquant_scale_spread");
  if (a.spread != 1 && !a.per_channel(0) && !a.per_channel(1))
    c.fail("antiquant_scale_spread",
           "antiquant_scale_spread spreads per-channel scales: it needs keyAntiquantMode 0 (or the combined "
           "antiquantMode 0) without antiquant_per_tensor");
  if (kv == DType::s4) {
    const bool int4_mode = a.key_mode == 0 || a.key_mode == 1 || a.key_mode == 3;
    if (!int4_mode)
      c.fail("keyAntiquantMode", "int4 KV takes modes 0 (per-channel), 1, 3 and the key 0 / value 1 pair");
    if (a.per_tensor) c.fail("antiquant_per_tensor", "int4 KV has no per-tensor mode");
    if (p.paged()) c.fail("blockSize", "int4 KV has no page attention (the document)");
    if (p.D % 8 != 0 || p.Dv % 8 != 0)
      c.fail(p.D % 8 != 0 ? "D" : "Dv", "int4 KV packs 8 values per int32: D and Dv are multiples of 8");
  }
}

// Post-quant int8 output, and the combinations the document intercepts (spec).
void parse_fia_post_quant(Args& c, FiaParams& p) {
  FiaPostQuant& q = p.post;
  q.on = p.q == DType::i8 ? c.dtype("attentionOut", DType::f16, {DType::f16, DType::i8}) == DType::i8
                          : c.dtype("attentionOut", p.q, {p.q, DType::i8}) == DType::i8;
  q.per_channel = c.boolean("postquant_per_channel");
  q.offset = c.boolean("postquant_offset");
  q.ties = c.boolean("postquant_ties");
  if (!q.on && p.q == DType::i8 && q.offset)
    c.fail("postquant_offset",
           "INT8 in, FLOAT16 out: quantOffset2 must be absent (the document: 报错并返回)");
  if (!q.on) {
    for (const char* k : {"postquant_per_channel", "postquant_offset", "postquant_ties"})
      if (c.written(k)) c.fail(k, std::string(k) + " needs an int8 output (dtypes: attentionOut i8)");
    return;
  }
  q.dtype = c.dtype("quantScale2", DType::f32,
                    p.q == DType::bf16 ? std::initializer_list<DType>{DType::f32, DType::bf16}
                                       : std::initializer_list<DType>{DType::f32});
  if (p.quant.codes == DType::s4) c.fail("attentionOut", "int4 KV takes no post-quant (the document)");
  if (p.quant.fp4())
    c.fail("attentionOut",
           "FP4 KV takes no post-quant (the document: \"FLOAT4_E2M1伪量化场景不支持后量化\")");
  if (p.quant.fp8() && p.quant.key_mode != 0)
    c.fail("attentionOut", "FP8 KV with per-token scales (modes 1, 4) takes no post-quant (the V5 document)");
  if (q.ties && p.quant.on)
    c.fail("postquant_ties", "postquant_ties writes the value tensor: it takes no KV antiquant");
  if (q.offset && p.masked_rows)
    c.fail("postquant_offset", "quantOffset2 with fully masked rows is intercepted by the document");
  if (p.sparse == 4 && (p.pre < 0 || p.next < 0))
    c.fail("attentionOut",
           "an int8 output takes no band (sparseMode 4) with a negative preTokens/nextTokens (the document)");
  if (q.per_channel && p.left_padded())
    c.fail("postquant_per_channel", "per-channel post-quant takes no left padding (the document)");
  if (q.per_channel && p.lse)
    c.fail("postquant_per_channel",
           "per-channel post-quant takes no softmaxLse (the document: Ring Attention)");
  if (q.offset)  // rows the operator does not compute would get the offset: intercepted
    for (int64_t b = 0; b < p.B; ++b)
      if (has_uncomputed_rows(p, b))
        c.fail("postquant_offset", "quantOffset2 with rows the operator does not compute (batch " +
                                       std::to_string(b) + ") is intercepted by the document");
}

// Full int8 (全量化): the document's presence rules for deqScale1, quantScale1, deqScale2
// and quantScale2 ("int8量化相关入参数量与输入、输出数据格式的综合限制"), and its exclusions.
void parse_fia_full_quant(Args& c, FiaParams& p) {
  FiaFullQuant& f = p.full;
  f.on = p.q == DType::i8;
  const bool out8 = p.post.on;
  for (const char* k : {"with_deqScale1", "with_quantScale1", "with_deqScale2"})
    if (!c.written(k)) c.resolve(k, f.on);
  if (!c.written("with_quantScale2")) c.resolve("with_quantScale2", out8);
  f.deq1 = c.boolean("with_deqScale1");
  f.qs1 = c.boolean("with_quantScale1");
  f.deq2 = c.boolean("with_deqScale2");
  f.qs2 = c.boolean("with_quantScale2");
  const char* first_given = f.deq1   ? "with_deqScale1"
                            : f.qs1  ? "with_quantScale1"
                            : f.deq2 ? "with_deqScale2"
                                     : nullptr;
  const char* first_missing = !f.deq1   ? "with_deqScale1"
                              : !f.qs1  ? "with_quantScale1"
                              : !f.deq2 ? "with_deqScale2"
                                        : nullptr;
  if (!f.on) {
    if (first_given)
      c.fail(first_given,
             "deqScale1, quantScale1 and deqScale2 need an INT8 query, key and value (the document: with a "
             "FLOAT16 or BFLOAT16 input they must be absent)");
    if (out8 && !f.qs2) c.fail("with_quantScale2", "an INT8 output needs quantScale2 (the document)");
    if (!out8 && f.qs2)
      c.fail("with_quantScale2", "quantScale2 needs an INT8 output (dtypes: attentionOut i8)");
    return;
  }
  if (first_missing)
    c.fail(first_missing,
           std::string("INT8 query, key and value need deqScale1, quantScale1 and deqScale2 (the document)") +
               (out8 ? ", and with an INT8 output quantScale2" : ""));
  if (out8 && !f.qs2)
    c.fail(
        "with_quantScale2",
        "INT8 in and INT8 out: the document requires quantScale2 with deqScale1, quantScale1 and deqScale2");
  if (!out8 && f.qs2)
    c.fail("with_quantScale2", "INT8 in, FLOAT16 out: quantScale2 must be absent (the document: 报错并返回)");
  // The document's exclusions.
  if (p.ifa())
    c.fail("S1",
           "INT8 query, key and value with Q_S = 1 are not supported (the document: "
           "\"query、key、value输入类型均为INT8的场景暂不支持\")");
  if (p.layout != "BSH" && p.layout != "BSND" && p.layout != "BNSD" && p.layout != "BNSD_BSND")
    c.fail("inputLayout",
           "full int8 takes BSH, BSND, BNSD or BNSD_BSND (the document: "
           "\"inputLayout仅支持BSH、BNSD、BSND、BNSD_BSND\")");
  if (p.paged())
    c.fail("blockSize",
           "page attention takes no INT8 query (the document: \"page attention全量化场景...不支持query "
           "dtype为INT8\")");
  if (p.has_prefix())
    c.fail("S_prefix",
           "a shared prefix takes no all-INT8 query, key and value (the document: "
           "\"prefix场景,不支持输入qkv全部为int8的情况\")");
  // With an INT8 output the kernel writes no row it does not compute (Decision "Full int8").
  if (out8)
    for (int64_t b = 0; b < p.B; ++b)
      if (has_uncomputed_rows(p, b) || p.s1b[b] < p.S1 || p.left_padded())
        c.fail(p.left_padded() ? (p.q_pad >= 0 ? "queryPaddingSize" : "kvPaddingSize") : "attentionOut",
               "INT8 in and INT8 out: every row must be computed (batch " + std::to_string(b) +
                   " has rows the kernel leaves unwritten: padding, no visible key or masked rows)");
}

}  // namespace kvbench
