// aclnn.FusedInferAttentionScoreV3: a case file's attributes checked against the operator's
// constraints (spec "Constraints"); the Atlas A2 limits ("ascend_limits") are in fia_ascend_limits.cpp.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/float_format.hpp"
#include "ops/fused_infer_attention/fia_params.hpp"

namespace kvbench {
namespace {

struct LayoutInfo {
  const char* name;
  FiaOrder in, out;
  bool bsh, tnd;
};
constexpr LayoutInfo kLayouts[] = {
    {"BSH", FiaOrder::BSND, FiaOrder::BSND, true, false},
    {"BSND", FiaOrder::BSND, FiaOrder::BSND, false, false},
    {"BNSD", FiaOrder::BNSD, FiaOrder::BNSD, false, false},
    {"BNSD_BSND", FiaOrder::BNSD, FiaOrder::BSND, false, false},
    {"BSH_NBSD", FiaOrder::BSND, FiaOrder::NBSD, true, false},
    {"BSND_NBSD", FiaOrder::BSND, FiaOrder::NBSD, false, false},
    {"BNSD_NBSD", FiaOrder::BNSD, FiaOrder::NBSD, false, false},
    {"TND", FiaOrder::TND, FiaOrder::TND, false, true},
    {"NTD_TND", FiaOrder::NTD, FiaOrder::TND, false, true},
    {"TND_NTD", FiaOrder::TND, FiaOrder::NTD, false, true},
};

bool one_of(const std::string& s, std::initializer_list<const char*> list) {
  for (const char* x : list)
    if (s == x) return true;
  return false;
}

// Batch b's entry of a per-batch array: length 1 is broadcast, longer gives its first B.
int64_t per_batch(const std::vector<int64_t>& a, int64_t b) {
  return a.size() == 1 ? a[0] : a[static_cast<size_t>(b)];
}

// The memory the case needs at least, from its numbers alone, before any list of B entries
// exists (a 200-byte file with B = 2^27 must not take 6 GiB to be rejected): the query and
// the output (2 copies each, the output's golden 25 bytes an element), unpaged K/V at a byte
// an element, and the per-batch lengths, starts and bands (48 bytes a batch). The exact
// check of every tensor follows once the case is built (instantiate_case).
void check_memory_before_lists(Args& c, const FiaParams& p) {
  const char* batch = p.tnd ? "actualSeqLengths" : "B";
  const char* rows = p.tnd ? "actualSeqLengths" : "S1";
  const Args::Size B{batch, p.B}, S1{rows, p.S1}, N{"numHeads", p.N}, D{"D", p.D}, Dv{"Dv", p.Dv};
  const uint64_t q_bytes = dtype_bits(p.q) / 8;
  std::vector<Args::MemoryTerm> terms{{{B, S1, N, D}, 2 * q_bytes}, {{B, S1, N, Dv}, 2 + 25}, {{B}, 48}};
  if (!p.paged() && !p.tnd) {
    const Args::Size S2{"S2", p.S2}, Nkv{"numKeyValueHeads", p.Nkv};
    terms.push_back({{B, S2, Nkv, D}, 1});
    terms.push_back({{B, S2, Nkv, Dv}, 1});
  }
  c.require_memory(terms,
                   "the query, output, K/V and per-batch lengths of " + std::to_string(p.B) + " batches");
}

void parse_lengths(Args& c, FiaParams& p) {
  if (c.written("actualSeqLengths")) p.act_q = c.integers("actualSeqLengths");
  if (c.written("actualSeqLengthsKv")) p.act_kv = c.integers("actualSeqLengthsKv");
  if (p.tnd) {
    for (const char* k : {"B", "S1", "S2"})
      if (c.written(k))
        c.fail(k, std::string(k) + " comes from the actual lengths with inputLayout " + p.layout +
                      "; do not write it");
    if (p.act_q.empty())
      c.fail("actualSeqLengths", "inputLayout " + p.layout + " needs actualSeqLengths (cumulative ends)");
    if (p.act_kv.empty())
      c.fail("actualSeqLengthsKv", "inputLayout " + p.layout + " needs actualSeqLengthsKv");
    p.B = static_cast<int64_t>(p.act_q.size());
    if (p.act_kv.size() != p.act_q.size())
      c.fail("actualSeqLengthsKv", "with inputLayout " + p.layout +
                                       " actualSeqLengthsKv has one entry per batch, as actualSeqLengths (" +
                                       std::to_string(p.B) + ")");
    p.S1 = p.act_q.back();
    check_memory_before_lists(c, p);
    const bool kv_cumulative = !p.paged();  // page attention: per-batch kv lengths
    int64_t prev_q = 0, prev_kv = 0;
    for (int64_t b = 0; b < p.B; ++b) {
      const int64_t q = p.act_q[b], kv = p.act_kv[b];
      if (q < prev_q)
        c.fail_at("actualSeqLengths", static_cast<size_t>(b), "cumulative ends must not decrease");
      if (kv_cumulative && kv < prev_kv)
        c.fail_at("actualSeqLengthsKv", static_cast<size_t>(b), "cumulative ends must not decrease");
      p.s1b.push_back(q - prev_q);
      p.q_start.push_back(prev_q);
      p.s2b.push_back(kv_cumulative ? kv - prev_kv : kv);
      p.kv_start.push_back(kv_cumulative ? prev_kv : 0);
      prev_q = q;
      if (kv_cumulative) prev_kv = kv;
    }
    p.S1 = p.act_q.back();
    p.S2 = kv_cumulative ? p.act_kv.back() : *std::max_element(p.act_kv.begin(), p.act_kv.end());
    if (p.S1 == 0) c.fail("actualSeqLengths", "the query has no token (T = 0)");
    c.resolve("B", p.B);
    c.resolve("S1", p.S1);
    c.resolve("S2", p.S2);
    return;
  }
  for (const char* k : {"B", "S1", "S2"})
    if (!c.written(k)) c.fail(k, std::string(k) + " is required with inputLayout " + p.layout);
  p.B = c.integer("B");
  p.S1 = c.integer("S1");
  p.S2 = c.integer("S2");
  check_memory_before_lists(c, p);
  auto check = [&](const char* key, const std::vector<int64_t>& a, int64_t limit, const char* what) {
    if (!c.written(key)) return;
    if (a.size() != 1 && static_cast<int64_t>(a.size()) < p.B)
      c.fail(key, std::string(key) + " needs 1 entry (broadcast) or at least B = " + std::to_string(p.B));
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] > limit)
        c.fail_at(key, i, std::string("a length above ") + what + " = " + std::to_string(limit));
  };
  check("actualSeqLengths", p.act_q, p.S1, "S1");
  check("actualSeqLengthsKv", p.act_kv, p.S2, "S2");
  for (int64_t b = 0; b < p.B; ++b) {
    p.s1b.push_back(p.ifa() || p.act_q.empty() ? p.S1 : per_batch(p.act_q, b));
    p.s2b.push_back(p.act_kv.empty() ? p.S2 : per_batch(p.act_kv, b));
    p.q_start.push_back(0);
    p.kv_start.push_back(0);
  }
}

// Left padding: batch b's rows and keys end `pad` before the end (spec "Left padding").
void parse_left_padding(Args& c, FiaParams& p) {
  if (c.written("queryPaddingSize")) p.q_pad = std::max<int64_t>(0, c.integer("queryPaddingSize"));
  if (c.written("kvPaddingSize")) p.kv_pad = std::max<int64_t>(0, c.integer("kvPaddingSize"));
  if (!p.left_padded()) return;
  const char* key = p.q_pad >= 0 ? "queryPaddingSize" : "kvPaddingSize";
  if (p.tnd) c.fail(key, "left padding takes no TND layout");
  if (p.paged()) c.fail(key, "left padding takes no page attention (the document)");
  if (p.sparse >= 2)
    c.fail("sparseMode", "left padding with sparseMode 2-4 has no documented alignment origin; use 0 or 1");
  if (p.q_pad >= 0) {
    if (p.ifa()) c.fail("queryPaddingSize", "queryPaddingSize needs Q_S > 1");
    if (p.act_q.empty()) c.fail("queryPaddingSize", "queryPaddingSize needs actualSeqLengths (the document)");
  }
  if (p.kv_pad >= 0 && p.act_kv.empty())
    c.fail("kvPaddingSize", "kvPaddingSize needs actualSeqLengthsKv (the document)");
  for (int64_t b = 0; b < p.B; ++b) {
    if (p.q_pad >= 0) {
      p.q_start[b] = p.S1 - p.q_pad - p.s1b[b];
      if (p.q_start[b] < 0)
        c.fail("queryPaddingSize", "batch " + std::to_string(b) +
                                       " starts before row 0 (S1 - queryPaddingSize - actualSeqLengths < 0)");
    }
    if (p.kv_pad >= 0) {
      p.kv_start[b] = p.S2 - p.kv_pad - p.s2b[b];
      if (p.kv_start[b] < 0 && !p.ifa())
        c.fail("kvPaddingSize", "batch " + std::to_string(b) +
                                    " starts before key 0 (S2 - kvPaddingSize - actualSeqLengthsKv < 0)");
      if (p.kv_start[b] < 0)
        p.kv_start[b] = 0, p.s2b[b] = 0;  // Q_S = 1: the batch's output is 0 (documented)
    }
  }
}

// Shared prefix: every batch attends to prefix[:Lp] and then its own keys.
void parse_prefix(Args& c, FiaParams& p) {
  p.S_prefix = c.integer("S_prefix");
  if (!p.has_prefix()) {
    if (c.written("actualSharedPrefixLen"))
      c.fail("actualSharedPrefixLen", "actualSharedPrefixLen needs a shared prefix (S_prefix > 0)");
    return;
  }
  p.prefix_len = c.written("actualSharedPrefixLen") ? c.integer("actualSharedPrefixLen") : p.S_prefix;
  if (p.prefix_len > p.S_prefix)
    c.fail("actualSharedPrefixLen", "actualSharedPrefixLen must not exceed the prefix's S (S_prefix)");
  if (p.paged()) c.fail("S_prefix", "a shared prefix takes no page attention (the document)");
  if (p.left_padded()) c.fail("S_prefix", "a shared prefix takes no left padding (the document)");
  if (p.tnd) c.fail("S_prefix", "a shared prefix takes no TND layout");
}

// Tensorlist key/value (non-contiguous KV): per batch its own key.b / value.b of batch 1,
// and the document's exclusions ("非连续场景下key、value的tensorlist中的batch只能为1,个数等于
// query的B ... B不能大于256"; page attention, left padding, prefix, antiquant and MLA take no
// tensorlist).
void parse_tensorlist(Args& c, FiaParams& p) {
  p.tensorlist = c.boolean("kv_tensorlist");
  if (!p.tensorlist) return;
  const std::string why = " (the document)";
  if (p.B > 256)
    c.fail("B", "a tensorlist holds at most 256 batches (the document: \"非连续场景下B不能大于256\")");
  if (p.tnd) c.fail("inputLayout", "TND layouts take no tensorlist" + why);
  if (p.paged()) c.fail("blockSize", "page attention takes no tensorlist" + why);
  if (p.left_padded())
    c.fail(p.q_pad >= 0 ? "queryPaddingSize" : "kvPaddingSize", "left padding takes no tensorlist" + why);
  if (p.has_prefix()) c.fail("S_prefix", "a shared prefix takes no tensorlist" + why);
  if (p.quant.on) c.fail("key", "KV antiquant takes no tensorlist" + why);
  if (p.rope) c.fail("rope", "MLA takes no tensorlist" + why);
  for (int64_t b = 0; b < p.B; ++b)
    if (p.s2b[b] == 0)
      c.fail("actualSeqLengthsKv", "batch " + std::to_string(b) + " has no key: its tensorlist element key." +
                                       std::to_string(b) +
                                       " would be empty (kvbench writes no empty tensor)");
}

// The NZ cache: the document defines it for MLA with D 512 only ("key&value&keyRope支持ND和
// NZ输入"), with its own limits there.
void parse_nz(Args& c, const FiaParams& p) {
  if (!p.nz) return;
  if (p.rope == 0 || p.D != 512)
    c.fail("kv_cache_layout",
           "the NZ cache is MLA's: it needs rope 64 and D 512 (the document defines it there only)");
  if (p.Dv % 16 != 0) c.fail("Dv", "the NZ cache holds 16-channel fractals: Dv is a multiple of 16");
  if (p.block_size != 128)
    c.fail("blockSize", "the NZ cache takes blockSize 128 only (the document: \"NZ输入不支持配置16\")");
  if (p.layout == "BNSD" || p.layout == "BNSD_NBSD")
    c.fail("inputLayout",
           "the NZ cache takes no BNSD or BNSD_NBSD layout (the document: \"NZ输入不支持BNSD、BNSD_NBSD\")");
}

// MLA: the rope channels join the contraction; the document excludes the rest.
void parse_rope(Args& c, FiaParams& p) {
  p.rope = c.integer("rope");
  p.rope_antiquant_scale = c.boolean("with_keyRopeAntiquantScale");
  if (p.rope_antiquant_scale && !p.rope)
    c.fail("with_keyRopeAntiquantScale",
           "keyRopeAntiquantScale is MLA's (the dequantization of keyRope): it needs rope 64");
  if (!p.rope) return;
  const std::string why =
      " (the document: MLA takes no left padding, pse, prefix, antiquant, full quant or post-quant)";
  if (p.left_padded()) c.fail("rope", "MLA with left padding is rejected" + why);
  if (p.pse != "none") c.fail("rope", "MLA with pseShift is rejected" + why);
  if (p.has_prefix()) c.fail("rope", "MLA with a shared prefix is rejected" + why);
  if (p.quant.on) c.fail("rope", "MLA with KV antiquant is rejected" + why);
  if (p.post.on) c.fail("rope", "MLA with an int8 output is rejected" + why);
  if (p.full.on) c.fail("rope", "MLA with INT8 query, key and value (全量化) is rejected" + why);
}

void parse_mask_and_pse(Args& c, FiaParams& p) {
  p.mask = c.string("attenMask_shape");
  p.mask_pad = c.integer("attenMask_pad");
  p.pse = c.string("pseShift_shape");
  p.pse_pad = c.integer("pseShift_pad");
  p.masked_rows = c.integer("masked_rows");
  if (p.has_mask()) p.mask_dtype = c.dtype("attenMask", DType::boolean);
  const std::string mode = "sparseMode " + std::to_string(p.sparse);
  if (p.ifa()) {
    if (p.has_mask() && !one_of(p.mask, {"B,S2", "B,1,S2", "B,1,1,S2"}))
      c.fail("attenMask_shape", "with S1 = 1 the mask is (B, S2), (B, 1, S2) or (B, 1, 1, S2)");
  } else if (p.sparse >= 2) {
    if (!p.compressed_mask())
      c.fail("attenMask_shape", mode + " takes the compressed mask: 2048,2048, 1,2048,2048 or 1,1,2048,2048");
  } else {
    if (p.sparse == 1 && !p.has_mask()) c.fail("attenMask_shape", "sparseMode 1 (allMask) needs attenMask");
    if (p.has_mask() && !one_of(p.mask, {"S1,S2", "1,S1,S2", "B,1,S1,S2", "1,1,S1,S2"}))
      c.fail("attenMask_shape", mode + " takes a full mask: S1,S2, 1,S1,S2, B,1,S1,S2 or 1,1,S1,S2");
    if (p.tnd && p.has_mask())
      c.fail("attenMask_shape",
             "inputLayout " + p.layout +
                 " takes no mask in sparseMode 0/1 (the document: sparse 0 without mask, or 3/4 with mask)");
  }
  if (p.compressed_mask() && p.mask_pad)
    c.fail("attenMask_pad", "the compressed mask is exactly 2048 x 2048");
  if (!p.has_mask() && p.mask_pad) c.fail("attenMask_pad", "attenMask_pad needs attenMask");
  if (p.pse != "none" && p.tnd) c.fail("pseShift_shape", "inputLayout " + p.layout + " takes no pseShift");
  if (p.pse == "none" && p.pse_pad) c.fail("pseShift_pad", "pseShift_pad needs pseShift");
  if (p.masked_rows) {
    if (!p.mask_applies() || p.ifa())
      c.fail("masked_rows", "fully masked rows need a full attenMask (sparseMode 0 or 1, S1 > 1)");
    if (p.inner_precise < 2)
      c.fail("masked_rows",
             "a row whose every key is masked is undocumented without the row-invalid correction: set "
             "innerPrecise 2 or 3");
    if (p.masked_rows > *std::min_element(p.s1b.begin(), p.s1b.end()))
      c.fail("masked_rows", "masked_rows exceeds a batch's query length");
  }
}

// preTokens/nextTokens as the PFA tiling checks them (only where they apply).
void check_band(Args& c, const FiaParams& p) {
  const bool band = !p.ifa() && ((p.sparse == 0 && p.has_mask() && !p.left_padded()) || p.sparse == 4);
  if (!band) return;
  if (p.pre + p.next < 0) c.fail("nextTokens", "preTokens + nextTokens must be >= 0");
  if (p.pre < 0 && p.next < 0) c.fail("nextTokens", "preTokens and nextTokens must not both be negative");
  // TND sparse 4's bounds are inclusive in the document (preTokens >= -actualSeqLengths,
  // nextTokens >= -actualSeqLengthsKv): at the bound the band is empty, rows see no key.
  const bool inclusive = p.tnd && p.sparse == 4;
  const std::string bound = inclusive ? "at least -" : "above -";
  for (int64_t b = 0; b < p.B; ++b) {
    const int64_t rows = p.sparse == 0 ? p.s1b[b] : p.keys(b), cols = p.sparse == 0 ? p.keys(b) : p.s1b[b];
    if (rows == 0 || cols == 0) continue;
    if (p.next < 0 && -p.next >= rows + inclusive)
      c.fail("nextTokens", "a negative nextTokens must be " + bound + (p.sparse == 0 ? "S1b" : "S2b") +
                               " = " + std::to_string(-rows) + " (batch " + std::to_string(b) + ")");
    if (p.pre < 0 && -p.pre >= cols + inclusive)
      c.fail("preTokens", "a negative preTokens must be " + bound + (p.sparse == 0 ? "S2b" : "S1b") + " = " +
                              std::to_string(-cols) + " (batch " + std::to_string(b) + ")");
  }
}

// KV antiquant: the modes the document defines, and the combinations it allows.
void parse_antiquant(Args& c, FiaParams& p) {
  FiaAntiquant& a = p.quant;
  if (p.q == DType::i8) {  // full int8: K/V are int8 codes under deqScale1/deqScale2, not antiquant
    c.dtype("key", DType::i8, {DType::i8});
    c.require_same_dtype("value", DType::i8, "key");
    for (const char* k : {"keyAntiquantMode", "valueAntiquantMode", "antiquant_per_tensor",
                          "antiquant_offset", "antiquantMode", "antiquant_combined"})
      if (c.written(k))
        c.fail(k,
               std::string(k) + " is KV antiquant's (a float query); with an INT8 query K/V are full int8");
    if (!c.written("valueAntiquantMode")) c.resolve("valueAntiquantMode", 0);
    return;
  }
  const DType kv =
      c.dtype("key", p.q, {p.q, DType::i8, DType::s4, DType::f4e2m1, DType::f4e1m2, DType::f8e4m3fn});
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
    for (const char* k : {"keyAntiquantMode", "valueAntiquantMode", "antiquant_per_tensor",
                          "antiquant_offset", "antiquantMode", "antiquant_combined"})
      if (c.written(k))
        c.fail(k, std::string(k) +
                      " needs int8/int4/FP4/FP8 key and value (dtypes key, value: i8, s4, f4e2m1, f4e1m2, "
                      "f8e4m3fn)");
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

// Post-quant int8 output, and the combinations the document intercepts (spec).
void parse_post_quant(Args& c, FiaParams& p) {
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
void parse_full_quant(Args& c, FiaParams& p) {
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
  if (!one_of(p.layout, {"BSH", "BSND", "BNSD", "BNSD_BSND"}))
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

}  // namespace

FiaParams parse_fia_params(Args& c) {
  FiaParams p;
  p.N = c.integer("numHeads");
  const int64_t nkv = c.integer("numKeyValueHeads");
  p.Nkv = nkv ? nkv : p.N;
  if (p.N % p.Nkv != 0) c.fail("numKeyValueHeads", "numKeyValueHeads must divide numHeads");
  if (p.N / p.Nkv > 64) c.fail("numKeyValueHeads", "numHeads / numKeyValueHeads must be at most 64");
  p.layout = c.string("inputLayout");
  for (const auto& l : kLayouts)
    if (p.layout == l.name) {
      p.in = l.in;
      p.out = l.out;
      p.bsh = l.bsh;
      p.tnd = l.tnd;
    }
  p.sparse = static_cast<int>(c.integer("sparseMode"));
  if (p.sparse > 4)
    c.fail("sparseMode",
           "sparseMode 5-8 (prefix, global, dilated, block_local) are unsupported by the operator");
  p.inner_precise = static_cast<int>(c.integer("innerPrecise"));
  p.pre = c.integer("preTokens");
  p.next = c.integer("nextTokens");
  p.q = c.dtype("query", DType::f16);
  p.D = c.integer("D");
  if (!c.written("Dv")) c.resolve("Dv", p.D);
  p.Dv = c.integer("Dv");
  p.lse = c.boolean("softmaxLseFlag");
  p.block_size = c.integer("blockSize");
  p.bnnbsd = c.string("kv_cache_layout") == "BnNBsD";
  p.nz = c.string("kv_cache_layout") == "NZ";
  if (!p.paged() && c.written("kv_cache_layout"))
    c.fail("kv_cache_layout", "kv_cache_layout needs page attention (blockSize > 0)");
  parse_lengths(c, p);
  if (p.paged()) {
    if (p.act_kv.empty()) c.fail("blockSize", "page attention needs actualSeqLengthsKv");
    if (p.bnnbsd && p.in != FiaOrder::BNSD && p.in != FiaOrder::TND)
      c.fail("kv_cache_layout", "the BnNBsD cache takes BNSD or TND queries (the document)");
    p.max_blocks = std::max<int64_t>(1, (p.S2 + p.block_size - 1) / p.block_size);
    p.num_blocks = 1;  // the spare, NaN-poisoned block
    for (int64_t s : p.s2b) p.num_blocks += (s + p.block_size - 1) / p.block_size;
    c.require_memory("blockSize", {p.B, p.max_blocks}, 4, "the block table");
  }
  // Empty key and value tensors: the device fills attentionOut with zeros (the document) and
  // writes no softmaxLse (PFA's empty-tensor kernel writes attentionOut only): kvbench could
  // not say what a correct device's lse holds (spec Decisions).
  if (p.lse && p.S2 == 0 && !p.paged())
    c.fail("softmaxLseFlag",
           "with empty key and value (S2 = 0) the device writes attentionOut zeros and no softmaxLse: set "
           "softmaxLseFlag false");
  parse_left_padding(c, p);
  parse_prefix(c, p);
  parse_mask_and_pse(c, p);
  parse_antiquant(c, p);
  parse_post_quant(c, p);
  parse_full_quant(c, p);
  parse_rope(c, p);
  parse_nz(c, p);
  parse_tensorlist(c, p);
  if (p.left_padded() && p.quant.codes == DType::s4)
    c.fail("kvPaddingSize", "left padding takes no int4 KV (the document)");
  check_band(c, p);
  p.scale = round_f32(c.number("scaleValue"));
  if (!std::isfinite(p.scale)) c.fail("scaleValue", "scaleValue must be finite in f32");
  for (int64_t b = 0; b < p.B; ++b)
    // Sparse 0 with left padding ignores preTokens/nextTokens (the document).
    p.band.push_back(
        fia_band(p.sparse, p.pre, p.next, p.has_mask() && !p.left_padded(), p.ifa(), p.s1b[b], p.keys(b)));
  if (c.boolean("ascend_limits")) check_ascend_limits(c, p);
  return p;
}

}  // namespace kvbench
